"""Command line: figures from a ``python -m model inspect`` folder, without torch.

    python -m viz export DIR --kind {encoder,decoder,cross} --layer L --head H \\
        --format {png,svg,html} --out FILE [--vector]
    python -m viz deck DIR --out FILE.html          # the six slides' figures, one offline HTML file
    python -m viz deck DIR --out FOLDER             # the same as slide-1.png … slide-6.png (--format svg)

``DIR`` holds ``activations.npz`` and ``meta.json``. ``--lang en|zh`` picks the figure words.
PNG/SVG are rendered by kaleido in a Chromium (``BROWSER_PATH``, else ``chromium`` on the PATH);
without one the command says what to install. HTML needs no browser and opens offline.
Bad input (unknown format, unwritable path, a folder that is not an inspect output, layer or head
out of range) gives one line ``error: …``, exit status 2, and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from model.files import atomic_write

EXIT_USAGE = 2
KINDS = ("encoder", "decoder", "cross")


class UsageError(Exception):
    """Bad input: printed as one ``error:`` line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not argparse's usage block
        raise UsageError(message)


# --------------------------------------------------------------------------- reading the folder


def read_inspect(folder: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    """(activations, meta) of an inspect output folder; UsageError when it is not one."""
    d = Path(folder)
    if not d.is_dir():
        raise UsageError(f"{folder} is not a folder (expected the --out folder of `python -m model inspect`)")
    npz, meta_file = d / "activations.npz", d / "meta.json"
    if not npz.is_file() or not meta_file.is_file():
        raise UsageError(f"{folder} is not a `python -m model inspect` output: it needs activations.npz "
                         "and meta.json")
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        with np.load(npz, allow_pickle=False) as archive:
            activations = {k: archive[k] for k in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {folder}: {e}") from e
    needed = ("source_tokens", "target_tokens", "config", "shape_trace")
    if not isinstance(meta, dict) or any(k not in meta for k in needed):
        raise UsageError(f"{meta_file} is not an inspect meta.json (needs {', '.join(needed)})")
    return activations, meta


def n_layers(activations: dict, kind: str) -> int:
    from viz.deck import attention_path

    n = 0
    while f"{attention_path(kind, n)}.hook_pattern" in activations:
        n += 1
    return n


def check_head(activations: dict, meta: dict, kind: str, layer: int, head: int) -> None:
    layers = n_layers(activations, kind)
    if layers == 0:
        raise UsageError(f"this model has no {kind} attention (kinds here: "
                         f"{', '.join(k for k in KINDS if n_layers(activations, k)) or 'none'})")
    if not 0 <= layer < layers:
        raise UsageError(f"--layer {layer} is out of range: {kind} attention has layers 0..{layers - 1}")
    from viz.deck import pattern_of

    heads = int(np.asarray(activations[f"{_path(kind, layer)}.hook_pattern"]).shape[1])
    if not 0 <= head < heads:
        raise UsageError(f"--head {head} is out of range: heads 0..{heads - 1}")
    pattern_of(activations, kind, layer, head)  # the array is there and indexable


def _path(kind: str, layer: int) -> str:
    from viz.deck import attention_path

    return attention_path(kind, layer)


# --------------------------------------------------------------------------- writing


def check_out_file(out: str) -> Path:
    path = Path(out)
    if path.is_dir():
        raise UsageError(f"--out {out} is a folder; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"cannot write {out}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write {out}: folder {parent} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"cannot write {out}: the file is not writable")
    return path




def _check_suffix(path: Path, fmt: str) -> None:
    if path.suffix.lower() != f".{fmt}":
        raise UsageError(f"--out {path} does not end in .{fmt} (the --format)")


# --------------------------------------------------------------------------- commands


def cmd_export(args) -> int:
    from viz import export as E
    from viz.deck import heatmap_figure

    if args.format not in E.FORMATS:
        raise UsageError(f"unknown format {args.format!r}: choose png, svg or html")
    out = check_out_file(args.out)
    _check_suffix(out, args.format)
    activations, meta = read_inspect(args.dir)
    check_head(activations, meta, args.kind, args.layer, args.head)
    if args.vector:
        from viz.deck import pattern_of, scores_of, tokens_for

        queries, keys = tokens_for(meta, args.kind)
        pattern = pattern_of(activations, args.kind, args.layer, args.head)
        if pattern.size > E.MAX_VECTOR_CELLS:
            raise UsageError(f"--vector draws at most {E.MAX_VECTOR_CELLS} cells; this head has "
                             f"{pattern.size}")
        scores = scores_of(activations, args.kind, args.layer, args.head)
        mask = None if scores is None else ~np.isfinite(scores)
        fig = E.vector_heatmap(pattern, queries, keys, mask, lang=args.lang)
    else:
        fig = heatmap_figure(activations, meta, args.kind, args.layer, args.head, lang=args.lang)
    if args.format == "html":
        data = E.standalone_html(fig, lang=args.lang).encode("utf-8")
    else:
        data = E.figure_image(fig, args.format)
    atomic_write(out, data)
    print(f"wrote {out} ({len(data):,} bytes)")
    return 0


def cmd_deck(args) -> int:
    from viz import export as E
    from viz.deck import deck_figures, for_projector
    from viz.labels import label

    out = Path(args.out)
    as_html = out.suffix.lower() in (".html", ".htm")
    if as_html:
        check_out_file(args.out)
    elif out.suffix:
        raise UsageError(f"--out {args.out}: give FILE.html (one offline page) or a folder for PNG/SVG files")
    else:
        parent = out.parent if str(out.parent) else Path(".")
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {args.out} exists and is not a folder")
        if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            raise UsageError(f"cannot write {args.out}: folder {parent} does not exist or is not writable")
    activations, meta = read_inspect(args.dir)
    check_head(activations, meta, args.kind, args.layer, args.head)
    figs = [for_projector(f) for f in deck_figures(activations, meta, kind=args.kind, layer=args.layer,
                                                   head=args.head, lang=args.lang)]
    titles = [label(args.lang, f"deck.slide.{i}") for i in range(1, len(figs) + 1)]
    if as_html:
        sentence = label(args.lang, "deck.html.sentence", text=meta.get("input_text", ""))
        html = E.deck_html([(t, [], f) for t, f in zip(titles, figs, strict=True)],
                           title=label(args.lang, "deck.html.title"), subtitle=sentence, lang=args.lang)
        data = html.encode("utf-8")
        atomic_write(out, data)
        print(f"wrote {out} ({len(data):,} bytes, {len(figs)} slides, works offline)")
        return 0
    fmt = args.format or "png"
    if fmt not in ("png", "svg"):
        raise UsageError(f"a folder of slides is png or svg, not {fmt!r} (use --out FILE.html for html)")
    E.find_browser()  # before anything is written
    parent = out.parent if str(out.parent) else Path(".")
    staging = Path(tempfile.mkdtemp(prefix=".viz-deck-", dir=parent))
    try:
        names = [f"slide-{i}.{fmt}" for i in range(1, len(figs) + 1)]
        E.write_figure_images(figs, [staging / n for n in names], fmt)
        out.mkdir(exist_ok=True)
        for n in names:
            os.replace(staging / n, out / n)
    finally:
        for leftover in staging.glob("*"):
            leftover.unlink()
        staging.rmdir()
    print(f"wrote {len(names)} {fmt.upper()} files to {out}/ ({', '.join(names)})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m viz", description="Attention Lens figures from a `python -m model "
                     "inspect` folder: PNG, SVG or offline HTML.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    e = sub.add_parser("export", help="one head's heatmap as png, svg or offline html")
    e.add_argument("dir", help="folder written by `python -m model inspect --out`")
    e.add_argument("--kind", required=True, choices=KINDS)
    e.add_argument("--layer", required=True, type=int)
    e.add_argument("--head", required=True, type=int)
    e.add_argument("--format", required=True, help="png, svg or html")
    e.add_argument("--out", required=True, help="file to write")
    e.add_argument("--lang", default="en", choices=("en", "zh"))
    e.add_argument("--vector", action="store_true",
                   help="one vector rectangle per cell (SVG fully vector; small heads only)")
    e.set_defaults(fn=cmd_export)
    d = sub.add_parser("deck", help="the talk's six figures: one offline html file, or png/svg files "
                       "in a folder")
    d.add_argument("dir", help="folder written by `python -m model inspect --out`")
    d.add_argument("--out", required=True, help="FILE.html, or a folder for slide-N.png")
    d.add_argument("--format", default=None, help="png (default) or svg, for a folder")
    d.add_argument("--kind", default="encoder", choices=KINDS, help="the head of slides 1, 2 and 6")
    d.add_argument("--layer", default=0, type=int)
    d.add_argument("--head", default=0, type=int)
    d.add_argument("--lang", default="en", choices=("en", "zh"))
    d.set_defaults(fn=cmd_deck)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.fn(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as e:  # noqa: BLE001 - the renderer's own failures, as one line
        from viz.export import NoBrowserError

        if isinstance(e, NoBrowserError):
            print(f"error: {e}", file=sys.stderr)
            return EXIT_USAGE
        raise


if __name__ == "__main__":
    sys.exit(main())
