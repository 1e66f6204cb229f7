"""Figures and attention tensors as files: offline HTML, PNG/SVG through kaleido and the system's
Chromium, the vector heatmap, the attention CSV and NPZ (round trips equal the cache), and the
app's download buttons."""

from __future__ import annotations

import functools
import io
import json
import struct
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pytest
from plotly.colors import sample_colorscale
from streamlit.testing.v1 import AppTest

import viz
from app_pages.glue import single_export as AX
from app_support.ui import PLOTLY_CONFIG, chart_config, chart_tools_html, figure_filename
from model.export.archive import activations_npz, inspect_meta
from model.export.scopes import LIMIT_BYTES, PAGE_SQUARES, Scope
from model.lab import model as model_lab
from model.run.analysis import analyze, attention_only
from model.store.registry import load_model
from tests.paths import REPO_ROOT
from viz import export as E
from viz import theme

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@functools.cache
def result(name: str = "reverse", text: str = "attention"):
    return analyze(load_model(name), text)


def heatmap(kind: str = "decoder", layer: int = 0, head: int = 1):
    r = result()
    queries, keys = r.tokens_for(kind)
    return viz.attention_heatmap(r.attention(kind)[layer, head], queries, keys,
                                 r.attention(kind, "scores")[layer, head])


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


# --------------------------------------------------------------------------- HTML


def test_standalone_html_holds_plotly_and_the_data_and_fetches_nothing():
    fig = heatmap()
    html = E.standalone_html(fig, title="x <y>")
    assert html.startswith("<!DOCTYPE html>")
    assert "<title>x &lt;y&gt;</title>" in html
    assert E.external_urls(html) == []
    assert "<script src" not in html.lower()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert len(html) > 3_000_000  # plotly.js is inside the file
    # the figure's own data: its token labels are in the page
    plain = [label for label in fig.layout.xaxis.ticktext if label.isascii() and label.isalnum()]
    assert plain and all(f'"{label}"' in html for label in plain)


def test_external_urls_finds_what_a_page_would_load():
    page = ('<html><head><script src="https://cdn.plot.ly/plotly.js"></script>'
            '<link href="//fonts.example/x.css" rel="stylesheet"><style>@import url("https://a/b.css");</style>'
            '</head><body><img src="http://x/y.png"><script>var s = "https://not-fetched";</script></body></html>')
    found = E.external_urls(page)
    assert set(found) == {"https://cdn.plot.ly/plotly.js", "//fonts.example/x.css", "https://a/b.css",
                          "http://x/y.png"}
    assert E.external_urls("<p>local</p>") == []


def test_deck_html_has_a_section_per_slide_and_keys():
    figs = [heatmap(), heatmap("encoder", 1, 0)]
    html = E.deck_html([("one", ["line a"], figs[0]), ("two", [], figs[1])], title="T", subtitle="s")
    assert html.count("<section") == 3  # the title and two slides
    assert "ArrowRight" in html and "PageDown" in html
    assert E.external_urls(html) == []
    assert html.count("Plotly.newPlot") == 2 and html.count("<script>") >= 3


# --------------------------------------------------------------------------- PNG and SVG


@pytest.mark.export
def test_png_is_a_png_at_twice_the_layout_size():
    fig = heatmap()
    data = E.figure_image(fig, "png")
    width, height = E.figure_size(fig)
    assert png_size(data) == (width * E.PNG_SCALE, height * E.PNG_SCALE)
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        image.verify()


@pytest.mark.export
def test_svg_parses_and_keeps_text_as_text():
    fig = heatmap()
    data = E.figure_image(fig, "svg")
    root = ET.fromstring(data)
    assert root.tag.endswith("svg")
    texts = "".join(root.itertext())
    for label in fig.layout.xaxis.ticktext:
        assert label.replace("&lt;", "<").replace("&gt;", ">") in texts
    # plotly draws the heatmap itself as one embedded raster image (what docs/teaching.md says)
    assert len(root.findall(".//{http://www.w3.org/2000/svg}image")) >= 1


@pytest.mark.export
def test_several_figures_in_one_browser_session(tmp_path):
    figs = [heatmap(), heatmap("cross", 1, 2)]
    paths = [tmp_path / "a.svg", tmp_path / "b.svg"]
    E.write_figure_images(figs, paths, "svg")
    for p in paths:
        assert ET.parse(p).getroot().tag.endswith("svg")
    with pytest.raises(ValueError):
        E.write_figure_images(figs, paths[:1], "svg")
    with pytest.raises(ValueError):
        E.figure_image(figs[0], "gif")


def test_a_figure_the_writer_left_unwritten_is_drawn_again_then_refused(monkeypatch, tmp_path):
    """kaleido's write_images once returned without writing a.svg: the figures whose file did not appear
    are drawn once more; a file still missing is a one-line error naming it, never a silent success."""
    figs = [heatmap(), heatmap("cross", 1, 2)]
    paths = [tmp_path / "a.svg", tmp_path / "b.svg"]
    (tmp_path / "a.svg").write_text("an older export")  # overwritten: an old file is not a written one
    calls: list[list[str]] = []
    skip = {"a.svg"}

    def writer(figures, files, **kwargs):
        calls.append([Path(f).name for f in files])
        for f in files:
            if Path(f).name not in skip:
                Path(f).write_text("<svg/>")
        skip.clear()  # the second try writes everything

    monkeypatch.setattr(E, "_kaleido_ready", lambda fmt: None)
    monkeypatch.setattr(E.pio, "write_images", writer)
    E.write_figure_images(figs, paths, "svg")
    assert calls == [["a.svg", "b.svg"], ["a.svg"]]  # only the missing one again
    assert paths[0].read_text() == "<svg/>"

    monkeypatch.setattr(E.pio, "write_images", lambda figures, files, **kwargs: None)
    refused = r"^the browser wrote no SVG for a\.svg, b\.svg \(tried twice\)$"
    with pytest.raises(E.BrowserRunError, match=refused):
        E.write_figure_images(figs, paths, "svg")


def test_without_a_browser_the_error_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-such-chromium"))
    with pytest.raises(E.NoBrowserError, match="apt-get install chromium fonts-noto-cjk"):
        E.find_browser()
    monkeypatch.setenv("BROWSER_PATH", "")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(E.NoBrowserError, match="no Chromium found.*BROWSER_PATH=/usr/bin/chromium"):
        E.figure_image(heatmap(), "png")


# --------------------------------------------------------------------------- vector heatmap


def test_vector_heatmap_is_one_rectangle_per_cell_in_the_weights_colour():
    r = result()
    pattern = r.attention("decoder")[0, 1]
    mask = ~np.isfinite(r.attention("decoder", "scores")[0, 1])
    fig = E.vector_heatmap(pattern, r.target_tokens, r.target_tokens, mask)
    shapes = fig.layout.shapes
    n_q, n_k = pattern.shape
    assert len(shapes) == n_q * n_k
    want = sample_colorscale(theme.SEQUENTIAL, [float(v) for v in np.clip(pattern, 0, 1).ravel()])
    for i in range(n_q):
        for j in range(n_k):
            s = shapes[i * n_k + j]
            assert (s.x0, s.x1, s.y0, s.y1) == (j - 0.5, j + 0.5, i - 0.5, i + 0.5)
            assert s.fillcolor == (theme.MASK_COLOR if mask[i, j] else want[i * n_k + j])
    assert mask.any() and not [t for t in fig.data if t.type == "heatmap"]  # nothing raster left
    assert list(fig.layout.xaxis.ticktext) == list(viz.token_labels(r.target_tokens))
    with pytest.raises(ValueError):
        E.vector_heatmap(np.zeros((65, 65)), ["a"] * 65, ["b"] * 65)
    with pytest.raises(ValueError):
        E.vector_heatmap(pattern, r.target_tokens, r.target_tokens, mask[:-1])


@pytest.mark.export
def test_vector_heatmap_svg_has_no_raster_image():
    r = result()
    fig = E.vector_heatmap(r.attention("encoder")[0, 0], r.source_tokens, r.source_tokens)
    root = ET.fromstring(E.figure_image(fig, "svg"))
    svg = "{http://www.w3.org/2000/svg}"
    assert root.findall(f".//{svg}image") == []
    assert len(root.findall(f".//{svg}path")) >= len(r.source_tokens) ** 2


# --------------------------------------------------------------------------- CSV and NPZ


def test_csv_round_trip_equals_the_cached_weights():
    cached = analyze(load_model("reverse"), "attention", keep=attention_only)
    data = AX.csv_bytes(cached)
    back = E.read_attention_csv(data)
    patterns = AX.patterns_of(cached)
    assert set(back) == set(patterns) == {"encoder", "decoder", "cross"}
    for kind, array in patterns.items():
        np.testing.assert_array_equal(back[kind], array)  # bit-exact float32
    header, first = data.decode().splitlines()[:2]
    assert header == ",".join(E.CSV_COLUMNS)
    kind, layer, head, q, k, qt, kt, w = first.split(",")
    assert (kind, layer, head, q, k) == ("encoder", "0", "0", "0", "0")
    assert (qt, kt) == (cached.source_tokens[0], cached.source_tokens[0])
    assert np.float32(w) == patterns["encoder"][0, 0, 0, 0]
    assert len(data.decode().splitlines()) == 1 + E.csv_row_count(patterns)


def test_csv_of_one_layer_keeps_the_models_layer_number():
    cached = result()
    data = AX.csv_bytes(cached, ("cross", 1, None))
    back = E.read_attention_csv(data)
    assert set(back) == {"cross"}
    np.testing.assert_array_equal(back["cross"][1], cached.attention("cross")[1])
    assert np.isnan(back["cross"][0]).all()  # only layer 1 was written


def test_large_tables_are_offered_one_kind_layer_or_head_at_a_time():
    patterns = AX.patterns_of(result())
    total = E.csv_row_count(patterns)
    assert AX.row_count(patterns) == total
    assert AX.scopes(patterns)[0] == (AX.ALL, None, None)
    per_kind = max(p.size for p in patterns.values())
    small = AX.scopes(patterns, limit=per_kind)
    assert (AX.ALL, None, None) not in small and ("encoder", None, None) in small
    tiny = AX.scopes(patterns, limit=per_kind - 1)
    assert all(layer is not None and head is None for _, layer, head in tiny)
    assert len(tiny) == sum(p.shape[0] for p in patterns.values())
    per_layer = max(p[0].size for p in patterns.values())
    heads = AX.scopes(patterns, limit=per_layer - 1)
    assert len(heads) == sum(p.shape[0] * p.shape[1] for p in patterns.values())
    assert all(AX.row_count(patterns, s) == p.shape[2] * p.shape[3] for s in heads for p in [patterns[s[0]]])
    with pytest.raises(ValueError, match="one kind or one layer"):
        E.attention_csv(patterns, {k: result().tokens_for(k) for k in patterns}, limit=total - 1)


def test_csv_of_one_head_is_that_heads_rows_of_its_layers_table(monkeypatch):
    cached = analyze(load_model("reverse"), "attention", keep=attention_only)
    monkeypatch.setattr(AX, "CSV_BLOCK_ROWS", 3)  # several blocks of query rows
    head_lines = AX.csv_bytes(cached, ("decoder", 1, 2)).decode().splitlines()
    layer_lines = AX.csv_bytes(cached, ("decoder", 1, None)).decode().splitlines()
    assert head_lines[0] == layer_lines[0]
    assert head_lines[1:] == [line for line in layer_lines[1:] if line.split(",")[2] == "2"]
    back = E.read_attention_csv("\n".join(head_lines).encode())
    np.testing.assert_array_equal(back["decoder"][1, 2], cached.attention("decoder")[1, 2])


def _npz(data: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(data)) as archive:
        return {name: archive[name] for name in archive.files}


def _assert_same_arrays(got: dict[str, np.ndarray], want: dict[str, np.ndarray],
                        decoder_atol: float = 0.0) -> None:
    """Bit-equal arrays; a decoder's (self- and cross-attention) within ``decoder_atol`` where given."""
    assert set(got) == set(want)
    for name, value in want.items():
        assert got[name].dtype == np.float32
        if decoder_atol and name.startswith("decoder."):
            np.testing.assert_allclose(got[name], value, rtol=0, atol=decoder_atol)
        else:
            np.testing.assert_array_equal(got[name], value)


def test_npz_round_trip_equals_the_patterns_and_scores_the_pass_computed():
    bundle, text = load_model("default"), "我吃了一个苹果"
    cached = analyze(bundle, text, keep=attention_only)
    assert not cached.activations  # the page's analysis keeps no squares: the NPZ computes them
    # What the cache held before it kept attention inputs instead: every layer's patterns and scores.
    recorded = analyze(bundle, text, keep=lambda h: h.endswith((".hook_pattern", ".hook_scores")))
    assert AX.npz_scope(cached, (AX.ALL, None, None)) == Scope()
    # The page's analysis of a translation is one pass (each decoding step records its own rows,
    # model/run/one_pass.py); a kept hook tensor needs the whole decoder pass over the output: the decoder's
    # rows agree within 1e-5 (tests/model/run/test_one_pass_translation.py), the encoder's bit for bit.
    _assert_same_arrays(_npz(AX.npz_bytes(cached)), recorded.activations, decoder_atol=1e-5)


@pytest.mark.parametrize("name,text", [("reverse", "attention"), ("tiny-gpt", "hello world"),
                                       ("minilm", "a short sentence")])
def test_the_archive_of_a_short_input_is_every_hook_of_the_full_pass(name, text):
    bundle = load_model(name)
    full = analyze(bundle, text)  # keep=None: the pass itself records every hook, squares included
    with zipfile.ZipFile(io.BytesIO(model_lab.archive(bundle, text, None))) as archive:
        arrays = _npz(archive.read("activations.npz"))
        meta = json.loads(archive.read("meta.json"))
    _assert_same_arrays(arrays, full.activations)  # the squares computed while writing: bit-equal
    assert meta == json.loads(json.dumps(inspect_meta(bundle, full, text)))
    plan = model_lab.archive_scopes(bundle, len(full.source_tokens), len(full.target_tokens))
    assert plan == [(Scope(), sum(v.nbytes for v in full.activations.values()))]


def test_past_the_limit_a_file_holds_one_part_and_its_planned_bytes(monkeypatch):
    """A limit between one layer's and everything's size: the plan offers layers; each file holds that
    block's hooks and squares, as many bytes as planned, within the limit."""
    bundle, text = load_model("reverse"), "attention is all you need"
    full = analyze(bundle, text)
    lengths = (len(full.source_tokens), len(full.target_tokens))
    everything = sum(v.nbytes for v in full.activations.values())
    limit = everything // 3
    monkeypatch.setattr(model_lab, "LIMIT_BYTES", limit)
    plan = model_lab.archive_scopes(bundle, *lengths)
    assert plan and all(s.kind is not None for s, _ in plan)
    assert any(s.layer is not None for s, _ in plan)  # some kind is offered one layer at a time
    for scope, planned in plan:
        assert planned <= limit or scope.head is not None
        data = model_lab.archive(bundle, text, None, scope=scope)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            arrays = _npz(archive.read("activations.npz"))
            meta = json.loads(archive.read("meta.json"))
        assert sum(a.nbytes for a in arrays.values()) == planned
        assert meta["scope"] == {"kind": scope.kind, "layer": scope.layer, "head": scope.head,
                                 "limit_bytes": LIMIT_BYTES}
        for name, value in arrays.items():  # each array is the full pass's (one head: its slice)
            hook, _, head = name.partition(".head")
            want = full.activations[hook]
            np.testing.assert_array_equal(value, want[:, int(head) : int(head) + 1] if head else want)


def test_the_page_npz_past_the_limit_holds_the_chosen_part(monkeypatch):
    cached = analyze(load_model("reverse"), "attention", keep=attention_only)
    monkeypatch.setattr(AX, "LIMIT_BYTES", 1)
    assert AX.npz_scope(cached, (AX.ALL, None, None)) == Scope()  # everything was chosen
    arrays = _npz(AX.npz_bytes(cached, ("cross", 1, 2)))
    assert set(arrays) == {f"decoder.blocks.1.cross_attn.hook_{w}.head2" for w in PAGE_SQUARES}
    np.testing.assert_array_equal(arrays["decoder.blocks.1.cross_attn.hook_pattern.head2"][0, 0],
                                  cached.attention("cross")[1, 2])
    whole = _npz(activations_npz(cached, Scope("cross", 1), PAGE_SQUARES, hooks=False))
    assert whole["decoder.blocks.1.cross_attn.hook_scores"].shape[1] == cached.attention("cross").shape[1]
    # a limit one layer fits in: a head's choice widens to its layer, the most that fits
    layer = sum(a.nbytes for a in whole.values())
    monkeypatch.setattr(AX, "LIMIT_BYTES", layer)
    assert AX.npz_scope(cached, ("cross", 1, 2)) == Scope("cross", 1)
    _assert_same_arrays(_npz(AX.npz_bytes(cached, ("cross", 1, 2))), whole)


# --------------------------------------------------------------------------- the app's buttons


def test_every_chart_has_named_image_downloads():
    assert PLOTLY_CONFIG["displayModeBar"] is True  # the toolbar is shown, not only on hover
    config = chart_config("single_head_heatmap")
    assert config["toImageButtonOptions"] == {"format": "png", "scale": 2,
                                              "filename": "attention-lens-single-head-heatmap"}
    assert figure_filename(None, heatmap()).startswith("attention-lens-")
    for lang, png in (("en", "PNG ×2"), ("zh", "PNG ×2")):
        script = chart_tools_html(lang)
        labels = json.loads(script.split("window.__alExportLabels = ", 1)[1].split(";\n", 1)[0])
        assert labels["png"] == png and labels["svg"] == "SVG"
        assert "'svg'" in script and "toImageButtonOptions" in script
    assert "下载" in json.loads(chart_tools_html("zh").split("= ", 1)[1].split(";\n", 1)[0])["group"]


def test_a_keyed_chart_offers_offline_html_and_the_page_offers_the_tensors():
    page = str(REPO_ROOT / "app_pages" / "single.py")
    at = AppTest.from_file(page, default_timeout=300)
    at.query_params.update({"model": "reverse", "text": "attention", "kind": "encoder"})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    ids = [d.proto.id for d in at.get("download_button")]
    assert any("single_head_heatmap__html" in i for i in ids), ids
    assert any("attention_export_csv" in i for i in ids) and any("attention_export_npz" in i for i in ids)
    html_button = next(d for d in at.get("download_button") if "__html" in d.proto.id)
    assert html_button.proto.label == "HTML (offline)"


LONG_PROMPT = "The quick brown fox jumps over the lazy dog. " * 102  # 1,020 tokens on SmolLM2


@pytest.mark.slow
def test_the_exports_of_a_long_input_stay_within_the_limit():
    """SmolLM2 at 1,021 tokens: every pattern and score is 2.1 GiB, every hook ~4 GiB. The page offers
    one head's CSV, the widest NPZ that fits and the archive one layer at a time; each file is measured."""
    bundle = load_model("smollm2")
    cached = analyze(bundle, LONG_PROMPT, keep=attention_only, max_new=1)
    n = len(cached.target_tokens)
    assert n > 1000
    choices = AX.scopes(AX.patterns_of(cached))
    assert choices[0] == ("decoder", 0, 0) and len(choices) == bundle.cfg.n_dec_layers * bundle.cfg.n_heads
    csv = AX.csv_bytes(cached, choices[0])
    assert csv.count(b"\n") == 1 + n * n
    part = AX.npz_scope(cached, choices[0])
    assert part == Scope("decoder", 0)  # one layer's patterns and scores (75 MB) fit, the whole does not
    npz = AX.npz_bytes(cached, choices[0])
    assert len(npz) <= LIMIT_BYTES + 4096 and len(_npz(npz)) == 2
    plan = model_lab.archive_scopes(bundle, len(cached.source_tokens), n)
    assert [s for s, _ in plan] == [Scope("decoder", i) for i in range(bundle.cfg.n_dec_layers)]
    scope, planned = plan[-1]
    assert planned <= LIMIT_BYTES
    data = model_lab.archive(bundle, LONG_PROMPT, None, None, 1, scope)
    assert len(data) <= LIMIT_BYTES
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.getinfo("activations.npz").file_size <= LIMIT_BYTES
        arrays = _npz(archive.read("activations.npz"))
    assert sum(a.nbytes for a in arrays.values()) == planned
    pattern = arrays[f"decoder.blocks.{scope.layer}.self_attn.hook_pattern"][0]
    np.testing.assert_allclose(pattern[3], cached.attention("decoder")[scope.layer, 3], rtol=1e-5, atol=1e-6)
