"""``python -m model``: the parser assembled from the command groups, and ``main`` with its error handling.

Bad input ends with a one-line error on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys

from . import atlas, models, training
from .common import fail


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m model", description="Attention Lens models: run, inspect, train."
    )
    sub = p.add_subparsers(dest="command", required=True)
    for group in (models, training, atlas):  # the order `--help` lists the subcommands in
        group.add_commands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from ..data.tasks import InputError
    from ..store.problems import CheckpointError
    from ..store.registry import UnknownModelError

    expected: tuple[type[BaseException], ...] = (InputError, CheckpointError, UnknownModelError)
    try:
        from ..data.tatoeba import DataUnavailableError

        expected += (DataUnavailableError,)
    except ImportError:
        pass
    try:
        return args.fn(args)
    except expected as e:
        return fail(str(e))
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except OSError as e:  # a path the user gave that cannot be read or written
        where = f"{e.filename}: " if e.filename else ""
        return fail(f"{where}{e.strerror or e}")
    except KeyboardInterrupt:
        return 130


def _silence_stdout() -> None:
    """The reader went away (e.g. `| head -1`): stop quietly, and keep Python's exit-time flush of
    stdout from raising again."""
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
