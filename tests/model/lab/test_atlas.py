"""The head atlas (model/lab/atlas.py): ground truth, the vectorised Jensen–Shannon matrix and clustering,
every figure against a direct computation from each sentence's own analysis, the measured roles of the
reverse model, the disk cache keyed on the weights, and the command line."""

from __future__ import annotations

import functools
import itertools
import math
import random
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import viz
from model.__main__ import main
from model.data.tasks import SyntheticTask
from model.lab.atlas import (
    ROLE_STAT,
    ROLES,
    STATS,
    AtlasError,
    Dataset,
    atlas_path,
    cluster_order,
    compute_atlas,
    ground_truth_alignment,
    held_out_dataset,
    js_pair_sums,
    load_atlas,
    load_or_compute,
    weights_key,
)
from model.lab.choices import ATLAS_NEW_TOKENS
from model.network.kinds import get_kind
from model.run.analysis import analyze
from model.store.registry import load_model
from tests.figures import title_of
from tests.paths import REPO_ROOT


@pytest.fixture(autouse=True)
def _atlas_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LENS_ATLAS_DIR", str(tmp_path / "atlas"))


@functools.cache
def bundle(name: str):
    return load_model(name)


@functools.cache
def full_atlas(name: str):
    return compute_atlas(bundle(name))


def small_dataset(name: str, n: int) -> Dataset:
    """``n`` sentences of the test split (evenly spaced), as the atlas would pick them."""
    return held_out_dataset(bundle(name), n)


# --------------------------------------------------------------------------- ground truth


@pytest.mark.parametrize("task", ["reverse", "copy", "sort"])
def test_ground_truth_points_at_the_source_letter_each_output_letter_is(task):
    rng = random.Random(task)
    for _ in range(50):
        word = "".join(rng.choice("abcde") for _ in range(rng.randint(1, 12)))  # repeats on purpose
        truth = ground_truth_alignment(task, word)
        target = SyntheticTask.KINDS[task](word)
        assert truth.shape == (len(word), len(word) + 1)
        assert not truth[:, -1].any(), "<eos> is never the source of a letter"
        for i, letter in enumerate(target):
            assert truth[i].any()
            assert all(word[j] == letter for j in np.flatnonzero(truth[i]))
        if task == "sort":  # every place of the letter counts
            for i, letter in enumerate(target):
                assert truth[i, : len(word)].sum() == word.count(letter)
        else:  # one position per row, a permutation
            assert (truth.sum(1) == 1).all() and (truth[:, :-1].sum(0) == 1).all()
    n = 5
    eye = np.eye(n, dtype=bool)
    np.testing.assert_array_equal(ground_truth_alignment("reverse", "abcde")[:, :n], eye[::-1])
    np.testing.assert_array_equal(ground_truth_alignment("copy", "abcde")[:, :n], np.eye(n, dtype=bool))
    with pytest.raises(AtlasError):
        ground_truth_alignment("translation", "abc")


# --------------------------------------------------------------------------- JS and clustering


def test_js_pair_sums_equal_the_pairwise_divergence_summed_over_rows():
    rng = np.random.default_rng(0)
    rows = rng.random((7, 30, 9)) ** 3
    rows[:, :, 6:] = 0.0  # keys nobody sees (padding): weight 0
    rows[2, :5] = 0.0
    rows[2, :5, 0] = 1.0  # one-hot rows
    rows /= rows.sum(-1, keepdims=True)
    got = js_pair_sums(rows)
    want = np.zeros((7, 7))
    for i, j in itertools.product(range(7), range(7)):
        want[i, j] = viz.js_divergence(rows[i], rows[j], axis=-1).sum()
    np.testing.assert_allclose(got, want, atol=1e-10)
    np.testing.assert_array_equal(got, got.T)
    assert (np.diag(got) == 0).all()
    assert got.max() <= 30 * math.log(2) + 1e-12


def test_js_pair_sums_blocks_do_not_change_the_result(monkeypatch):
    rng = np.random.default_rng(1)
    rows = rng.dirichlet(np.ones(6), size=(5, 40))
    whole = js_pair_sums(rows)
    monkeypatch.setattr("model.lab.atlas_stats._JS_BLOCK", 1)  # one pair per block
    np.testing.assert_allclose(js_pair_sums(rows), whole, atol=1e-12)


def test_cluster_order_keeps_clusters_together():
    rng = np.random.default_rng(2)
    points = np.concatenate([rng.normal(0, 0.1, (5, 2)), rng.normal(5, 0.1, (4, 2)),
                             rng.normal(-5, 0.1, (3, 2))])
    perm = rng.permutation(len(points))
    points = points[perm]
    group = np.array([0] * 5 + [1] * 4 + [2] * 3)[perm]
    dist = np.linalg.norm(points[:, None] - points[None], axis=-1)
    order = cluster_order(dist)
    assert sorted(order) == list(range(len(points)))
    runs = [g for g, _ in itertools.groupby(group[order])]
    assert len(runs) == 3, f"each cluster is one contiguous block, got {group[order]}"
    assert cluster_order(np.zeros((0, 0))) == []
    assert cluster_order(np.array([[0.0, np.nan], [np.nan, 0.0]])) in ([0, 1], [1, 0])
    with pytest.raises(ValueError):
        cluster_order(np.zeros((2, 3)))


# --------------------------------------------------------------------------- datasets


def test_translation_sample_is_evenly_spread_and_uses_both_directions():
    data = small_dataset("default", 200)
    refs = bundle("default").task.references("test")
    assert len(data.texts) == 200 and data.total == len(refs)
    assert data.directions.count("zh->en") == data.directions.count("en->zh") == 100
    positions = [refs.index((t, r, d)) for t, r, d in zip(data.texts, data.references, data.directions,
                                                            strict=True)]
    pairs = sorted({p // 2 for p in positions})
    assert len(pairs) == 100 and pairs[0] == 0 and pairs[-1] == len(refs) // 2 - 1
    gaps = np.diff(pairs)
    assert gaps.max() - gaps.min() <= 1, "evenly spaced"
    with pytest.raises(AtlasError):
        held_out_dataset(bundle("default"), 0)


def test_didactic_dataset_is_the_whole_test_split():
    data = held_out_dataset(bundle("reverse"))
    refs = bundle("reverse").task.references("test")
    assert [(t, r) for t, r in zip(data.texts, data.references, strict=True)] == [(s, r) for s, r, _ in refs]
    assert len(held_out_dataset(bundle("reverse"), 7).texts) == 7


def test_a_model_without_test_split_gets_a_clear_error():
    fake = SimpleNamespace(name="encoder-only", task=SimpleNamespace(references=lambda split: []),
                           model=SimpleNamespace(cfg=SimpleNamespace(decoder_only=False)))
    with pytest.raises(AtlasError, match="no test split"):
        held_out_dataset(fake)


# --------------------------------------------------------------------------- figures vs direct computation


def _direct(name: str, data: Dataset, kind: str):
    """Every figure of the atlas recomputed sentence by sentence from analyze() (pooled over rows)."""
    b = bundle(name)
    k = get_kind(kind)
    pooled: dict[str, list] = {s: [] for s in STATS}
    per_sentence, rows_all, outputs = [], [], []
    for text, direction in zip(data.texts, data.directions, strict=True):
        res = analyze(b, text, direction, max_new=ATLAS_NEW_TOKENS if b.model.cfg.decoder_only else None)
        outputs.append(res.output_text)
        w = res.attention(kind).astype(np.float64)  # [L, H, q, k]
        key_mask = ~np.isfinite(res.attention(kind, "scores"))
        special = np.array(res.kind_attention(kind).key_special)
        keys = res.tokens_for(kind)[1]
        punct = np.array([viz_punct(t) for t in keys])
        nq, nk = w.shape[-2:]
        seen = (~key_mask).sum(-1)  # [L, H, q]
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = -(np.where(w > 0, w * np.log(np.where(w > 0, w, 1)), 0)).sum(-1)
        pooled["entropy"].append(ent)
        pooled["entropy_norm"].append(np.where(seen > 1, ent / np.log(np.maximum(seen, 2)), np.nan))
        pooled["max_weight"].append(w.max(-1))
        per_sentence.append(w.max(-1).mean(-1))
        pooled["special_share"].append((w * special).sum(-1))
        pooled["punct_share"].append((w * punct).sum(-1))
        pooled["sink_share"].append((w * (special | punct)).sum(-1))
        pooled["first_share"].append(w[..., 0])
        q = np.arange(nq)
        if k.queries == k.keys:
            pooled["mean_distance"].append((w * np.abs(q[:, None] - np.arange(nk)[None])).sum(-1))
            for stat, off in (("diagonal", 0), ("previous", -1), ("next", 1)):
                vals = np.full(w.shape[:-1], np.nan)
                for i in q:
                    if 0 <= i + off < nk:
                        vals[..., i] = w[..., i, i + off]
                pooled[stat].append(vals)
        if kind == "cross" and b.task.name in ("reverse", "copy", "sort"):
            truth = ground_truth_alignment(b.task.name, res.prepared.text)
            vals = np.full(w.shape[:-1], np.nan)
            m = min(truth.shape[0], nq)
            vals[..., :m] = (w[..., :m, :] * truth[:m]).sum(-1)
            pooled["alignment"].append(vals)
        rows_all.append(w.reshape(-1, nq, nk))
    means = {}
    for stat, parts in pooled.items():
        if not parts:
            continue
        cat = np.concatenate(parts, axis=-1)
        means[stat] = np.nanmean(cat, axis=-1)
    # JS: pool rows (keys zero-padded to one width)
    width = max(r.shape[-1] for r in rows_all)
    flat = np.concatenate([np.pad(r, ((0, 0), (0, 0), (0, width - r.shape[-1]))) for r in rows_all], axis=1)
    n = flat.shape[0]
    js = np.array([[viz.js_divergence(flat[i], flat[j], axis=-1).mean() for j in range(n)] for i in range(n)])
    return means, np.stack(per_sentence), js, outputs


def viz_punct(token: str) -> bool:
    import unicodedata

    text = token.replace("▁", "").strip()
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


@pytest.mark.parametrize("name,n", [("reverse", 12), ("sort", 9), ("default", 8), ("induction", 9)])
def test_every_figure_equals_a_direct_computation_from_each_sentences_analysis(name, n):
    data = small_dataset(name, n)
    atlas = compute_atlas(bundle(name), data, batch_size=5)  # several batches with padding
    for kind in atlas.kinds:
        means, per_sentence, js, outputs = _direct(name, data, kind)
        assert atlas.outputs == outputs
        for stat in STATS:
            got = atlas.stats[stat][kind]
            if stat not in means:
                assert np.isnan(got).all(), (kind, stat)
                continue
            np.testing.assert_allclose(got, means[stat], atol=2e-5, err_msg=f"{kind} {stat}")
        np.testing.assert_allclose(atlas.per_sentence[kind], per_sentence, atol=2e-5)
        np.testing.assert_allclose(atlas.js[kind], js, atol=2e-5)
    if name == "default":
        assert np.isfinite(atlas.stats["punct_share"]["encoder"]).all()
        assert (atlas.stats["punct_share"]["encoder"] > 0).any(), "the test sentences end in punctuation"


def test_one_sentence_atlas_matches_the_head_statistics_page():
    b = bundle("default")
    text = "我吃了一个苹果。"
    atlas = compute_atlas(b, Dataset([text], [None], [""], "one", 1))
    res = analyze(b, text)
    for kind in atlas.kinds:
        ka = res.kind_attention(kind)
        df = viz.head_stats(ka.pattern, key_mask=ka.mask, special_tokens=ka.key_special)
        same = {"entropy": "entropy", "entropy_norm": "entropy_norm", "max_weight": "max_weight",
                "special_share": "special_tokens"}
        if kind != "cross":
            same |= {"mean_distance": "mean_distance", "diagonal": "diagonal", "previous": "previous_token"}
        for mine, theirs in same.items():
            np.testing.assert_allclose(atlas.stats[mine][kind].reshape(-1), df[theirs].to_numpy(), atol=2e-5,
                                       err_msg=f"{kind} {mine}")


# --------------------------------------------------------------------------- roles


def test_roles_are_exactly_the_figures_that_reach_their_threshold():
    atlas = full_atlas("reverse")
    th = atlas.thresholds
    limit = {"previous": th.positional, "next": th.positional, "self": th.positional,
             "alignment": th.alignment, "sink": th.sink, "first": th.first, "broad": th.broad}
    assert limit == th.by_role()
    for kind in atlas.kinds:
        for layer in range(atlas.layer_counts[kind]):
            for head in range(atlas.n_heads):
                roles = atlas.roles(kind, layer, head)
                names = [r.name for r in roles]
                assert names == [r for r in ROLES if r in names]  # listed in ROLES order
                for role in ROLES:
                    value = atlas.stat(ROLE_STAT[role], kind, layer, head)
                    assert (role in names) == (np.isfinite(value) and value >= limit[role])
                for r in roles:
                    assert r.value == atlas.stat(ROLE_STAT[r.name], kind, layer, head)
                    assert r.threshold == limit[r.name]


def test_reverse_model_layer_1_cross_attention_heads_are_alignment_heads():
    # Measured expectation (bench figures: 0.65-0.73 of each row on the right source letter).
    atlas = full_atlas("reverse")
    assert len(atlas.texts) == 500
    for head in range(atlas.n_heads):
        assert "alignment" in [r.name for r in atlas.roles("cross", 1, head)], head
    # and the layer-0 cross heads are not: they spread over the source (alignment 0.19-0.34)
    assert not any(r.name == "alignment" for h in range(atlas.n_heads) for r in atlas.roles("cross", 0, h))
    # chance level for comparison: a uniform row over n letters + <eos> gives 1/(n+1) to the right one
    lengths = np.array([len(t) for t in atlas.texts])
    chance = float(np.sum(lengths / (lengths + 1)) / lengths.sum())
    assert atlas.stats["alignment"]["cross"][1].min() > 3 * chance


def test_top_sentences_are_the_most_concentrated_ones():
    atlas = full_atlas("reverse")
    values = atlas.per_sentence["cross"][:, 1, 0]
    top = atlas.top_sentences("cross", 1, 0, k=10)
    assert len(top) == 10 == len(set(top))
    assert list(values[top]) == sorted(values[top], reverse=True)
    assert values[top[-1]] >= np.delete(values, top).max()


# --------------------------------------------------------------------------- disk cache


def test_disk_cache_is_keyed_on_the_weights(tmp_path):
    b = load_model("copy")  # a copy of its own: the weights are changed below
    first, cached = load_or_compute(b, 20)
    assert not cached and atlas_path(b, held_out_dataset(b, 20)).is_file()
    again, cached = load_or_compute(b, 20)
    assert cached
    for kind in first.kinds:
        np.testing.assert_array_equal(again.js[kind], first.js[kind])
        np.testing.assert_array_equal(again.per_sentence[kind], first.per_sentence[kind])
        for stat in STATS:
            np.testing.assert_array_equal(again.stats[stat][kind], first.stats[stat][kind])
    assert again.texts == first.texts and again.outputs == first.outputs and again.order == first.order
    key = weights_key(b)
    with torch.no_grad():
        b.model.decoder.blocks[1].cross_attn.W_q.weight.mul_(0.0)  # the cross-attention of layer 1 goes flat
    assert weights_key(b) != key
    changed, cached = load_or_compute(b, 20)
    assert not cached, "changed weights: a new key, computed again"
    assert changed.key != first.key
    assert not np.allclose(changed.stats["alignment"]["cross"][1], first.stats["alignment"]["cross"][1])


def test_a_broken_or_old_file_is_recomputed(tmp_path):
    b = bundle("sort")
    atlas, _ = load_or_compute(b, 5)
    path = atlas_path(b, held_out_dataset(b, 5))
    path.write_bytes(b"not an npz")
    assert load_atlas(path) is None
    again, cached = load_or_compute(b, 5)
    assert not cached and load_atlas(path) is not None
    assert load_atlas(tmp_path / "missing.npz") is None


def test_command_line_prints_every_head_with_its_roles(capsys):
    assert main(["atlas", "--model", "reverse", "--sentences", "60"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split("\t")[:4] == ["kind", "layer", "head", "roles"]
    rows = [line.split("\t") for line in out[1:]]
    assert len(rows) == 3 * 2 * 4
    atlas, cached = load_or_compute(bundle("reverse"), 60)
    assert cached, "the command stored it"
    for kind, layer, head, roles, *_ in rows:
        expected = [r.name for r in atlas.roles(kind, int(layer), int(head))]
        assert [r.split("(")[0] for r in roles.split(",")] == (expected or ["-"])
    assert main(["atlas", "--model", "no-such-model"]) == 2


# --------------------------------------------------------------------------- figures (viz.atlas)


def test_ordered_matrix_permutes_rows_and_columns_together():
    m = np.arange(16, dtype=float).reshape(4, 4)
    got, labels = viz.ordered_matrix(m, ["a", "b", "c", "d"], [2, 0, 3, 1])
    assert labels == ["c", "a", "d", "b"]
    for i, oi in enumerate([2, 0, 3, 1]):
        for j, oj in enumerate([2, 0, 3, 1]):
            assert got[i, j] == m[oi, oj]
    for bad in ([0, 1, 2], [0, 0, 1, 2], [0, 1, 2, 4]):
        with pytest.raises(ValueError):
            viz.ordered_matrix(m, ["a", "b", "c", "d"], bad)
    with pytest.raises(ValueError):
        viz.ordered_matrix(m, ["a", "b"], [0, 1, 2, 3])
    with pytest.raises(ValueError):
        viz.ordered_matrix(np.zeros((2, 3)), ["a", "b"], [0, 1])


def test_head_map_carries_values_roles_and_the_head_of_each_cell():
    values = np.array([[0.1, np.nan, 0.3], [0.4, 0.5, 0.9]])
    roles = [["", "sink", ""], ["<b>x</b>", "", "alignment · broad"]]
    fig = viz.atlas_head_map(values, roles, value_name="max <weight>", lang="zh")
    trace = fig.data[0]
    np.testing.assert_array_equal(np.asarray(trace.z, dtype=float), values)
    assert trace.text[1][0] == "&lt;b&gt;x&lt;/b&gt;", "role text is escaped"
    cd = np.asarray(trace.customdata)
    assert cd.shape == (2, 3, 2) and cd[1, 2].tolist() == [1, 2]
    assert "&lt;weight&gt;" in title_of(fig) and "注意力头" in title_of(fig)
    click = fig.data[1]  # one invisible click target per cell, carrying its [layer, head]
    assert click.name == viz.CLICK_TRACE_NAME
    cells = sorted(map(tuple, np.asarray(click.customdata).tolist()))
    assert cells == [(i, j) for i in range(2) for j in range(3)]
    for (x, y), (layer, head) in zip(zip(click.x, click.y, strict=True), click.customdata, strict=True):
        assert (x, y) == (head, layer)
    with pytest.raises(ValueError):
        viz.atlas_head_map(values, roles[:1], value_name="v")
    with pytest.raises(ValueError):
        viz.atlas_head_map(values, [["", ""], ["", "", ""]], value_name="v")


def test_atlases_are_kept_in_the_repositorys_runs_folder_by_default(monkeypatch):
    from model.lab.atlas import atlas_dir

    monkeypatch.delenv("ATTENTION_LENS_ATLAS_DIR", raising=False)
    assert atlas_dir() == REPO_ROOT / "runs" / "atlas"


# --------------------------------------------------------------------------- language models' prompt set


def test_induction_prompts_are_held_out_sequences_with_half_their_repeat():
    data = held_out_dataset(bundle("induction"), 7)
    test_sequences = set(bundle("induction").task.sequences("test"))
    assert len(data.texts) == 7 and data.total == 500
    for text in data.texts:
        n = next(n for n in range(len(text), 0, -1)
                 if text[:n] in test_sequences and text[n:] == text[: n // 2])
        assert n >= 5
    assert data.directions == [None] * 7 and "16 tokens" in data.description


def test_sentence_prompts_alternate_chinese_and_english_test_sentences():
    from model.data.tatoeba import splits

    lm_cfg = SimpleNamespace(cfg=SimpleNamespace(decoder_only=True))
    fake = SimpleNamespace(name="lm", task=object(), model=lm_cfg)
    data = held_out_dataset(fake, 6)
    pairs = {(p.zh, p.en) for p in splits()["test"]}
    assert [(data.texts[i], data.texts[i + 1]) in pairs for i in (0, 2, 4)] == [True] * 3
    assert data.total == 2 * len(splits()["test"])
    with pytest.raises(AtlasError, match="at least one prompt"):
        held_out_dataset(fake, 0)


@pytest.mark.slow
def test_smollm2_atlas_finds_the_attention_sink_on_the_first_token():
    b = load_model("smollm2")
    data = held_out_dataset(b, 4)
    atlas = compute_atlas(b, data)
    assert atlas.outputs[:2] == [analyze(b, t, max_new=ATLAS_NEW_TOKENS).output_text for t in data.texts[:2]]
    first = [(li, h) for li in range(30) for h in range(9)
             if any(r.name == "first" for r in atlas.roles("decoder", li, h))]
    assert len(first) >= 150, len(first)  # measured: 205 of 270 over 50 prompts
