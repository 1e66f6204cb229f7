"""Positional-encoding lab figures."""

import numpy as np
import pytest

import viz


def _sinusoidal(n_pos=20, d=16):
    pos = np.arange(n_pos)[:, None]
    i = np.arange(0, d, 2)
    pe = np.zeros((n_pos, d), np.float32)
    pe[:, 0::2] = np.sin(pos / 10000 ** (i / d))
    pe[:, 1::2] = np.cos(pos / 10000 ** (i / d))
    return pe


def test_pe_heatmap_data_and_diverging_scale():
    pe = _sinusoidal()
    fig = viz.pe_heatmap(pe)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), pe)
    assert fig.data[0].zmid == 0.0
    assert fig.to_plotly_json()["data"][0]["z"]["dtype"] == "f4"


def test_pe_cosine_similarity_figure():
    pe = _sinusoidal()
    fig = viz.pe_cosine_similarity(pe)
    z = np.asarray(fig.data[0].z)
    np.testing.assert_allclose(z, viz.cosine_similarity_matrix(pe).astype(np.float32))
    np.testing.assert_allclose(np.diag(z), 1.0, rtol=1e-6)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-1.0, 1.0)


def test_pe_dimension_curves():
    pe = _sinusoidal()
    fig = viz.pe_dimension_curves(pe, [0, 5])
    assert [t.name for t in fig.data] == ["dim 0", "dim 5"]
    np.testing.assert_array_equal(np.asarray(fig.data[1].y), pe[:, 5])
    with pytest.raises(ValueError, match="out of range"):
        viz.pe_dimension_curves(pe, [16])
    with pytest.raises(ValueError, match="at least one"):
        viz.pe_dimension_curves(pe, [])
    with pytest.raises(ValueError, match="2-D"):
        viz.pe_heatmap(pe[0])
