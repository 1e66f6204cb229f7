"""Model vs model: the Jensen-Shannon distance against its definition written out here, every head pair's
distance against the two models' own recorded patterns, a model against itself, a pitfall model against
the correct one, models of other shapes and tokenizers."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from model.lab import versus as V
from model.network.kinds import hook_name
from model.run.analysis import analyze
from model.store.registry import load_model

TEXT = "attention"


@functools.cache
def bundle(name: str):
    return load_model(name)


def js_by_definition(p, q) -> float:
    """JS distance in base 2, from JS(p, q) = ½ Σ p log2(p/m) + ½ Σ q log2(q/m), m = (p + q) / 2."""
    total = 0.0
    for pi, qi in zip(p, q, strict=True):
        mi = (pi + qi) / 2
        if pi > 0:
            total += 0.5 * pi * math.log2(pi / mi)
        if qi > 0:
            total += 0.5 * qi * math.log2(qi / mi)
    return math.sqrt(max(total, 0.0))


def recorded_pattern(name: str, kind: str, layer: int, target: str | None = None) -> np.ndarray:
    """[head, query, key] from the model's own hook tensors (every hook kept, no recomputation)."""
    run = analyze(bundle(name), TEXT, target=target)
    return run.activations[hook_name(kind, layer, "pattern")][0].astype(np.float64)


def test_js_distance_equals_the_definition():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(7), size=20)
    q = rng.dirichlet(np.ones(7) * 0.3, size=20)
    p[:5, :3] = 0  # zeros where one side has weight: 0 log 0 = 0
    p[:5] /= p[:5].sum(-1, keepdims=True)
    q[3:8, 4:] = 0
    q[3:8] /= q[3:8].sum(-1, keepdims=True)
    got = V.js_distance(p, q)
    want = [js_by_definition(a, b) for a, b in zip(p, q, strict=True)]
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert V.js_distance(p[0], p[0]) == 0.0
    assert abs(float(V.js_distance(np.array([1.0, 0]), np.array([0, 1.0]))) - 1.0) < 1e-12  # disjoint: 1


@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_every_head_pair_equals_a_direct_computation(kind):
    a, b = "pitfall-correct", "pitfall-no-scaling"
    result = V.compare(bundle(a), bundle(b), TEXT, None, kind)
    assert not result.refusal
    assert result.output_a == analyze(bundle(a), TEXT).output_text
    assert result.output_b == analyze(bundle(b), TEXT).output_text
    assert result.output_a == result.output_b and not result.b_read_a_output  # both write "noitnetta"
    n_layers = bundle(a).cfg.n_enc_layers if kind == "encoder" else bundle(a).cfg.n_dec_layers
    for la in range(n_layers):
        pa = recorded_pattern(a, kind, la)
        for lb in range(n_layers):
            pb = recorded_pattern(b, kind, lb)
            for ha in range(pa.shape[0]):
                for hb in range(pb.shape[0]):
                    want = np.mean([js_by_definition(x, y) for x, y in zip(pa[ha], pb[hb], strict=True)])
                    assert abs(result.distance[la, ha, lb, hb] - want) < 1e-5, (la, ha, lb, hb)
    d = result.distance.astype(np.float64)
    m = result.match
    flat = d.reshape(*d.shape[:2], -1)
    np.testing.assert_array_equal(m.nearest_distance, flat.min(-1))
    for la in range(n_layers):
        for ha in range(d.shape[1]):
            lb, hb = m.nearest[la, ha]
            assert d[la, ha, lb, hb] == flat[la, ha].min()
            assert m.same_layer_head[la, ha] == d[la, ha, la].argmin()
            assert m.same_position[la, ha] == d[la, ha, la, ha]


@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_a_model_against_itself_is_zero_and_each_head_nearest_to_itself(kind):
    result = V.compare(bundle("pitfall-correct"), bundle("pitfall-correct"), TEXT, None, kind)
    m = result.match
    assert np.all(m.same_position == 0.0)
    assert np.all(m.nearest_distance == 0.0)
    n_layers, n_heads = m.nearest_distance.shape
    want = np.stack(np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij"), axis=-1)
    np.testing.assert_array_equal(m.nearest, want)
    off = ~np.eye(n_layers * n_heads, dtype=bool).reshape(n_layers, n_heads, n_layers, n_heads)
    assert result.distance[off].min() > 0  # other heads are not the same head


@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_no_scaling_moved_every_head(kind):
    result = V.compare(bundle("pitfall-no-scaling"), bundle("pitfall-correct"), TEXT, None, kind)
    assert result.match.same_position.min() > 0.05
    assert result.match.nearest_distance.min() > 0.05


def test_b_reads_as_output_when_it_wrote_another():
    a, b, text = "pitfall-correct", "pitfall-one-head", "attentionplease"
    result = V.compare(bundle(a), bundle(b), text, None, "cross")
    own_a, own_b = analyze(bundle(a), text), analyze(bundle(b), text)
    assert own_a.output_text != own_b.output_text  # the one-head model gets this word wrong
    assert result.b_read_a_output and result.cut_rows == 0
    assert result.query_tokens == own_a.target_tokens
    forced = analyze(bundle(b), text, target=own_a.output_text)
    pb = forced.activations[hook_name("cross", 1, "pattern")][0]
    pa = analyze(bundle(a), text).activations[hook_name("cross", 0, "pattern")][0]
    want = np.mean([js_by_definition(x, y) for x, y in zip(pa[3], pb[0], strict=True)])
    assert abs(result.distance[0, 3, 1, 0] - want) < 1e-5


def test_other_shapes_compare_by_nearest_head_only():
    result = V.compare(bundle("pitfall-correct"), bundle("pitfall-one-head"), TEXT, None, "encoder")
    m = result.match
    assert result.distance.shape == (2, 4, 2, 1)
    assert m.same_position is None
    assert np.all(m.nearest[..., 1] == 0) and np.all(m.same_layer_head == 0)
    np.testing.assert_array_equal(m.same_layer, [0, 1])


def test_same_depth_when_layer_counts_differ():
    rng = np.random.default_rng(1)
    d = rng.random((4, 2, 2, 3))
    m = V.match_heads(d)
    np.testing.assert_array_equal(m.same_layer, [0, 0, 1, 1])  # round(i * 1 / 3)
    for i in range(4):
        np.testing.assert_array_equal(m.same_layer_head[i], d[i, :, m.same_layer[i]].argmin(-1))
    assert m.same_position is None


def test_lazy_stack_and_stacked_arrays_give_the_same_distances():
    run_a = analyze(bundle("pitfall-correct"), TEXT)  # every hook kept: stacked arrays
    run_b = analyze(bundle("pitfall-no-scaling"), TEXT, keep=lambda h: False)  # lazy AttentionStack
    n = len(run_a.source_tokens)
    stacked = V.layer_pair_distances(run_a.attention("encoder"), np.asarray(run_b.attention("encoder")), n, n)
    lazy = V.layer_pair_distances(run_a.attention("encoder"), run_b.attention("encoder"), n, n)
    np.testing.assert_allclose(stacked, lazy, atol=1e-6)
    small = V.BLOCK_BYTES
    try:  # a block of one row at a time sums to the same means
        V.BLOCK_BYTES = 1
        rows = V.layer_pair_distances(run_a.attention("encoder"), run_b.attention("encoder"), n, n)
        np.testing.assert_allclose(rows, lazy, atol=1e-6)
    finally:
        V.BLOCK_BYTES = small


class _Vocab:
    def __init__(self, tokens, pad=0, bos=1, eos=2):
        self._tokens, self.pad_id, self.bos_id, self.eos_id = list(tokens), pad, bos, eos

    @property
    def vocab_size(self):
        return len(self._tokens)

    def id_to_token(self, i):
        return self._tokens[i]


def test_tokenizers_are_compared_by_their_vocabularies():
    assert not V.tokenizer_match(bundle("default"), bundle("minilm")).shared
    refused = V.tokenizer_match(bundle("default"), bundle("minilm"))
    assert (refused.reason, refused.size_a, refused.size_b) == ("size", 8000, 30522)
    assert V.tokenizer_match(bundle("reverse"), bundle("pitfall-no-scaling")).shared  # two names, one vocab
    other = V.same_vocabulary(_Vocab("abcd"), _Vocab("abxd"))
    assert (other.shared, other.reason, other.token_id) == (False, "token", 2)
    assert (other.token_a, other.token_b) == ("c", "x")
    assert V.same_vocabulary(_Vocab("abcd"), _Vocab("abcd", eos=3)).reason == "special"
    assert V.same_vocabulary(_Vocab("abcd"), _Vocab("abcd")).shared


def test_a_kind_b_lacks_and_tokens_that_differ_are_refused():
    assert V.compare(bundle("reverse"), bundle("induction"), TEXT, None, "encoder").refusal == "no_kind"
    # one vocabulary, but the translation model reads a source and the language model none
    refused = V.compare(bundle("default"), bundle("tiny-gpt"), "我吃了一个苹果", None, "decoder")
    assert refused.refusal == "tokens" and refused.distance is None
