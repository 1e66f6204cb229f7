"""Long inputs: the per-model input limit, the trained-length note, and the analysis cache's byte bound."""

from __future__ import annotations

import random

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_support import gateway as G
from app_support import models as M
from app_support.byte_cache import ByteLRU, nbytes
from model.network.kinds import hook_name
from model.run.analysis import analyze, attention_only
from model.store.registry import DEFAULT_MODEL, load_model
from tests.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")
WORDS = "the bank raised interest rates while we sat on the river bank and watched boats".split()


def english(n_words: int) -> str:
    return " ".join(WORDS[(i * 5) % len(WORDS)] for i in range(n_words))


# ------------------------------------------------------------------------------- the byte bound
class Blob:
    """A value of a stated size (ByteLRU's sizeof reads it)."""

    def __init__(self, size: int):
        self.size = size


def blob_lru(max_bytes: int, max_entries: int = 1000) -> ByteLRU:
    return ByteLRU(max_bytes, max_entries, sizeof=lambda v: v.size)


def test_the_oldest_entries_go_first_when_over_the_byte_bound():
    lru = blob_lru(100)
    for key in "abc":
        lru.put(key, Blob(30))
    assert lru.keys() == ["a", "b", "c"] and lru.nbytes == 90
    lru.get("a")  # a is now the most recently used
    lru.put("d", Blob(30))  # 120 > 100: the oldest (b) goes
    assert lru.keys() == ["c", "a", "d"] and lru.nbytes == 90
    lru.put("e", Blob(75))  # 165: c, a and d go (75 alone fits)
    assert lru.keys() == ["e"] and lru.nbytes == 75


def test_an_entry_over_the_bound_is_kept_alone():
    lru = blob_lru(100)
    lru.put("small", Blob(10))
    lru.put("huge", Blob(500))
    assert lru.keys() == ["huge"] and lru.nbytes == 500
    lru.put("next", Blob(10))
    assert lru.keys() == ["next"]


def test_never_more_than_the_bound_plus_one_entry():
    rng = random.Random(0)
    bound = 1000
    lru = blob_lru(bound, max_entries=20)
    sizes: dict[int, int] = {}
    for step in range(2000):
        key = rng.randrange(60)
        if rng.random() < 0.3:
            lru.get(key)
            continue
        size = rng.choice([1, 50, 200, 400, 1500])
        sizes.setdefault(key, size)
        lru.put(key, Blob(sizes[key]))
        held = [sizes[k] for k in lru.keys()]
        assert lru.nbytes == sum(held)
        assert len(held) <= 20
        # over the bound only by the newest entry, and then only if it is alone
        assert lru.nbytes <= bound or len(held) == 1, (step, held)
        assert sum(held) - max(held) <= bound


def test_the_entry_bound_also_holds():
    lru = blob_lru(10**9, max_entries=3)
    for key in range(5):
        lru.put(key, Blob(1))
    assert lru.keys() == [2, 3, 4]


def test_hits_return_the_same_object_and_errors_are_not_cached():
    lru = blob_lru(100)
    calls = []

    def make():
        calls.append(1)
        return Blob(5)

    first = lru.get_or_compute("k", make)
    assert lru.get_or_compute("k", make) is first and len(calls) == 1
    assert (lru.hits, lru.misses) == (1, 1)

    def fail():
        raise ValueError("no")

    with pytest.raises(ValueError):
        lru.get_or_compute("bad", fail)
    assert "bad" not in lru and lru.keys() == ["k"]
    assert lru.discard(lambda k: k == "k") == 1 and len(lru) == 0 and lru.nbytes == 0


def test_bad_bounds_are_refused():
    with pytest.raises(ValueError):
        ByteLRU(-1)
    with pytest.raises(ValueError):
        ByteLRU(10, max_entries=0)


def test_nbytes_counts_arrays_once():
    a = np.zeros((10, 10), np.float32)
    assert nbytes(a) == 400
    assert nbytes({"x": a, "y": a}) == 400 + 2  # the same array twice counts once; keys count
    assert nbytes([a, np.zeros(5, np.float64)]) == 440
    assert nbytes([a[0], a[1:3], a]) == 400  # views count the array they view, once
    assert nbytes(["ab", "cde", b"xy", 5, 2.5, None]) == 2 + 3 + 2 + 8 + 8 + 8  # length; 8 a number


# ------------------------------------------------------------------ the app's analysis cache
@pytest.fixture
def small_cache(monkeypatch):
    """The gateway's store, emptied and bounded to 2 analyses of the default model's example."""
    bundle = load_model(DEFAULT_MODEL)
    one = nbytes(analyze(bundle, "我们走吧", keep=attention_only))
    cache = ByteLRU(int(2.5 * one), max_entries=64)
    monkeypatch.setattr(G, "RESULTS", cache)
    return cache, one


def test_the_app_cache_holds_attention_only_read_only_and_shared(small_cache):
    cache, _ = small_cache
    first = G.get_analysis(DEFAULT_MODEL, "我们走吧")
    again = G.get_analysis(DEFAULT_MODEL, "我们走吧")
    assert again is first and len(cache) == 1
    # what each layer's softmax saw (queries, keys), not every head's L x L pattern and scores
    assert first.attention_inputs and not first.activations
    inputs = next(iter(first.attention_inputs.values()))
    with pytest.raises(ValueError):
        inputs.q[...] = 0  # a page can never write into what other sessions read
    assert cache.nbytes == nbytes(cache.get(cache.keys()[0]))


def test_the_app_cache_evicts_by_bytes(small_cache):
    cache, one = small_cache
    texts = ["我们走吧", "他们走吧", "你们走吧", "她们走吧", "我们走吧。"]
    for text in texts:
        G.get_analysis(DEFAULT_MODEL, text)
        assert cache.nbytes <= cache.max_bytes or len(cache) == 1
    kept = [dict(k[3])["text"] for k in cache.keys()]
    assert 1 <= len(kept) < len(texts) and kept == texts[-len(kept):]  # the newest, in order


def test_a_reloaded_model_never_gets_a_stale_analysis(small_cache, monkeypatch):
    first = G.get_analysis(DEFAULT_MODEL, "我们走吧")
    other = load_model(DEFAULT_MODEL)  # a new copy of the model (the model cache loaded it again)
    monkeypatch.setattr(G, "_load", lambda name, weights: other)
    assert G.get_bundle(DEFAULT_MODEL) is other  # the app serves the new copy from now on
    again = G.get_analysis(DEFAULT_MODEL, "我们走吧")
    assert again is not first
    assert np.array_equal(again.attention("encoder"), first.attention("encoder"))
    assert G.get_analysis(DEFAULT_MODEL, "我们走吧") is again
    assert G.forget(DEFAULT_MODEL) == 1 and len(small_cache[0]) == 0


def test_a_stored_result_is_served_without_loading_its_model(small_cache, monkeypatch):
    first = G.get_analysis(DEFAULT_MODEL, "我们走吧")

    def no_loading(name, weights):
        raise AssertionError(f"{name} was loaded for a result the store holds")

    monkeypatch.setattr(G, "_load", no_loading)
    assert G.get_analysis(DEFAULT_MODEL, "我们走吧") is first
    with pytest.raises(AssertionError, match="was loaded"):  # a new input does need the model
        G.get_analysis(DEFAULT_MODEL, "他们走吧")


# ----------------------------------------------------------------------------- input limits
def test_the_character_limit_follows_the_models_token_limit():
    for name in ("minilm", DEFAULT_MODEL):
        max_len = load_model(name).cfg.max_len
        assert M.input_char_limit(name) == min(M.MAX_INPUT_CHARS,
                                               max(M.MIN_INPUT_CHARS, M.CHARS_PER_TOKEN * max_len))
    minilm = load_model("minilm")
    assert minilm.cfg.max_len == 512
    # Text long enough for 512 word pieces fits the box with room to spare.
    text = english(600)
    assert len(minilm.task.prepare(text, 512).source_ids) == 512
    assert len(text) < M.input_char_limit("minilm")
    assert M.input_char_limit("no-such-model") == M.MIN_INPUT_CHARS


def notes_of(text: str) -> list[str]:
    bundle = load_model("minilm")
    return [m.code for m in bundle.task.prepare(text, bundle.cfg.max_len).notes]


def test_minilm_says_when_the_input_is_longer_than_it_was_trained_on():
    bundle = load_model("minilm")
    assert bundle.task.trained_len == 256
    short, long = english(200), english(400)
    n_short = len(bundle.task.prepare(short, 512).source_ids)
    n_long = len(bundle.task.prepare(long, 512).source_ids)
    assert n_short <= 256 < n_long
    assert "beyond_trained_length" not in notes_of(short)
    assert "beyond_trained_length" in notes_of(long)
    note = next(m for m in bundle.task.prepare(long, 512).notes if m.code == "beyond_trained_length")
    assert note.kwargs == {"tokens": n_long, "max_len": 512, "trained": 256}


def _open(text: str, model: str = "minilm", lang: str = "en") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params.update({"model": model, "text": text, "lang": lang})
    return at.run()


@pytest.mark.slow
def test_a_512_token_link_opens_whole_on_minilm_and_says_what_was_cut():
    text = english(700)  # ~760 word pieces, ~3,900 characters: more than the model reads
    at = _open(text)
    assert not at.exception, [e.message for e in at.exception]
    assert at.text_input(key="text").value == text  # under the character limit: nothing cut
    assert at.query_params["text"] == text
    infos = " ".join(i.value for i in at.info)
    warnings = " ".join(w.value for w in at.warning)
    assert "512 tokens" in warnings.replace("\\", "")  # the model truncated to 512 tokens, and said so
    assert "256" in infos  # it was trained on 256 at most, and the page says so


def test_a_long_input_shows_its_start_and_end_above_the_charts_and_the_whole_in_an_expander():
    """At 1,024 tokens the whole input was two laptop screens above the chart: a long one shows its
    start and its end (escaped, as every input), the whole text one click away."""
    from app_support.messages import SHOWN_INPUT_CHARS, shortened_input
    from app_support.ui import escape_md

    text = english(200) + " <b>end</b>"
    at = _open(text)
    assert not at.exception, [e.message for e in at.exception]
    shown = shortened_input(text)
    assert len(shown) <= SHOWN_INPUT_CHARS + 3 and shown.endswith("<b>end</b>") and " … " in shown
    assert text.startswith(shown.split(" … ")[0])
    whole = [e for e in at.expander if f"{len(text):,}" in e.label]
    assert len(whole) == 1
    folded = {id(m) for m in whole[0].markdown}
    assert [m.value for m in whole[0].markdown] == [escape_md(text)]  # the whole text, escaped
    above = [m.value for m in at.markdown if id(m) not in folded]
    assert escape_md(shown) in above and not any(escape_md(text) in m for m in above)
    short = "A short sentence."
    assert shortened_input(short) == short


@pytest.mark.slow
def test_a_link_over_the_models_character_limit_is_cut_and_says_so():
    limit = M.input_char_limit("minilm")
    text = "abc " * (limit // 2)  # twice the limit
    at = _open(text)
    assert at.text_input(key="text").value == text[:limit]
    assert at.query_params["text"] == text[:limit]
    cut = [w.value for w in at.warning if f"{len(text):,}" in w.value and f"{limit:,}" in w.value]
    assert cut, [w.value for w in at.warning]


# ------------------------------------------------- head statistics at long inputs: same numbers
def _entropy_float64(p: np.ndarray, axis: int = -1) -> np.ndarray:
    """The previous viz.entropy: every term in float64."""
    p = np.asarray(p, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    terms = np.where(np.isnan(p), np.nan, terms)
    return terms.sum(axis=axis)


def _patterns(rng, shape, masked_keys=0):
    logits = rng.normal(size=shape) * 3
    if masked_keys:
        logits[..., -masked_keys:] = -np.inf
    p = np.exp(logits - logits.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)).astype(np.float32)


def test_the_faster_entropy_equals_the_float64_one():
    import viz

    rng = np.random.default_rng(1)
    p = _patterns(rng, (3, 4, 9, 9), masked_keys=2)
    p[0, 0, 0] = np.nan
    p[1, 1, 1, 0] = -0.0
    for arr in (p, p.astype(np.float64), [[0.5, 0.5, 0.0]], [[1, 0]]):
        new, old = viz.entropy(arr), _entropy_float64(arr)
        assert np.array_equal(np.isnan(new), np.isnan(old))
        np.testing.assert_allclose(new, old, rtol=1e-6, atol=1e-6)


def test_head_stats_in_float32_equal_the_float64_computation():
    """Each column against a direct float64 computation of its definition."""
    import viz

    rng = np.random.default_rng(2)
    n_layers, n_heads, n = 2, 3, 40
    p = _patterns(rng, (n_layers, n_heads, n, n), masked_keys=5)
    key_mask = np.zeros((n, n), bool)
    key_mask[:, -5:] = True
    special = np.zeros(n, bool)
    special[[0, n - 6]] = True
    sinks = special.copy()
    sinks[7] = True
    df = viz.head_stats(p, key_mask=key_mask, special_tokens=special, sink_tokens=sinks)
    w = p.astype(np.float64)
    q = np.arange(n)
    expected = {
        "entropy": _entropy_float64(w).mean(-1),
        "entropy_norm": (_entropy_float64(w) / np.log(n - 5)).mean(-1),
        "max_weight": w.max(-1).mean(-1),
        "mean_distance": (w * np.abs(q[:, None] - q[None, :])).sum(-1).mean(-1),
        "first_token": w[..., 0].mean(-1),
        "special_tokens": w[..., special].sum(-1).mean(-1),
        "sinks": w[..., sinks].sum(-1).mean(-1),
        "diagonal": w[..., q, q].mean(-1),
        "previous_token": w[..., q[1:], q[1:] - 1].mean(-1),
    }
    for col, values in expected.items():
        np.testing.assert_allclose(df[col].to_numpy(), values.reshape(-1), rtol=1e-5, atol=1e-6, err_msg=col)
    assert (df["n_rows"] == n).all()


def test_head_divergence_on_the_sampled_rows_equals_the_full_float64_one_on_those_rows():
    import viz

    rng = np.random.default_rng(3)
    p = _patterns(rng, (2, 3, 300, 300))
    rows = viz.divergence_rows(300)
    assert len(rows) < 300
    fast = viz.head_divergence(p)
    w = p.reshape(6, 300, 300)[:, rows].astype(np.float64)
    for i in range(6):
        for j in range(6):
            m = 0.5 * (w[i] + w[j])
            js = _entropy_float64(m) - 0.5 * (_entropy_float64(w[i]) + _entropy_float64(w[j]))
            assert abs(fast[i, j] - js.mean()) < 1e-6


def test_shared_stacks_equal_the_layers_and_cost_no_copy():
    bundle = load_model(DEFAULT_MODEL)
    # an analysis that keeps its hook tensors (the CLI's inspect, the export archive)
    fresh = analyze(bundle, "我们走吧")
    shared = analyze(bundle, "我们走吧").share_stacked()
    for kind in ("encoder", "decoder", "cross"):
        for what in ("pattern", "scores"):
            stack = shared.attention(kind, what)
            assert np.array_equal(stack, fresh.attention(kind, what))
            assert shared.attention(kind, what) is stack and not stack.flags.writeable
            for i in range(shared.n_layers(kind)):  # the layers are views of the stack
                layer = shared.activations[hook_name(kind, i, what)]
                assert np.shares_memory(layer, stack)
    assert nbytes(shared) <= nbytes(fresh) + 1000


def _rollout_float64(p: np.ndarray) -> np.ndarray:
    """The previous viz.attention_rollout: the whole [layer, head, q, k] in float64 first."""
    p = np.nan_to_num(np.asarray(p, dtype=np.float64), nan=0.0)
    eye = np.eye(p.shape[-1])
    rollout = eye.copy()
    for layer in p.mean(axis=1):
        a = layer + eye
        rollout = (a / a.sum(-1, keepdims=True)) @ rollout
    return rollout


def test_rollout_from_float32_equals_the_float64_one():
    import viz

    rng = np.random.default_rng(4)
    p = _patterns(rng, (3, 4, 30, 30), masked_keys=3)
    p[1, 2, 5] = np.nan
    np.testing.assert_allclose(viz.attention_rollout(p), _rollout_float64(p), rtol=1e-12, atol=1e-14)


def test_derived_values_are_computed_once_per_analysis():
    result = analyze(load_model(DEFAULT_MODEL), "我们走吧", keep=attention_only)
    other = analyze(load_model(DEFAULT_MODEL), "我们走吧", keep=attention_only)
    calls = []

    def compute():
        calls.append(1)
        return len(calls)

    assert G.derived(result, "k", compute) == 1
    assert G.derived(result, "k", compute) == 1  # remembered
    assert G.derived(result, "other key", compute) == 2
    assert G.derived(other, "k", compute) == 3  # per analysis
    assert len(calls) == 3


@pytest.mark.slow
def test_the_statistics_page_shows_what_viz_computes_on_every_run():
    import viz

    text = english(12)
    at = _open(text)
    at.switch_page("app_pages/stats.py").run()
    assert not at.exception, [e.message for e in at.exception]
    result = G.get_analysis("minilm", text)
    patterns, scores = result.attention("encoder"), result.attention("encoder", "scores")
    keys = result.tokens_for("encoder")[1]
    special = result.kind_attention("encoder").key_special
    expected = viz.head_stats(patterns, key_mask=~np.isfinite(scores), special_tokens=special,
                              sink_tokens=viz.sink_keys(keys, special))
    for _ in range(2):  # first run computes, the rerun reads what was remembered
        shown = at.dataframe[0].value
        for col in ("entropy", "max_weight", "sinks", "mean_distance"):
            np.testing.assert_allclose(shown[col].to_numpy(), expected[col].to_numpy(), rtol=1e-6)
        at.run()
        assert not at.exception
