"""The shipped didactic models (assets/models/{reverse,copy,sort}): they load fast, solve their puzzle,
their metrics.json is true, and their cross-attention shows the textbook pattern."""

from __future__ import annotations

import time

import numpy as np
import pytest
from safetensors import safe_open

from model.data.tasks import SyntheticTask
from model.run.analysis import Analysis, analyze
from model.store.registry import available_models, load_model
from model.training.evaluate import evaluate_model

DIDACTIC = ["reverse", "copy", "sort"]
# Everyday words of 3..12 letters (the training range); none is a palindrome.
WORDS = ["attention", "transformer", "keyboard", "quickly", "zebra", "python", "lens", "hello", "abc"]


@pytest.fixture(scope="module")
def bundles():
    return {name: load_model(name) for name in DIDACTIC}


def test_all_didactic_models_are_shipped():
    assert set(DIDACTIC) <= set(available_models())


@pytest.mark.parametrize("name", DIDACTIC)
def test_loads_quickly(name):
    load_model(name)  # warm the file cache and imports: measure the load itself
    start = time.perf_counter()
    bundle = load_model(name)
    elapsed = time.perf_counter() - start
    print(f"{name}: load_model {elapsed * 1000:.0f} ms")
    assert elapsed < 5.0  # target < 1 s; loose because the test machine is shared
    assert isinstance(bundle.task, SyntheticTask) and bundle.task.kind == name
    assert not bundle.model.training


@pytest.mark.parametrize("name", DIDACTIC)
def test_solves_its_puzzle(bundles, name):
    bundle = bundles[name]
    results = evaluate_model(bundle.model, bundle.task, "test", n=100)
    assert list(results) == ["task"]
    r = results["task"]
    print(f"{name}: {r}")
    assert r["n"] == 100
    assert r["exact_match"] >= 0.98
    assert r["chrf"] >= 98


@pytest.mark.parametrize("name", DIDACTIC)
def test_fixed_words_come_out_right(bundles, name):
    bundle = bundles[name]
    for word in WORDS:
        assert analyze(bundle, word).output_text == bundle.task.target_text(word), word


@pytest.mark.parametrize("name", DIDACTIC)
def test_shipped_metrics_match_a_fresh_evaluation(bundles, name):
    bundle = bundles[name]
    shipped = bundle.metrics
    assert shipped["split"] == "test"
    assert shipped["step"] == bundle.info["step"]
    with safe_open(str(bundle.directory / "model.safetensors"), framework="pt") as f:
        dtypes = {str(f.get_slice(k).get_dtype()) for k in f.keys()}
    assert dtypes == {{"float32": "F32", "float16": "F16"}[shipped["weights_dtype"]]}
    claimed = shipped["results"]["task"]
    fresh = evaluate_model(bundle.model, bundle.task, "test", n=claimed["n"])["task"]
    print(f"{name}: shipped {claimed} fresh {fresh}")
    assert fresh["n"] == claimed["n"]
    assert abs(fresh["exact_match"] - claimed["exact_match"]) <= 0.02
    assert abs(fresh["chrf"] - claimed["chrf"]) <= 1.0


# ---------------------------------------------------------------- attention patterns


def _cross(result: Analysis, word: str) -> tuple[np.ndarray, int]:
    """Cross-attention argmax over source positions, [layer, head, output letter], and the word length.

    analyze() keys cross-attention by source_tokens = letters + <eos> (L_src = n + 1) and queries it by
    target_tokens = <bos> + output letters (no eos: the decoder reads prefix + output). Row t has seen
    <bos> and letters 0..t-1 and predicts output letter t, so rows 0..n-1 are the n letter predictions;
    row n predicts <eos> and is left out.
    """
    n = len(word)
    assert result.source_tokens == list(word) + ["<eos>"]
    assert result.target_tokens[0] == "<bos>" and len(result.target_tokens) == n + 1
    pattern = result.attention("cross")  # [layer, head, L_tgt, L_src]
    assert pattern.shape[2:] == (n + 1, n + 1)
    np.testing.assert_allclose(pattern.sum(-1), 1.0, atol=1e-5)
    return pattern.argmax(-1)[:, :, :n], n


def _best_head(hits: np.ndarray) -> tuple[float, tuple[int, int]]:
    """hits [layer, head, t] booleans -> (best fraction of letters, (layer, head))."""
    frac = hits.mean(-1)
    layer, head = np.unravel_index(frac.argmax(), frac.shape)
    return float(frac[layer, head]), (int(layer), int(head))


def _mirror(n: int) -> np.ndarray:
    return np.array([(n + 1) - 2 - t for t in range(n)])  # L_src - 2 - t: skips the final <eos>


def _diagonal(n: int) -> np.ndarray:
    return np.arange(n)


@pytest.mark.parametrize(("name", "expected"), [("reverse", _mirror), ("copy", _diagonal)])
def test_cross_attention_is_crisp(bundles, name, expected):
    """reverse: some head reads source letter L_src-2-t for output letter t (anti-diagonal);
    copy: letter t."""
    for word in WORDS:
        argmax, n = _cross(analyze(bundles[name], word), word)
        frac, where = _best_head(argmax == expected(n))
        print(f"{name} {word}: layer {where[0]} head {where[1]} on target for {frac:.0%} of letters")
        assert frac >= 0.9, (word, frac, where)


@pytest.mark.parametrize(("name", "wrong"), [("reverse", _diagonal), ("copy", _mirror)])
def test_cross_attention_check_tells_the_patterns_apart(bundles, name, wrong):
    """Control: the check above fails when given the other model's pattern, so it can fail at all."""
    for word in WORDS:
        if len(word) < 5:
            continue
        argmax, n = _cross(analyze(bundles[name], word), word)
        frac, _ = _best_head(argmax == wrong(n))
        assert frac <= 0.5, (word, frac)


def test_sort_cross_attention_looks_up_each_output_letter(bundles):
    """sort: for each output letter, some head's strongest source position holds that same letter."""
    for word in WORDS:
        result = analyze(bundles["sort"], word)
        argmax, n = _cross(result, word)
        output = result.target_tokens[1:]
        source = np.array(result.source_tokens)
        hits = source[argmax] == np.array(output)  # [layer, head, t]
        frac, where = _best_head(hits)
        print(f"sort {word}: layer {where[0]} head {where[1]} finds the letter for {frac:.0%}")
        assert frac >= 0.9, (word, frac, where)
