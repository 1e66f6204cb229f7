"""``python -m viz export|deck``: figures from a ``python -m model inspect`` folder, without torch.

Good input writes valid files (PNG signature and size, SVG that parses, HTML without any external
URL); bad input gives one ``error:`` line, exit status 2, and writes nothing."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from model.export.archive import activations_npz, inspect_meta
from model.run.analysis import analyze
from model.store.registry import load_model
from tests.paths import REPO_ROOT
from viz import export as E

ROOT = REPO_ROOT
TEXT = "attention"


@functools.cache
def _inspect_files() -> dict[str, bytes]:
    b = load_model("reverse")
    r = analyze(b, TEXT)
    return {"activations.npz": activations_npz(r),
            "meta.json": json.dumps(inspect_meta(b, r, TEXT), ensure_ascii=False).encode("utf-8")}




def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "viz", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


# --------------------------------------------------------------------------- good input


def test_export_html_is_one_offline_file(inspect_dir, tmp_path):
    out = tmp_path / "head.html"
    done = run("export", str(inspect_dir), "--kind", "cross", "--layer", "1", "--head", "2",
               "--format", "html", "--out", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    assert E.external_urls(html) == [] and "<script src" not in html
    meta = json.loads((inspect_dir / "meta.json").read_text())
    with np.load(inspect_dir / "activations.npz") as archive:
        pattern = archive["decoder.blocks.1.cross_attn.hook_pattern"][0, 2]
    assert pattern.shape == (len(meta["target_tokens"]), len(meta["source_tokens"]))
    assert json.dumps("layer 1 · head 2")[1:-1] in html
    # the weights drawn are the archive's: the figure built from them carries the same encoded array
    from viz.deck import heatmap_figure

    with np.load(inspect_dir / "activations.npz") as archive:
        fig = heatmap_figure(dict(archive), meta, "cross", 1, 2)
    z = [t["z"] for t in json.loads(fig.to_json())["data"] if t.get("name") != "masked"][0]
    encoded = z["bdata"] if isinstance(z, dict) else json.dumps(z)
    assert encoded.replace("/", "\\u002f") in html  # plotly writes "/" as \u002f inside a script
    assert f"wrote {out}" in done.stdout


@pytest.mark.export
@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_export_images(inspect_dir, tmp_path, fmt):
    out = tmp_path / f"head.{fmt}"
    done = run("export", str(inspect_dir), "--kind", "encoder", "--layer", "0", "--head", "0",
               "--format", fmt, "--out", str(out), "--lang", "zh")
    assert done.returncode == 0, done.stderr
    data = out.read_bytes()
    if fmt == "png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert width >= 2 * 400 and height >= 2 * 300  # 2x pixel ratio of a figure at least 400 x 300
    else:
        root = ET.fromstring(data)
        assert root.tag.endswith("svg")
        assert "注意力" in "".join(root.itertext())  # --lang zh: the figure's words in Chinese
    assert oct(out.stat().st_mode & 0o777) != oct(0o600)  # an ordinary file, not a private temp file


@pytest.mark.export
def test_export_vector_svg_has_no_raster(inspect_dir, tmp_path):
    out = tmp_path / "v.svg"
    done = run("export", str(inspect_dir), "--kind", "decoder", "--layer", "0", "--head", "1",
               "--format", "svg", "--out", str(out), "--vector")
    assert done.returncode == 0, done.stderr
    root = ET.parse(out).getroot()
    assert root.findall(".//{http://www.w3.org/2000/svg}image") == []


def test_deck_html_has_the_six_slides_offline(inspect_dir, tmp_path):
    out = tmp_path / "deck.html"
    done = run("deck", str(inspect_dir), "--out", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    assert html.count("<section") == 7 and html.count("Plotly.newPlot") == 6
    assert E.external_urls(html) == []


@pytest.mark.export
def test_deck_folder_of_pngs(inspect_dir, tmp_path):
    out = tmp_path / "slides"
    done = run("deck", str(inspect_dir), "--out", str(out), "--kind", "cross", "--layer", "1", "--head", "0")
    assert done.returncode == 0, done.stderr
    assert files_under(out) == [f"slide-{i}.png" for i in range(1, 7)]
    for p in out.iterdir():
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert files_under(tmp_path) == ["out", "out/activations.npz", "out/meta.json", "slides",
                                     *[f"slides/slide-{i}.png" for i in range(1, 7)]]  # no temp files left


def test_viz_cli_never_imports_torch(inspect_dir, tmp_path):
    code = ("import sys; from viz.__main__ import main; "
            f"rc = main(['deck', {str(inspect_dir)!r}, '--out', {str(tmp_path / 'd.html')!r}]); "
            "assert rc == 0, rc; assert 'torch' not in sys.modules, 'torch imported'")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------- bad input


@contextlib.contextmanager
def _environ(env: dict | None):
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _bad(inspect_dir: Path, tmp_path: Path, *args: str, env: dict | None = None, match: str = "",
         process: bool = False) -> str:
    """Run the command (in this process, or as ``python -m viz`` with ``process``): one ``error:`` line on
    stderr, exit status 2, nothing on stdout, and no file added anywhere under ``tmp_path``."""
    before = files_under(tmp_path)
    if process:
        done = run(*args, env=env)
        code, out, err = done.returncode, done.stdout, done.stderr
    else:
        from viz.__main__ import main

        out_buf, err_buf = io.StringIO(), io.StringIO()
        with _environ(env), contextlib.redirect_stdout(out_buf), contextlib.redirect_stderr(err_buf):
            code = main(list(args))
        out, err = out_buf.getvalue(), err_buf.getvalue()
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert match in lines[0], lines[0]
    assert out == ""
    assert files_under(tmp_path) == before, "nothing is written"
    return lines[0]


def _export(d: Path, out: Path, **over: str) -> list[str]:
    opts = {"kind": "encoder", "layer": "0", "head": "0", "format": "png", **over}
    args = ["export", str(d)]
    for k, v in opts.items():
        args += [f"--{k}", v]
    return args + ["--out", str(out)]


def test_unknown_format(inspect_dir, tmp_path):
    _bad(inspect_dir, tmp_path, *_export(inspect_dir, tmp_path / "x.gif", format="gif"),
         match="unknown format", process=True)  # also as a real process: its exit status is 2


def test_out_suffix_must_match_the_format(inspect_dir, tmp_path):
    _bad(inspect_dir, tmp_path, *_export(inspect_dir, tmp_path / "x.svg", format="png"), match=".png")


@pytest.mark.parametrize("where", ["missing_folder", "under_a_file", "a_folder"])
def test_unwritable_path(inspect_dir, tmp_path, where):
    out = {"missing_folder": tmp_path / "nope" / "x.png", "under_a_file": inspect_dir / "meta.json" / "x.png",
           "a_folder": inspect_dir}[where]
    _bad(inspect_dir, tmp_path, *_export(inspect_dir, out))


def test_deck_into_a_missing_folder(inspect_dir, tmp_path):
    _bad(inspect_dir, tmp_path, "deck", str(inspect_dir), "--out", str(tmp_path / "nope" / "deck.html"),
         match="does not exist")
    _bad(inspect_dir, tmp_path, "deck", str(inspect_dir), "--out", str(tmp_path / "deck.pdf"),
         match="FILE.html")


@pytest.mark.parametrize("what", ["empty", "no_meta", "bad_npz", "bad_meta", "not_a_folder"])
def test_a_folder_that_is_not_an_inspect_output(inspect_dir, tmp_path, what):
    d = tmp_path / "other"
    d.mkdir()
    if what == "no_meta":
        (d / "activations.npz").write_bytes((inspect_dir / "activations.npz").read_bytes())
    elif what == "bad_npz":
        (d / "activations.npz").write_bytes(b"not a zip")
        (d / "meta.json").write_bytes((inspect_dir / "meta.json").read_bytes())
    elif what == "bad_meta":
        (d / "activations.npz").write_bytes((inspect_dir / "activations.npz").read_bytes())
        (d / "meta.json").write_text('{"model": "reverse"}')
    target = inspect_dir / "meta.json" if what == "not_a_folder" else d
    for command in (_export(target, tmp_path / "x.html", format="html"),
                    ["deck", str(target), "--out", str(tmp_path / "d.html")]):
        _bad(inspect_dir, tmp_path, *command)


@pytest.mark.parametrize("over,match", [({"layer": "2"}, "--layer 2 is out of range"),
                                        ({"layer": "-1"}, "--layer -1 is out of range"),
                                        ({"head": "4"}, "--head 4 is out of range"),
                                        ({"layer": "x"}, "invalid int value"),
                                        ({"kind": "decoderx"}, "invalid choice")])
def test_layer_or_head_out_of_range(inspect_dir, tmp_path, over, match):
    _bad(inspect_dir, tmp_path, *_export(inspect_dir, tmp_path / "x.html", format="html", **over),
         match=match)


def test_deck_head_out_of_range(inspect_dir, tmp_path):
    _bad(inspect_dir, tmp_path, "deck", str(inspect_dir), "--out", str(tmp_path / "d.html"), "--head", "9",
         match="--head 9")


def test_no_browser_says_what_to_install_and_writes_nothing(inspect_dir, tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {"BROWSER_PATH": "", "PATH": str(empty)}
    line = _bad(inspect_dir, tmp_path, *_export(inspect_dir, tmp_path / "x.png"), env=env,
                match="apt-get install chromium fonts-noto-cjk", process=True)
    assert "BROWSER_PATH=/usr/bin/chromium" in line
    _bad(inspect_dir, tmp_path, "deck", str(inspect_dir), "--out", str(tmp_path / "slides"), env=env,
         match="no Chromium found")
    # HTML needs no browser
    done = run(*_export(inspect_dir, tmp_path / "x.html", format="html"), env=env)
    assert done.returncode == 0, done.stderr
