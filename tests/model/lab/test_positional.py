"""Positional-encoding lab: the formula, the relative-position rotation, RoPE, learned tables, figures."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

import viz
from model.lab import positional as lab
from model.network.kinds import hook_name
from model.network.positional import sinusoidal_table
from model.network.transformer import Transformer
from tests.conftest import tiny_config
from tests.figures import title_of

# --------------------------------------------------------------------------- the formula


@pytest.mark.parametrize("d_model", [4, 16, 64, 256])
def test_the_table_is_the_papers_formula(d_model):
    n = 50
    exact = lab.sinusoidal_table64(n, d_model)
    model_table = sinusoidal_table(n, d_model).numpy()
    for pos in (0, 1, 7, 49):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert exact[pos, 2 * i] == pytest.approx(np.sin(angle), abs=1e-12)
            assert exact[pos, 2 * i + 1] == pytest.approx(np.cos(angle), abs=1e-12)
            assert model_table[pos, 2 * i] == pytest.approx(np.sin(angle), abs=1e-5)
            assert model_table[pos, 2 * i + 1] == pytest.approx(np.cos(angle), abs=1e-5)


@pytest.mark.parametrize("d_model", [2, 8, 64, 256, 512])
@pytest.mark.parametrize("k", [1, 2, 5, 37, 199])
def test_pe_of_pos_plus_k_is_m_k_times_pe_of_pos_in_float64(d_model, k):
    table = lab.sinusoidal_table64(200 + k, d_model)
    m = lab.shift_matrix(d_model, k)
    errors = lab.shift_errors(table, k)
    assert errors.shape == (200,)
    assert errors.max() <= 1e-9
    # the same, written out without the helper
    np.testing.assert_allclose(table[k:], table[:-k] @ m.T, rtol=0, atol=1e-9)


@pytest.mark.parametrize("d_model,k", [(8, 3), (64, 1), (128, 40)])
def test_m_k_is_block_diagonal_with_one_rotation_per_pair(d_model, k):
    m = lab.shift_matrix(d_model, k)
    blocks = np.zeros_like(m)
    for i in range(0, d_model, 2):
        block = m[i:i + 2, i:i + 2]
        blocks[i:i + 2, i:i + 2] = block
        np.testing.assert_allclose(block @ block.T, np.eye(2), atol=1e-12)  # a rotation
        assert np.linalg.det(block) == pytest.approx(1.0, abs=1e-12)
        omega = 1 / 10000 ** (i / d_model)
        np.testing.assert_allclose(block, [[np.cos(k * omega), np.sin(k * omega)],
                                           [-np.sin(k * omega), np.cos(k * omega)]], atol=1e-15)
    np.testing.assert_array_equal(m, blocks)  # nothing off the 2×2 blocks
    # M_a · M_b = M_(a+b): turning twice adds the angles
    np.testing.assert_allclose(lab.shift_matrix(d_model, 2) @ lab.shift_matrix(d_model, k),
                               lab.shift_matrix(d_model, k + 2), atol=1e-12)


def test_a_table_without_the_property_shows_a_large_error():
    rng = np.random.default_rng(0)
    assert lab.shift_errors(rng.normal(size=(20, 16)), 3).max() > 0.1
    with pytest.raises(ValueError):
        lab.shift_errors(lab.sinusoidal_table64(5, 4), 5)
    with pytest.raises(ValueError):
        lab.sinusoidal_table64(5, 3)


# --------------------------------------------------------------------------- similarity against distance


def _brute_profile(table: np.ndarray):
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    sim = unit @ unit.T
    n = len(table)
    by_d = [[sim[i, i + d] for i in range(n - d)] for d in range(n)]
    return (np.array([np.mean(v) for v in by_d]), np.array([np.min(v) for v in by_d]),
            np.array([np.max(v) for v in by_d]))


@pytest.mark.parametrize("n,d", [(16, 64), (64, 256), (100, 16)])
def test_similarity_by_distance_of_the_sinusoidal_table(n, d):
    table = lab.sinusoidal_table64(n, d)
    prof = viz.similarity_by_distance(table)
    mean, low, high = _brute_profile(table)
    np.testing.assert_allclose(prof.mean, mean, atol=1e-12)
    np.testing.assert_allclose(prof.low, low, atol=1e-12)
    np.testing.assert_allclose(prof.high, high, atol=1e-12)
    assert prof.spread < 1e-9  # depends on the distance alone
    # mean over the pairs = (2/d) Σ cos(Δ ω_i)
    omega = lab.sinusoidal_frequencies(d)
    np.testing.assert_allclose(prof.mean, [np.mean(np.cos(delta * omega)) for delta in range(n)], atol=1e-12)
    rises = [delta for delta in range(1, n) if prof.mean[delta] > prof.mean[delta - 1] + 1e-6]
    np.testing.assert_array_equal(prof.rises, rises)
    assert prof.monotone == (not rises)


def test_the_profile_is_not_monotone_for_the_reverse_models_table_and_says_so():
    prof = viz.similarity_by_distance(lab.sinusoidal_table64(16, 64))
    assert not prof.monotone and prof.rises[0] == 6
    assert viz.similarity_by_distance(lab.sinusoidal_table64(4, 64)).monotone


def test_distance_figure_draws_the_mean_and_band():
    table = lab.sinusoidal_table64(30, 32)
    prof = viz.similarity_by_distance(table)
    fig = viz.pe_similarity_by_distance(table, max_len=16)
    high, low, mean = fig.data
    np.testing.assert_allclose(np.asarray(mean.y), prof.mean)
    np.testing.assert_allclose(np.asarray(low.y), prof.low)
    np.testing.assert_allclose(np.asarray(high.y), prof.high)
    assert low.fill == "tonexty"
    assert [s.x0 for s in fig.layout.shapes] == [15]


# --------------------------------------------------------------------------- learned tables


def test_the_learned_table_is_the_models_own_at_its_size():
    torch.manual_seed(0)
    model = Transformer(tiny_config(pos_encoding="learned")).eval()
    bundle = SimpleNamespace(cfg=model.cfg, model=model)
    table, own = lab.position_table(bundle, 16, 32)
    assert own
    np.testing.assert_array_equal(table, model.encoder.embed.positions.table.detach().numpy())
    other, own_other = lab.position_table(bundle, 20, 32)
    assert not own_other
    np.testing.assert_allclose(other, sinusoidal_table(20, 32).numpy())
    # random learned rows: pairs at the same distance differ, and no rotation maps one row to the next
    prof = viz.similarity_by_distance(table)
    mean, low, high = _brute_profile(table.astype(np.float64))
    np.testing.assert_allclose(prof.mean, mean, atol=1e-6)
    assert prof.spread > 0.1
    assert lab.shift_errors(table, 1).max() > 1e-3


# --------------------------------------------------------------------------- RoPE


def test_rope_frequencies_are_the_rotation_the_model_applies():
    torch.manual_seed(0)
    model = Transformer(tiny_config(pos_encoding="rope")).eval()
    d_head = model.cfg.d_head
    freqs = lab.rope_frequencies(d_head)
    np.testing.assert_allclose(freqs, 10000.0 ** (-np.arange(0, d_head, 2) / d_head), rtol=1e-6)
    src = torch.randint(4, 40, (1, 9), generator=torch.Generator().manual_seed(1))
    tgt = torch.randint(4, 40, (1, 5), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        _, cache = model.run_with_cache(src, tgt)
    acts = cache.to_numpy()
    q = acts[hook_name("encoder", 0, "q")][0].astype(np.float64)  # [pos, head, d_head]
    rot = acts[hook_name("encoder", 0, "rot_q")][0].astype(np.float64)
    for pos in range(q.shape[0]):
        angle = pos * freqs  # [pairs]
        even, odd = q[pos, :, 0::2], q[pos, :, 1::2]
        np.testing.assert_allclose(rot[pos, :, 0::2], even * np.cos(angle) - odd * np.sin(angle), atol=1e-5)
        np.testing.assert_allclose(rot[pos, :, 1::2], even * np.sin(angle) + odd * np.cos(angle), atol=1e-5)


@pytest.mark.parametrize("d_head", [8, 16])
def test_rope_score_depends_on_the_offset_only(d_head):
    n = tiny_config(pos_encoding="rope").max_len
    scores = lab.rope_scores(d_head, n)
    assert scores.shape == (n, n)
    for offset in range(-n + 1, n):
        diag = np.diagonal(scores, offset=offset)
        assert np.ptp(diag) <= 1e-5, offset
    assert np.ptp(scores) > 0.1  # not constant: the offset matters
    # independent check with complex numbers in float64: Re Σ q_c conj(k_c) e^{i (m - n) θ}
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, d_head, generator=g).double().numpy()
    qc, kc = q[0::2] + 1j * q[1::2], k[0::2] + 1j * k[1::2]
    theta = 10000.0 ** (-np.arange(0, d_head, 2) / d_head)
    expected = np.array([[np.real(np.sum(qc * np.conj(kc) * np.exp(1j * (m - j) * theta))) for j in range(n)]
                         for m in range(n)])
    np.testing.assert_allclose(scores, expected, atol=1e-4)


def test_rope_figures_mark_positions_past_max_len():
    scores = lab.rope_scores(8, 24)
    fig = viz.rope_score_heatmap(scores, max_len=16)
    np.testing.assert_allclose(np.asarray(fig.data[0].z), scores)
    shapes = fig.layout.shapes
    assert len(shapes) == 4 and {s.type for s in shapes} == {"rect", "line"}
    assert all(15.5 in (s.x0, s.y0) for s in shapes)
    assert not viz.rope_score_heatmap(lab.rope_scores(8, 16), max_len=16).layout.shapes
    bars = viz.rope_frequency_bars(lab.rope_frequencies(8))
    np.testing.assert_allclose(np.asarray(bars.data[0].y), lab.rope_frequencies(8))
    assert bars.layout.yaxis.type == "log"


# --------------------------------------------------------------------------- other figures


def test_pe_heatmap_shades_rows_past_max_len_only_when_there_are_any():
    table = sinusoidal_table(20, 16).numpy()
    assert not viz.pe_heatmap(table, max_len=20).layout.shapes
    assert not viz.pe_heatmap(table).layout.shapes
    fig = viz.pe_heatmap(table, max_len=12)
    assert {s.y0 for s in fig.layout.shapes} == {11.5}
    assert "12" in fig.layout.annotations[0].text


def test_shift_figures_carry_the_numbers():
    m = lab.shift_matrix(16, 4)
    fig = viz.shift_matrix_heatmap(m, 4, lang="zh")
    np.testing.assert_allclose(np.asarray(fig.data[0].z), m.astype(np.float32))
    assert "M_4" in title_of(fig)
    errors = lab.shift_errors(lab.sinusoidal_table64(30, 16), 4)
    curve = viz.shift_error_curve(errors, 4)
    np.testing.assert_array_equal(np.asarray(curve.data[0].y), errors)


def test_embedding_norm_bars():
    e, p = np.array([3.0, 4.0, 5.0]), np.array([1.0, 1.5, 2.0])
    fig = viz.embedding_norm_bars(["a", "<b>", "a"], e, p)
    assert fig.layout.barmode == "group"
    np.testing.assert_allclose(np.asarray(fig.data[0].y), e)
    np.testing.assert_allclose(np.asarray(fig.data[1].y), p)
    assert list(fig.layout.xaxis.ticktext) == ["a₀", "&lt;b&gt;", "a₂"]
    assert len(viz.embedding_norm_bars(["a"], [1.0], None).data) == 1
    with pytest.raises(ValueError):
        viz.embedding_norm_bars(["a", "b"], e, p)
    with pytest.raises(ValueError):
        viz.embedding_norm_bars(["a", "b", "c"], e, p[:2])


def test_input_vectors_keep_the_two_hooks():
    acts = {lab.EMBED_HOOK: np.ones((1, 3, 4), np.float32), lab.POS_HOOK: np.full((3, 4), 0.5, np.float32)}
    v = lab.input_vectors(acts, ["x", "y", "z"])
    np.testing.assert_allclose(v.embed_norm, [2.0] * 3)
    np.testing.assert_allclose(v.pos_norm, [1.0] * 3)
    assert lab.input_vectors({lab.EMBED_HOOK: acts[lab.EMBED_HOOK]}, ["x", "y", "z"]).pos_norm is None


def test_rope_frequencies_follow_the_models_base():
    """SmolLM2 turns its pairs with base 100,000, not the paper's 10,000: the lab shows the model's own."""
    for base in (1e4, 1e5):
        freqs = lab.rope_frequencies(64, base)
        np.testing.assert_allclose(freqs, base ** (-np.arange(0, 64, 2) / 64), rtol=1e-5)
    assert lab.rope_frequencies(64, 1e5)[-1] < lab.rope_frequencies(64, 1e4)[-1]
    scores = lab.rope_scores(64, 8, base=1e5)
    assert np.ptp(np.diagonal(scores, offset=2)) < 1e-4  # still a function of m - n only


def test_the_page_gets_the_shift_matrix_and_its_errors_in_one_call():
    shift = lab.sinusoid_shift(40, 16, 3)
    np.testing.assert_array_equal(shift.matrix, lab.shift_matrix(16, 3))
    np.testing.assert_array_equal(shift.errors, lab.shift_errors(lab.sinusoidal_table64(40, 16), 3))
    assert shift.errors.shape == (37,) and shift.errors.max() < 1e-12
