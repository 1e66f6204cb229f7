"""``python -m viz export|deck`` on hostile input: a folder crafted from a real ``python -m model inspect``
output, or an output path the system refuses. Each gives one ``error:`` line naming the file and field,
exit status 2, no traceback, and writes nothing (issue 32)."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tests.viz.test_cli import _bad, _export, files_under, run
from viz import inspect_folder

PATTERN = "encoder.blocks.0.attn.hook_pattern"




def _meta(d: Path, **changes) -> None:
    meta = json.loads((d / "meta.json").read_text(encoding="utf-8"))
    meta.update(changes)
    (d / "meta.json").write_text(json.dumps(meta), encoding="utf-8")


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, allow_pickle=True)
    return buf.getvalue()


def _declaring(shape: tuple[int, ...], dtype: str = "<f4") -> bytes:
    """A .npy member whose header declares ``shape`` but that holds no data at all."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buf.getvalue()  # the magic string and the header


def _npz(d: Path, replace: dict[str, bytes] | None = None, add: dict[str, bytes] | None = None) -> None:
    """Rewrite activations.npz with some members' .npy bytes replaced or added."""
    path = d / "activations.npz"
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    for name, data in (replace or {}).items():
        members[f"{name}.npy"] = data
    for name, data in (add or {}).items():
        members[f"{name}.npy"] = data
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)


def _html(d: Path, out: Path, **over: str) -> list[str]:
    return _export(d, out, format="html", **over)


def _deck(d: Path, out: Path, *more: str) -> list[str]:
    return ["deck", str(d), "--out", str(out), *more]


# --------------------------------------------------------------------------- output paths


def _refused(path: str) -> str:
    """What creating a file at ``path`` is refused with (root is refused later than other users)."""
    return "No such file or directory" if path.startswith("/proc") else "Permission denied"


@pytest.mark.parametrize("where", ["/proc/x.html", "/sys/x.html"])
def test_export_into_a_system_folder(inspect_dir, tmp_path, where):
    line = _bad(inspect_dir, tmp_path, *_html(inspect_dir, Path(where)))
    if os.geteuid() == 0:  # access() says yes to root; creating the file says no
        assert line == f"error: cannot write {where} ({_refused(where)})"
    else:
        assert line == f"error: cannot write {where}: folder {Path(where).parent} is not writable"
    assert not Path(where).exists()


def test_export_file_name_too_long(inspect_dir, tmp_path):
    out = tmp_path / ("a" * 300 + ".html")
    line = _bad(inspect_dir, tmp_path, *_html(inspect_dir, out))
    assert line == f"error: cannot write {out} (File name too long)"


def test_deck_into_a_system_folder(inspect_dir, tmp_path):
    line = _bad(inspect_dir, tmp_path, *_deck(inspect_dir, Path("/proc/slides")))
    if os.geteuid() == 0:
        assert line == "error: cannot write /proc/slides (No such file or directory)"
    else:
        assert line.startswith("error: cannot write /proc/slides: folder /proc does not exist or is not")
    assert not Path("/proc/slides").exists()
    out = tmp_path / ("b" * 300 + ".html")
    line = _bad(inspect_dir, tmp_path, *_deck(inspect_dir, out))
    assert line == f"error: cannot write {out} (File name too long)"


def test_writing_fails_after_the_checks(inspect_dir, tmp_path, monkeypatch):
    """An OSError while writing the file itself (disk full) is one line too, and leaves nothing."""
    import viz.__main__ as cli

    def full(path, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli, "atomic_write", full)
    out = tmp_path / "x.html"
    assert _bad(inspect_dir, tmp_path, *_html(inspect_dir, out)) == \
        f"error: cannot write {out} (No space left on device)"


# --------------------------------------------------------------------------- meta.json


def test_meta_nested_too_deeply(inspect_dir, tmp_path):
    (inspect_dir / "meta.json").write_text("[" * 100_000 + "]" * 100_000)
    for command in (_html(inspect_dir, tmp_path / "x.html"), _deck(inspect_dir, tmp_path / "d.html")):
        line = _bad(inspect_dir, tmp_path, *command)
        assert line == (f"error: cannot read {inspect_dir / 'meta.json'}: it is nested too deeply to be an "
                        "inspect meta.json")


def test_meta_too_large(inspect_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(inspect_folder, "MAX_META_BYTES", 1000)
    line = _bad(inspect_dir, tmp_path, *_html(inspect_dir, tmp_path / "x.html"))
    assert line == f"error: {inspect_dir / 'meta.json'} is larger than 1,000 bytes: not an inspect meta.json"


def test_source_tokens_shorter_than_the_pattern(inspect_dir, tmp_path):
    _meta(inspect_dir, source_tokens=["a"])
    meta, npz = inspect_dir / "meta.json", inspect_dir / "activations.npz"
    line = _bad(inspect_dir, tmp_path, *_html(inspect_dir, tmp_path / "x.html"))
    assert line == (f"error: {meta}: source_tokens has 1 tokens, but {PATTERN} in {npz} has 10 query rows")
    line = _bad(inspect_dir, tmp_path, *_deck(inspect_dir, tmp_path / "d.html", "--kind", "cross"))
    cross = "decoder.blocks.0.cross_attn.hook_pattern"
    assert line == f"error: {meta}: source_tokens has 1 tokens, but {cross} in {npz} has 10 key columns"


@pytest.mark.parametrize("field,value,why", [
    ("source_tokens", 5, "source_tokens must be a list of strings, not a number"),
    ("target_tokens", ["a", 3], "target_tokens must be a list of strings, but holds a number"),
    ("config", "x", "config must be an object, not a string"),
    ("config", {"n_enc_layers": "x"}, "config.n_enc_layers must be a whole number >= 0, not 'x'"),
    ("shape_trace", None, "shape_trace must be a list of steps, not null"),
    ("shape_trace", [7], "shape_trace[0] is a number, not an object"),
    ("shape_trace", [{"name": "a", "op": "b", "out_shape": ["x"]}],
     "shape_trace[0] has an out_shape that is not a list of integers"),
    ("input_text", ["x"], "input_text must be a string, not a list"),
])
def test_meta_field_of_the_wrong_type(inspect_dir, tmp_path, field, value, why):
    _meta(inspect_dir, **{field: value})
    for command in (_deck(inspect_dir, tmp_path / "d.html"), _html(inspect_dir, tmp_path / "x.html")):
        assert _bad(inspect_dir, tmp_path, *command) == f"error: {inspect_dir / 'meta.json'}: {why}"


def test_deck_without_the_split_merge_steps(inspect_dir, tmp_path):
    _meta(inspect_dir, shape_trace=[])
    line = _bad(inspect_dir, tmp_path, *_deck(inspect_dir, tmp_path / "d.html"))
    assert line == (f"error: {inspect_dir / 'meta.json'}: shape_trace has no usable step 'linear Q = x W_q' "
                    "of encoder.blocks.0.attn (the split-and-merge slide needs its shape and symbols)")


# --------------------------------------------------------------------------- activations.npz


def test_empty_npz(inspect_dir, tmp_path):
    (inspect_dir / "activations.npz").write_bytes(b"")
    for command in (_html(inspect_dir, tmp_path / "x.html"), _deck(inspect_dir, tmp_path / "d.html")):
        line = _bad(inspect_dir, tmp_path, *command)
        assert line == f"error: cannot read {inspect_dir / 'activations.npz'}: File is not a zip file"


@pytest.mark.parametrize("member,why", [
    (_npy(np.zeros(8, np.float32)), "has shape (8,); expected 4-D [batch, head, query, key]"),
    (_npy(np.array(["abc"] * 8)), "holds <U3 values, not numbers (object and text arrays are not read)"),
    (_npy(np.array([{"a": 1}], dtype=object)), "holds |O values, not numbers (object and text arrays are "
                                                "not read)"),
    (_declaring((1, 4, 10**6, 10**6)), "declares shape (1, 4, 1000000, 1000000) of float32 (14.6 TiB), more "
                                       "than the 1.0 GiB one array may have here"),
    (_declaring((1, 4, 10, 10)), "ends after 0 of the 1,600 bytes its header declares"),
    (b"not an array", "cannot be read (the magic string is not correct; expected b'\\x93NUMPY', "
                      "got b'not an')"),
])
def test_a_bad_pattern_member(inspect_dir, tmp_path, member, why):
    _npz(inspect_dir, replace={PATTERN: member})
    for command in (_html(inspect_dir, tmp_path / "x.html"), _deck(inspect_dir, tmp_path / "d.html")):
        line = _bad(inspect_dir, tmp_path, *command)
        assert line == f"error: {inspect_dir / 'activations.npz'}: {PATTERN} {why}"


def test_deck_member_that_does_not_fit(inspect_dir, tmp_path):
    _npz(inspect_dir, replace={"encoder.embed.hook_embed": _npy(np.zeros((1, 3, 64), np.float32))})
    line = _bad(inspect_dir, tmp_path, *_deck(inspect_dir, tmp_path / "d.html"))
    assert line == (f"error: {inspect_dir / 'meta.json'}: source_tokens has 10 tokens, but "
                    f"encoder.embed.hook_embed in {inspect_dir / 'activations.npz'} has 3 positions")


def test_the_limit_on_one_array(inspect_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(inspect_folder, "MAX_ARRAY_BYTES", 1000)
    line = _bad(inspect_dir, tmp_path, *_html(inspect_dir, tmp_path / "x.html"))
    assert line == (f"error: {inspect_dir / 'activations.npz'}: {PATTERN} declares shape (1, 4, 10, 10) of "
                    "float32 (1.6 KiB), more than the 1,000 bytes one array may have here")


def test_only_the_members_a_figure_needs_are_read(inspect_dir, tmp_path):
    """A member declaring 4 GiB (with no data behind it) that no figure uses is never read: both commands
    succeed, where reading every member would fail or allocate 4 GiB."""
    pickled = _npy(np.array([b"x"], dtype=object))
    _npz(inspect_dir, add={"junk": _declaring((2**30,))}, replace={"hook_logits": pickled})
    done = run(*_html(inspect_dir, tmp_path / "x.html"))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    done = run(*_deck(inspect_dir, tmp_path / "d.html"))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert (tmp_path / "x.html").stat().st_size > 0 and (tmp_path / "d.html").stat().st_size > 0


def test_the_archive_reads_members_lazily(inspect_dir):
    archive = inspect_folder.NpzArchive(inspect_dir / "activations.npz")
    assert PATTERN in archive and len(archive) == len(list(archive))
    assert archive.shape(PATTERN) == (1, 4, 10, 10) and archive._arrays == {}
    with np.load(inspect_dir / "activations.npz") as reference:
        assert np.array_equal(archive[PATTERN], reference[PATTERN])
    assert list(archive._arrays) == [PATTERN]


# --------------------------------------------------------------------------- a browser that fails


def test_a_browser_that_fails_at_once(inspect_dir, tmp_path):
    env = {"BROWSER_PATH": "/bin/false"}
    want = ("error: cannot draw PNG: the browser at /bin/false failed (`/bin/false --version` exited with "
            "status 1)")
    for command in (_export(inspect_dir, tmp_path / "x.png"), _deck(inspect_dir, tmp_path / "slides")):
        assert _bad(inspect_dir, tmp_path, *command, env=env, process=True) == want
    assert "slides" not in files_under(tmp_path)


def test_a_browser_that_fails_while_drawing(monkeypatch):
    """A browser that answers --version but then fails inside kaleido: its error, as BrowserRunError."""
    from choreographer.errors import BrowserFailedError, ChannelClosedError

    from viz import export as E

    monkeypatch.setenv("BROWSER_PATH", "/usr/bin/some-chromium")
    for error in (BrowserFailedError("The browser seemed to close immediately after starting.", "More."),
                  ChannelClosedError("The communication channel was\nclosed.")):
        with pytest.raises(E.BrowserRunError) as caught, E._browser_failures("svg"):
            raise error
        assert str(caught.value) == (f"cannot draw SVG: the browser at /usr/bin/some-chromium failed "
                                     f"({' '.join(str(error.args[0]).split())})")
        assert isinstance(caught.value, E.NoBrowserError)  # the command line prints it as one error line


def test_a_page_not_ready_is_drawn_again_and_other_script_errors_are_one_line(monkeypatch):
    """kaleido can run the figure in a tab whose script has not loaded (a busy machine): that render is
    tried again, up to RENDER_TRIES times; any other script error is a BrowserRunError at once."""
    from kaleido._kaleido_tab._errors import JavascriptError

    from viz import export as E

    monkeypatch.setenv("BROWSER_PATH", "/usr/bin/some-chromium")
    not_ready = "{'description': 'ReferenceError: kaleido_scopes is not defined'}"
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < E.RENDER_TRIES:
            raise JavascriptError(not_ready)
        return b"drawn"

    assert E._rendered("png", flaky) == b"drawn" and len(calls) == E.RENDER_TRIES

    def failing(message):
        def draw():
            calls.append(1)
            raise JavascriptError(message)
        return draw

    calls.clear()
    with pytest.raises(E.BrowserRunError, match="kaleido_scopes"):
        E._rendered("png", failing(not_ready))
    assert len(calls) == E.RENDER_TRIES  # gives up after the last try, with the browser's reason

    calls.clear()
    with pytest.raises(E.BrowserRunError, match="x is not a function"):
        E._rendered("svg", failing("x is not a function"))
    assert len(calls) == 1  # a different failure is not retried
