"""Run ``python -m model`` or ``python -m viz`` inside the test process: the same ``main(argv)`` a
user's command reaches, with its own stdin, stdout and stderr, and its exit status (argparse's
``SystemExit`` included). Starting a new Python + torch costs seconds, so the tests of argument
handling and error messages run here; a few true end-to-end subprocess runs stay (marked ``e2e``).
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Run:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    def __str__(self) -> str:  # shown by failing asserts
        return f"$ python -m ... {' '.join(self.args)}\nrc={self.returncode}\n{self.stdout}\n{self.stderr}"


def _stream(data: bytes = b"") -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="strict", newline=None,
                            write_through=True)


def run_main(main: Callable[[list[str]], int], args: list[str], stdin: bytes | str = b"",
             models_dir: Path | None = None) -> Run:
    """``main(args)`` with ``stdin`` as its standard input; ``models_dir`` stands in for
    ``ATTENTION_LENS_MODELS`` (the shipped models' folder) while it runs."""
    from model.store.sources import shipped as registry

    if isinstance(stdin, str):
        stdin = stdin.encode("utf-8")
    out, err, inp = _stream(), _stream(), _stream(stdin)
    saved = sys.stdin, sys.stdout, sys.stderr, registry.MODELS_DIR
    sys.stdin, sys.stdout, sys.stderr = inp, out, err
    if models_dir is not None:
        registry.MODELS_DIR = Path(models_dir)
    try:
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse's usage errors and --help
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        with contextlib.suppress(ValueError):
            out.flush()
            err.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr, registry.MODELS_DIR = saved
    text = lambda s: s.buffer.getvalue().decode("utf-8", "replace")  # noqa: E731
    return Run(list(args), int(code or 0), text(out), text(err))


def model_cli(args: list[str], **kw) -> Run:
    from model.__main__ import main

    return run_main(main, args, **kw)


def viz_cli(args: list[str], **kw) -> Run:
    from viz.__main__ import main

    return run_main(main, args, **kw)
