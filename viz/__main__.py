"""Command line: figures from a ``python -m model inspect`` folder, without torch.

    python -m viz export DIR --kind {encoder,decoder,cross} --layer L --head H \\
        --format {png,svg,html} --out FILE [--vector]
    python -m viz deck DIR --out FILE.html          # the six slides' figures, one offline HTML file
    python -m viz deck DIR --out FOLDER             # the same as slide-1.png … slide-6.png (--format svg)

``DIR`` holds ``activations.npz`` and ``meta.json``. ``--lang en|zh`` picks the figure words.
PNG/SVG are rendered by kaleido in a Chromium (``BROWSER_PATH``, else ``chromium`` on the PATH);
without one the command says what to install. HTML needs no browser and opens offline.
Bad input (unknown format, unwritable path, a folder that is not an inspect output or whose files do
not fit together, layer or head out of range, a browser that fails) gives one line ``error: …``, exit
status 2, and writes nothing. The folder is read and checked by :mod:`viz.inspect_folder`.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from model.core.files import atomic_write, temporary_prefix
from viz.inspect_folder import KINDS, UsageError, check_deck, check_head, n_layers, read_inspect

__all__ = ["KINDS", "UsageError", "check_head", "main", "n_layers", "read_inspect"]
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not argparse's usage block
        raise UsageError(message)


# --------------------------------------------------------------------------- writing


def _cannot_write(out: object, e: OSError) -> UsageError:
    return UsageError(f"cannot write {out} ({e.strerror or e})")


def check_out_file(out: str) -> Path:
    """The --out file, checked before any work: its folder exists and takes a new file of this name (a
    probe of the temporary file :func:`write_output` will make, removed at once)."""
    path = Path(out)
    try:  # a name too long for the file system fails even is_dir()
        if path.is_dir():
            raise UsageError(f"--out {out} is a folder; give a file name")
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.is_dir():
            raise UsageError(f"cannot write {out}: folder {parent} does not exist")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise UsageError(f"cannot write {out}: folder {parent} is not writable")
        if path.exists() and not os.access(path, os.W_OK):
            raise UsageError(f"cannot write {out}: the file is not writable")
        fd, probe = tempfile.mkstemp(prefix=temporary_prefix(path), suffix=".tmp", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:  # /proc, /sys, a name over NAME_MAX: access() says yes, creating says no
        raise _cannot_write(out, e) from e
    return path


def check_out_folder(out: str) -> Path:
    """The --out folder of a deck of PNG/SVG files: absent or a folder, in a folder that takes new ones."""
    path = Path(out)
    try:
        parent = path.parent if str(path.parent) else Path(".")
        if path.exists() and not path.is_dir():
            raise UsageError(f"--out {out} exists and is not a folder")
        if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            raise UsageError(f"cannot write {out}: folder {parent} does not exist or is not writable")
        Path(tempfile.mkdtemp(prefix=".viz-deck-", dir=parent)).rmdir()
    except OSError as e:
        raise _cannot_write(out, e) from e
    return path


def write_output(path: Path, data: bytes) -> None:
    """``data`` to ``path`` atomically; an OSError (disk full, a folder gone meanwhile) as a UsageError."""
    try:
        atomic_write(path, data)
    except OSError as e:
        raise _cannot_write(path, e) from e


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
    write_output(out, data)
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
        check_out_folder(args.out)
    activations, meta = read_inspect(args.dir)
    check_head(activations, meta, args.kind, args.layer, args.head)
    check_deck(activations, meta, args.kind, args.layer)
    figs = [for_projector(f) for f in deck_figures(activations, meta, kind=args.kind, layer=args.layer,
                                                   head=args.head, lang=args.lang)]
    titles = [label(args.lang, f"deck.slide.{i}") for i in range(1, len(figs) + 1)]
    if as_html:
        sentence = label(args.lang, "deck.html.sentence", text=meta.get("input_text", ""))
        html = E.deck_html([(t, [], f) for t, f in zip(titles, figs, strict=True)],
                           title=label(args.lang, "deck.html.title"), subtitle=sentence, lang=args.lang)
        data = html.encode("utf-8")
        write_output(out, data)
        print(f"wrote {out} ({len(data):,} bytes, {len(figs)} slides, works offline)")
        return 0
    fmt = args.format or "png"
    if fmt not in ("png", "svg"):
        raise UsageError(f"a folder of slides is png or svg, not {fmt!r} (use --out FILE.html for html)")
    E.find_browser()  # before anything is written
    parent = out.parent if str(out.parent) else Path(".")
    names = [f"slide-{i}.{fmt}" for i in range(1, len(figs) + 1)]
    try:
        staging = Path(tempfile.mkdtemp(prefix=".viz-deck-", dir=parent))
        try:
            E.write_figure_images(figs, [staging / n for n in names], fmt)
            out.mkdir(exist_ok=True)
            for n in names:
                os.replace(staging / n, out / n)
        finally:  # the staging folder was made above and holds at most the files named here
            for n in names:
                (staging / n).unlink(missing_ok=True)
            staging.rmdir()
    except OSError as e:
        raise _cannot_write(out, e) from e
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


def _quiet_renderer() -> None:
    # kaleido and choreographer log warnings to stderr on their own ("Browser is being closed by watchdog"
    # when it fails to start); a failed render is reported here, as the one error line.
    for name in ("choreographer", "kaleido"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def main(argv: list[str] | None = None) -> int:
    _quiet_renderer()
    try:
        args = build_parser().parse_args(argv)
        return args.fn(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as e:  # noqa: BLE001 - the renderer's own failures, as one line
        from viz.export import NoBrowserError

        if isinstance(e, NoBrowserError):  # also a browser that starts and fails (BrowserRunError)
            print(f"error: {e}", file=sys.stderr)
            return EXIT_USAGE
        raise


if __name__ == "__main__":
    sys.exit(main())
