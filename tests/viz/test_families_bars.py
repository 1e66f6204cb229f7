"""The families page's word row as bars: every key drawn at its weight in its group, a long row sent a
window of positions at a time (the payload follows the screen), tokens shown as text."""

from __future__ import annotations

import json

import numpy as np
import plotly.io as pio
import pytest

from viz.families import MAX_BARS, bar_window, word_attention_bars
from viz.typed_arrays import decode_plotly_array


def _arr(value) -> np.ndarray:
    return decode_plotly_array(value) if isinstance(value, dict) else np.asarray(value)


def _bars(fig) -> dict[str, dict[int, float]]:
    """group ("word", "other", "hidden") -> {key position: bar height}, from the JSON the browser gets."""
    sent = json.loads(pio.to_json(fig))
    out: dict[str, dict[int, float]] = {}
    for trace in sent["data"]:
        xs, ys = _arr(trace["x"]).astype(int).tolist(), _arr(trace["y"]).tolist()
        out[trace["meta"]] = dict(zip(xs, ys, strict=True))
    return out


def _row(n: int, seed: int = 0) -> np.ndarray:
    w = np.random.default_rng(seed).random(n)
    return w / w.sum()


def test_every_key_is_one_bar_at_its_weight_in_its_group():
    w, hidden = _row(10), np.zeros(10, bool)
    hidden[7:] = True
    w[7:] = 0.0
    bars = _bars(word_attention_bars(w, [f"t{i}" for i in range(10)], [3, 4], hidden))
    assert set(bars["word"]) == {3, 4} and set(bars["hidden"]) == {7, 8, 9}
    assert set(bars["other"]) == {0, 1, 2, 5, 6}
    drawn = {**bars["word"], **bars["other"], **bars["hidden"]}
    np.testing.assert_allclose([drawn[i] for i in range(10)], w)


def test_a_long_row_draws_only_its_window_at_the_keys_own_positions():
    n = 300
    w = _row(n, 1)
    fig = word_attention_bars(w, [f"t{i}" for i in range(n)], [130], key_range=(128, 192))
    bars = _bars(fig)
    drawn = {**bars["word"], **bars["other"]}
    assert sorted(drawn) == list(range(128, 192)) and set(bars["word"]) == {130}
    np.testing.assert_allclose([drawn[i] for i in range(128, 192)], w[128:192])
    axis = fig.layout.xaxis
    assert list(axis.tickvals) == list(range(128, 192))
    assert list(axis.ticktext) == [f"t{i}" for i in range(128, 192)]
    assert tuple(axis.range) == (127.5, 191.5)
    assert "128–191" in fig.layout.title.text and "300" in fig.layout.title.text



def test_a_windows_payload_does_not_grow_with_the_row():
    def size(n: int, key_range=None) -> int:
        fig = word_attention_bars(_row(n), [f"t{i}" for i in range(n)], [1], key_range=key_range)
        return len(pio.to_json(fig))

    window = (0, MAX_BARS)
    assert size(4096, window) < 1.1 * size(256, window)
    assert size(4096) > 10 * size(4096, window)


def test_a_window_outside_the_row_is_refused():
    for bad in ((0, 0), (5, 3), (-1, 4), (0, 11)):
        with pytest.raises(ValueError, match="key_range"):
            word_attention_bars(_row(10), [f"t{i}" for i in range(10)], key_range=bad)


@pytest.mark.parametrize("n", [1, MAX_BARS - 1, MAX_BARS, MAX_BARS + 1, 5 * MAX_BARS + 7])
def test_the_pages_of_a_row_cover_it_once_each_within_the_bound(n):
    pages = [bar_window(n, p) for p in range((n - 1) // MAX_BARS + 1)]
    covered = [i for a, b in pages for i in range(a, b)]
    assert covered == list(range(n))
    assert all(0 < b - a <= MAX_BARS for a, b in pages)
    assert bar_window(n, 10**6) == pages[-1] and bar_window(n, -3) == pages[0]  # a stale page is clamped


def test_tokens_are_shown_as_text():
    fig = word_attention_bars(_row(3), ["<script>alert(1)</script>", "b", "c"])
    assert "<script>" not in json.dumps(list(fig.layout.xaxis.ticktext))
