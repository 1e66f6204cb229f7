"""How long Chromium takes to draw the all-heads grid of MiniLM at 512 tokens, per way of building it.

    .venv/bin/python bench/bench_grid_paint.py [--tokens 512] [--repeat 3]

For each variant of ``viz.all_heads_grid`` (hover data per cell, tile size) the figure is built from
MiniLM's real patterns, serialised as Streamlit serialises it, and drawn in a bare page with the
plotly.js that ships with plotly. The browser-side work Streamlit adds before plotly gets the figure
is replayed (JSON.parse of the spec, then a JSON.stringify, its colour replaceAll passes and a second
JSON.parse), so the times follow what the app costs. Prints JSON bytes, build seconds (server) and
the browser's median milliseconds, with ratios to the first row. Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import plotly  # noqa: E402
import plotly.io as pio  # noqa: E402

import viz  # noqa: E402
from bench.bench_long_inputs import long_text  # noqa: E402
from model.run.analysis import analyze  # noqa: E402
from model.store.registry import load_model  # noqa: E402

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
CHROMIUM = "/usr/bin/chromium"

# What Streamlit's plotly element does to a figure before plotly sees it (theme or not): parse the
# spec, stringify it, replace its theme colours (about 40 replaceAll passes), parse it again.
PAGE = """<!doctype html><html><head><meta charset="utf-8"><script>%s</script></head>
<body><div id="plot"></div><script>
window.draw = async (spec) => {
  const t0 = performance.now();
  let fig = JSON.parse(spec);
  let text = JSON.stringify(fig);
  for (let i = 0; i < 40; i++) text = text.replaceAll('#' + (100000 + i), '#' + (200000 + i));
  fig = JSON.parse(text);
  const el = document.getElementById('plot');
  Plotly.purge(el);
  await Plotly.newPlot(el, fig.data, fig.layout, {responsive: false});
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now() - t0;
};
</script></body></html>"""


def _without_cell_hover(fig):
    """The shipped grid with per-cell customdata dropped: hover shows the weight only."""
    for trace in fig.data:
        if trace.name == "attention":
            trace.customdata = None
            trace.hovertemplate = "weight %{z:.3f}<extra></extra>"
    return fig


def _one_trace_per_tile(fig):
    """The shipped grid cut into one heatmap trace per tile, each naming its layer and head in its
    hover template (no per-cell data)."""
    import numpy as np
    import plotly.graph_objects as go

    layout = viz.grid_layout_from_figure(fig)
    main = next(t for t in fig.data if t.name == "attention")
    z = np.asarray(main.z)
    tiles = []
    for li in range(layout.n_layers):
        for hi in range(layout.n_heads):
            r, c = layout.origin(li, hi)
            tiles.append(go.Heatmap(
                z=z[r:r + layout.n_q, c:c + layout.n_k], x0=c, dx=1, y0=r, dy=1,
                colorscale=main.colorscale, zmin=main.zmin, zmax=main.zmax, showscale=(li == hi == 0),
                colorbar=main.colorbar,
                hovertemplate=f"layer {li}, head {hi}<br>weight %{{z:.3f}}<extra></extra>",
                name="attention"))
    others = [t for t in fig.data if t.name != "attention"]
    fig.data = ()
    fig.add_traces(tiles + others)
    return fig


VARIANTS = [  # (name, all_heads_grid keyword arguments; "change": a function applied to the figure)
    ("as shipped", {}),
    ("hover: weight only", {"change": _without_cell_hover}),
    ("no hover", {"hover": "none"}),
    ("one trace per tile", {"change": _one_trace_per_tile}),
    ("tiles 48", {"max_tile_cells": 48}),
    ("tiles 48, weight only", {"max_tile_cells": 48, "change": _without_cell_hover}),
    ("tiles 48, one trace per tile", {"max_tile_cells": 48, "change": _one_trace_per_tile}),
]


def build(patterns, tokens, kwargs: dict) -> tuple[str, float]:
    t0 = time.perf_counter()
    change = kwargs.pop("change", None)
    fig = viz.all_heads_grid(patterns, tokens, tokens, width=1150, **kwargs)
    if change is not None:
        fig = change(fig)
    spec = pio.to_json(fig, validate=False)
    return spec, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    result = analyze(load_model("minilm"), long_text("minilm", args.tokens))
    patterns = result.attention("encoder")
    tokens = result.source_tokens
    specs = []
    for name, kwargs in VARIANTS:
        try:
            specs.append((name, *build(patterns, tokens, dict(kwargs))))
        except ValueError as e:  # a variant this version of viz does not offer
            print(f"{name}: skipped ({e})")
    page_file = ROOT / "test-artifacts" / "bench_grid_paint.html"
    page_file.parent.mkdir(parents=True, exist_ok=True)
    page_file.write_text(PAGE % PLOTLY_JS.read_text())
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless"])
        page = browser.new_page(viewport={"width": 1440, "height": 1100})
        page.goto(page_file.as_uri())
        for name, spec, build_s in specs:
            page.evaluate("(s) => window.draw(s)", spec)  # warm-up
            ms = statistics.median(page.evaluate("(s) => window.draw(s)", spec) for _ in range(args.repeat))
            rows.append((name, len(spec), build_s, ms))
        browser.close()
    page_file.unlink()
    print(f"MiniLM, {len(tokens)} tokens, {patterns.shape[0]} x {patterns.shape[1]} heads; "
          f"browser median of {args.repeat}")
    print(f"{'variant':<30} {'JSON MB':>8} {'ratio':>6} {'build s':>8} {'browser ms':>11} {'ratio':>6}")
    base_bytes, base_ms = rows[0][1], rows[0][3]
    for name, n, build_s, ms in rows:
        ratios = f"{n / base_bytes:6.2f} {build_s:8.2f} {ms:11.0f} {ms / base_ms:6.2f}"
        print(f"{name:<30} {n / 1e6:8.2f} {ratios}")


if __name__ == "__main__":
    main()
