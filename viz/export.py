"""Figures and attention tensors as files: offline HTML, PNG/SVG, a true-vector heatmap, and the
attention weights as a long CSV table.

Pure: plotly figures and numpy arrays in, bytes or text out. No torch, no streamlit.

* HTML: plotly.js is written into the file (about 4.7 MB), so it opens without any network.
  :func:`external_urls` lists what a file would fetch (tests assert it is empty).
* PNG/SVG on the server go through kaleido 1.x, which drives a Chromium found on the system
  (``BROWSER_PATH``, else ``chromium`` / ``google-chrome`` on the PATH). Nothing is installed
  silently: without a browser :func:`find_browser` raises :class:`NoBrowserError` saying what to
  install. (The app's own PNG/SVG buttons run in the user's browser and need none of this.)
* Plotly draws a heatmap inside an SVG as one embedded raster image (axes and text stay vector).
  :func:`vector_heatmap` draws one rectangle per cell instead, for small matrices in papers.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import io
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.colors import sample_colorscale

from viz import theme
from viz.heatmap import attention_heatmap
from viz.labels import label

T = TypeVar("T")

FORMATS = ("png", "svg", "html")
#: Pixel ratio of PNG files: 2x or more stays sharp on a projector and in slides.
PNG_SCALE = 2
#: Largest matrix :func:`vector_heatmap` draws (one SVG rectangle per cell).
MAX_VECTOR_CELLS = 64 * 64
#: Above this many rows the attention CSV is offered one kind or one layer at a time.
CSV_ROW_LIMIT = 1_000_000
CSV_COLUMNS = ("kind", "layer", "head", "query", "key", "query_token", "key_token", "weight")
#: Where a Chromium is looked for when BROWSER_PATH is not set.
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
INSTALL_HINT = ("PNG and SVG need a Chromium-based browser for kaleido: install Debian's `chromium` and "
                "`fonts-noto-cjk` (apt-get install chromium fonts-noto-cjk) and set "
                "BROWSER_PATH=/usr/bin/chromium; --format html needs no browser")

#: Plotly config written into exported HTML: toolbar always shown, PNG at 2x.
HTML_CONFIG = {
    "displaylogo": False,
    "displayModeBar": True,
    "toImageButtonOptions": {"format": "png", "scale": PNG_SCALE, "filename": "attention-lens"},
}


class NoBrowserError(RuntimeError):
    """No Chromium for server-side PNG/SVG; the message says what to install."""


class BrowserRunError(NoBrowserError):
    """The Chromium found could not draw the figure (it would not start, or closed, or kaleido failed)."""


# --------------------------------------------------------------------------- HTML


_URL_ATTR = re.compile(r"""(?:src|href|action|poster|data)\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]+)""", re.I)
_CSS_URL = re.compile(r"""(?:url\(|@import\s+)["']?\s*((?:https?:)?//[^"')\s]+)""", re.I)


def external_urls(html: str) -> list[str]:
    """URLs the page would load by itself: ``src``/``href``/… attributes and CSS ``url()`` / ``@import``
    pointing off the file. (Strings inside the inlined plotly.js that are never fetched for our trace
    types, such as its map-tile addresses, are not attributes and do not count.)"""
    without_scripts = re.sub(r"<script\b[^>]*>.*?</script>", "<script></script>", html, flags=re.S | re.I)
    found = _URL_ATTR.findall(without_scripts) + _CSS_URL.findall(without_scripts)
    tags = re.findall(r"<script\b[^>]*\bsrc\s*=\s*[\"']?([^\"'\s>]+)", html, flags=re.I)
    return found + [t for t in tags if t not in found]


def figure_div(fig: go.Figure, div_id: str | None = None) -> str:
    """One figure as an HTML ``<div>`` + its script, without plotly.js (see :func:`standalone_html`)."""
    return pio.to_html(fig, include_plotlyjs=False, full_html=False, config=HTML_CONFIG, div_id=div_id,
                       include_mathjax=False, validate=False)


def _page(title: str, body: str, *, lang: str, style: str = "", script: str = "") -> str:
    plotly_js = _plotly_js()
    safe_title = _escape(title)
    return (
        f'<!DOCTYPE html>\n<html lang="{"zh-Hans" if lang == "zh" else "en"}">\n<head>\n'
        '<meta charset="utf-8">\n'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:; "
        "font-src data:\">\n"
        f"<title>{safe_title}</title>\n<style>body{{font-family:{theme.FONT_FAMILY};margin:0;"
        f"background:#fff;color:#222}}{style}</style>\n"
        f"<script>{plotly_js}</script>\n</head>\n<body>\n{body}\n{script}\n</body>\n</html>\n"
    )


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def _escape(text: str) -> str:
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def standalone_html(fig: go.Figure, *, title: str = "Attention Lens", lang: str = "en") -> str:
    """The figure as one HTML file that works offline: plotly.js inlined, no request leaves it (a
    Content-Security-Policy forbids any), the toolbar's PNG button at 2x."""
    body = f'<div style="padding:16px">{figure_div(fig, "figure")}</div>'
    return _page(title, body, lang=lang)


_DECK_STYLE = (
    "section{min-height:100vh;box-sizing:border-box;padding:24px 32px;border-bottom:1px solid #ddd}"
    "h1{font-size:28px;margin:0 0 4px}h2{font-size:34px;margin:0 0 8px}p{font-size:24px;margin:4px 0}"
    ".hint{color:#666;font-size:18px}"
)
_DECK_SCRIPT = """<script>
(function () {
  var slides = Array.prototype.slice.call(document.querySelectorAll('section'));
  var at = 0;
  function go(i) { at = Math.max(0, Math.min(slides.length - 1, i)); slides[at].scrollIntoView(); }
  document.addEventListener('keydown', function (e) {
    if (e.key === 'ArrowRight' || e.key === 'PageDown') { go(at + 1); e.preventDefault(); }
    if (e.key === 'ArrowLeft' || e.key === 'PageUp') { go(at - 1); e.preventDefault(); }
  });
})();
</script>"""


def deck_html(slides: Sequence[tuple[str, Sequence[str], go.Figure]], *, title: str, subtitle: str = "",
              lang: str = "en") -> str:
    """Slides (title, lines of text, figure) as one offline HTML file: one section per slide, ← → and
    PageUp/PageDown step through them; plotly.js inlined once."""
    parts = [f'<section id="slide-0"><h1>{_escape(title)}</h1><p>{_escape(subtitle)}</p>'
             f'<p class="hint">{_escape(label(lang, "deck.html.hint"))}</p></section>']
    for i, (heading, lines, fig) in enumerate(slides, start=1):
        text = "".join(f"<p>{_escape(line)}</p>" for line in lines)
        parts.append(f'<section id="slide-{i}"><h2>{_escape(heading)}</h2>{text}'
                     f"{figure_div(fig, f'figure-{i}')}</section>")
    return _page(title, "\n".join(parts), lang=lang, style=_DECK_STYLE, script=_DECK_SCRIPT)


# --------------------------------------------------------------------------- PNG / SVG


def find_browser() -> str:
    """The Chromium kaleido should drive: ``BROWSER_PATH`` if set (it must exist), else the first of
    :data:`BROWSER_NAMES` on the PATH. Raises :class:`NoBrowserError` saying what to install."""
    given = os.environ.get("BROWSER_PATH", "").strip()
    if given:
        if Path(given).is_file() and os.access(given, os.X_OK):
            return given
        raise NoBrowserError(f"BROWSER_PATH={given} is not an executable file; {INSTALL_HINT}")
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise NoBrowserError(f"no Chromium found; {INSTALL_HINT}")


_ANSWERED: set[str] = set()  # browsers that answered --version in this process (asked once each)


def _browser_problem(browser: str) -> str | None:
    """Why ``browser --version`` fails (None: it answers). kaleido, given a program that is no browser
    (``/bin/false``), races with it: it raises one of several errors, or hangs. Asked first, such a
    program is refused at once, with the same error every time."""
    if browser in _ANSWERED:
        return None
    try:
        done = subprocess.run([browser, "--version"], capture_output=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return f"`{browser} --version` did not answer within 60 s"
    except OSError as e:
        return e.strerror or str(e)
    if done.returncode:
        return f"`{browser} --version` exited with status {done.returncode}"
    _ANSWERED.add(browser)
    return None


def _kaleido_ready(fmt: str) -> None:
    browser = find_browser()
    problem = _browser_problem(browser)
    if problem:
        raise BrowserRunError(f"cannot draw {fmt.upper()}: the browser at {browser} failed ({problem})")
    os.environ["BROWSER_PATH"] = browser
    try:
        import kaleido  # noqa: F401
    except ImportError as e:  # pragma: no cover - a dependency of the project
        raise NoBrowserError("the Python package kaleido (1.x) is missing: "
                             "pip install 'kaleido>=1,<2'") from e


#: Times a render is tried when the browser's page was not ready (see :func:`_rendered`).
RENDER_TRIES = 3


def _page_not_ready(error: BaseException) -> bool:
    """kaleido (1.5) can send the figure to a tab whose drawing script has not loaded yet: on a busy
    machine the page's JavaScript context it picks is still the blank one. The call then fails with
    ``kaleido_scopes is not defined``; a fresh browser draws the same figure."""
    return type(error).__name__ == "JavascriptError" and "kaleido_scopes is not defined" in str(error)


def _rendered(fmt: str, draw: Callable[[], T]) -> T:
    """``draw()`` under :func:`_browser_failures`, tried again (up to :data:`RENDER_TRIES` in all) when the
    browser's page was not ready yet."""
    for attempt in range(1, RENDER_TRIES + 1):
        try:
            with _browser_failures(fmt):
                return draw()
        except BrowserRunError as e:
            if attempt == RENDER_TRIES or not _page_not_ready(e.__cause__):
                raise
    raise AssertionError("unreachable")  # pragma: no cover


@contextlib.contextmanager
def _browser_failures(fmt: str) -> Iterator[None]:
    """kaleido's and choreographer's errors (a browser that exits at once, closes, or cannot draw) as one
    :class:`BrowserRunError` naming the browser, so callers handle them like a missing browser."""
    from choreographer.errors import ChannelClosedError
    from kaleido._kaleido_tab._errors import JavascriptError
    from kaleido.errors import BrowserClosedError, BrowserFailedError, ChromeNotFoundError, KaleidoError

    try:
        yield
    except (BrowserClosedError, BrowserFailedError, ChromeNotFoundError, ChannelClosedError,
            KaleidoError, JavascriptError) as e:
        first = next((str(a) for a in e.args if str(a).strip()), type(e).__name__)
        reason = " ".join(first.split())
        raise BrowserRunError(f"cannot draw {fmt.upper()}: the browser at {os.environ.get('BROWSER_PATH')} "
                              f"failed ({reason})") from e


def figure_size(fig: go.Figure) -> tuple[int, int]:
    """The figure's own width and height in layout pixels (for a figure that sets none, 1100 x 650)."""
    return int(fig.layout.width or 1100), int(fig.layout.height or 650)


def figure_image(fig: go.Figure, fmt: str, *, scale: float = PNG_SCALE) -> bytes:
    """PNG (at ``scale``x) or SVG bytes of a figure, rendered by kaleido in a Chromium (~2.5 s a call)."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"image format must be png or svg, got {fmt!r}")
    _kaleido_ready(fmt)
    width, height = figure_size(fig)
    return _rendered(fmt, lambda: pio.to_image(fig, format=fmt, scale=scale if fmt == "png" else 1,
                                               width=width, height=height, validate=False))


def write_figure_images(figs: Sequence[go.Figure], paths: Sequence[Path], fmt: str = "png", *,
                        scale: float = PNG_SCALE) -> None:
    """Several figures written in one browser session (much faster than one call each)."""
    if len(figs) != len(paths):
        raise ValueError(f"{len(figs)} figures but {len(paths)} paths")
    if fmt not in ("png", "svg"):
        raise ValueError(f"image format must be png or svg, got {fmt!r}")
    _kaleido_ready(fmt)
    sizes = [figure_size(f) for f in figs]
    before = [_file_state(Path(p)) for p in paths]
    todo = list(range(len(figs)))
    # kaleido's write_images has returned without writing a file (seen once in ~100 suite runs, on a loaded
    # machine): the figures whose file did not appear are drawn once more, then it is an error
    for _ in range(2):
        _rendered(fmt, functools.partial(
            pio.write_images, [figs[i] for i in todo], [str(paths[i]) for i in todo], format=fmt,
            scale=scale if fmt == "png" else 1, width=[sizes[i][0] for i in todo],
            height=[sizes[i][1] for i in todo], validate=False))
        todo = [i for i in todo if _file_state(Path(paths[i])) in (None, before[i])]
        if not todo:
            return
    names = ", ".join(Path(paths[i]).name for i in todo)
    raise BrowserRunError(f"the browser wrote no {fmt.upper()} for {names} (tried twice)")


def _file_state(path: Path) -> tuple[int, int] | None:
    """(size, modification time in ns) of a non-empty file, None when there is none."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_size, stat.st_mtime_ns) if stat.st_size else None


# --------------------------------------------------------------------------- vector heatmap


def vector_heatmap(pattern_2d: np.ndarray, query_tokens: Sequence[str], key_tokens: Sequence[str],
                   mask_2d: np.ndarray | None = None, *, title: str = "", zmax: float = 1.0,
                   lang: str = "en") -> go.Figure:
    """The single-head heatmap drawn as one filled rectangle per cell (layout shapes), so an SVG of it
    is vector throughout (plotly's own heatmap is one embedded raster image there). Masked cells
    (``mask_2d`` True, or a non-finite weight) are drawn in the mask grey. At most
    :data:`MAX_VECTOR_CELLS` cells. Axes and title are those of :func:`viz.attention_heatmap` on the
    same data; the colour bar and hover come from invisible markers at the cell centres."""
    p = np.asarray(pattern_2d, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"pattern must be [query, key], got shape {p.shape}")
    if p.size > MAX_VECTOR_CELLS:
        raise ValueError(f"{p.shape[0]}x{p.shape[1]} cells is more than the {MAX_VECTOR_CELLS} a vector "
                         "heatmap draws; use the raster heatmap")
    masked = ~np.isfinite(p)
    if mask_2d is not None:
        m = np.asarray(mask_2d, dtype=bool)
        if m.shape != p.shape:
            raise ValueError(f"mask has shape {m.shape}, pattern {p.shape}")
        masked |= m
    base = attention_heatmap(np.where(masked, 0.0, p).astype(np.float32), query_tokens, key_tokens,
                             mask_2d=masked, title=title, zmax=zmax,
                             subtitle=label(lang, "export.vector.subtitle"), lang=lang)
    top = float(zmax) if zmax else (float(np.max(np.where(masked, 0.0, p))) or 1.0)
    values = np.clip(np.where(masked, 0.0, p) / top, 0.0, 1.0)
    colours = sample_colorscale(theme.SEQUENTIAL, [float(v) for v in values.ravel()])
    n_q, n_k = p.shape
    shapes = []
    for i in range(n_q):
        for j in range(n_k):
            fill = theme.MASK_COLOR if masked[i, j] else colours[i * n_k + j]
            shapes.append({"type": "rect", "xref": "x", "yref": "y", "layer": "below",
                           "x0": j - 0.5, "x1": j + 0.5, "y0": i - 0.5, "y1": i + 0.5,
                           "line": {"width": 0}, "fillcolor": fill})
    weight = next(tr for tr in base.data if tr.type == "heatmap" and tr.colorbar is not None
                  and tr.showscale is not False)
    qq, kk = np.indices(p.shape)
    markers = go.Scatter(
        x=kk.ravel(), y=qq.ravel(), mode="markers", name="cells",
        marker={"color": np.where(masked, 0.0, p).ravel(), "colorscale": theme.SEQUENTIAL, "cmin": 0,
                "cmax": top, "opacity": 0, "size": 12, "showscale": True,
                "colorbar": weight.colorbar.to_plotly_json()},
        customdata=np.where(masked.ravel(), "masked", ""),
        hovertemplate="q %{y} · k %{x}: %{marker.color:.4f} %{customdata}<extra></extra>",
        showlegend=False,
    )
    fig = go.Figure([markers], layout=base.layout)
    fig.update_layout(shapes=shapes, plot_bgcolor="rgba(0,0,0,0)")
    return fig


# --------------------------------------------------------------------------- attention tables


def csv_row_count(patterns: Mapping[str, np.ndarray]) -> int:
    """Rows of the long table of ``patterns`` (kind -> [layer, head, query, key])."""
    return int(sum(np.asarray(p).size for p in patterns.values()))


def attention_csv(patterns: Mapping[str, np.ndarray],
                  tokens: Mapping[str, tuple[Sequence[str], Sequence[str]]], *,
                  limit: int = CSV_ROW_LIMIT, first_layer: Mapping[str, int] | None = None) -> bytes:
    """The attention weights as a long CSV table: kind, layer, head, query, key (positions), the two
    tokens, and the weight (float32, written as the shortest text that reads back bit-exact).

    ``patterns``: kind -> [layer, head, query, key]; ``tokens``: kind -> (query tokens, key tokens).
    ``first_layer``: kind -> the model's number of the first layer given (a slice of the layers).
    Raises ValueError above ``limit`` rows (offer one kind or one layer at a time then).
    """
    rows = csv_row_count(patterns)
    if rows > limit:
        raise ValueError(f"{rows} rows is more than {limit}: export one kind or one layer at a time")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for kind, array in patterns.items():
        a = np.asarray(array, dtype=np.float32)
        if a.ndim != 4:
            raise ValueError(f"{kind}: pattern must be [layer, head, query, key], got shape {a.shape}")
        queries, keys = tokens[kind]
        if (len(queries), len(keys)) != a.shape[2:]:
            raise ValueError(f"{kind}: {a.shape[2]}x{a.shape[3]} pattern for {len(queries)} query and "
                             f"{len(keys)} key tokens")
        n_l, n_h, n_q, n_k = a.shape
        layer, head, query, key = np.indices(a.shape).reshape(4, -1)
        layer = layer + int((first_layer or {}).get(kind, 0))
        weights = [str(w) for w in a.ravel()]  # the shortest text that reads back as the same float32
        writer.writerows(zip([kind] * a.size, layer.tolist(), head.tolist(), query.tolist(), key.tolist(),
                             [queries[q] for q in query.tolist()], [keys[k] for k in key.tolist()], weights,
                             strict=True))
    return out.getvalue().encode("utf-8")


def read_attention_csv(data: bytes) -> dict[str, np.ndarray]:
    """Back from :func:`attention_csv`: kind -> float32 [layer, head, query, key]."""
    reader = csv.DictReader(io.StringIO(data.decode("utf-8")))
    if tuple(reader.fieldnames or ()) != CSV_COLUMNS:
        raise ValueError(f"not an attention CSV: columns {reader.fieldnames}")
    cells: dict[str, list[tuple[int, int, int, int, float]]] = {}
    for row in reader:
        cells.setdefault(row["kind"], []).append(
            (int(row["layer"]), int(row["head"]), int(row["query"]), int(row["key"]), float(row["weight"])))
    out = {}
    for kind, values in cells.items():
        idx = np.array([v[:4] for v in values], dtype=np.int64)
        shape = tuple(int(m) + 1 for m in idx.max(axis=0))
        array = np.full(shape, np.nan, dtype=np.float32)
        array[tuple(idx.T)] = np.array([v[4] for v in values], dtype=np.float32)
        out[kind] = array
    return out
