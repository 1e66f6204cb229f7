"""What every command group shares: the error exit, argparse types, the model and decoding-strategy
flags, the model a command runs, input texts, and writing output files all or nothing."""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from ..core.files import delete_inside

EXIT_USAGE = 2


def fail(message: str) -> int:
    """Print a one-line error on stderr; returns the usage exit status."""
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _whole_number(value: str, minimum: int) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if n < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum} (got {n})")
    return n


def positive_int(value: str) -> int:
    """argparse type: a whole number >= 1 (``-n -5`` must not silently mean "nothing")."""
    return _whole_number(value, 1)


def machine_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def thread_count(value: str) -> int:
    """argparse type for every --threads: 1 up to this machine's cores (more threads only fight over
    the same cores, and a huge count makes torch allocate per-thread state until memory runs out)."""
    n = _whole_number(value, 1)
    cores = machine_cores()
    if n > cores:
        raise argparse.ArgumentTypeError(f"must be at most this machine's {cores} cores (got {n})")
    return n


def non_negative_int(value: str) -> int:
    """argparse type: a whole number >= 0."""
    return _whole_number(value, 0)


def positive_float(value: str) -> float:
    """argparse type: a finite number > 0 (a learning rate of 0, -1 or nan trains nothing)."""
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not (x > 0 and math.isfinite(x)):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0 (got {value})")
    return x


def add_model_args(s: argparse.ArgumentParser) -> None:
    """--model NAME or --model-dir PATH (one of them), for every subcommand that runs a model."""
    which = s.add_mutually_exclusive_group()
    which.add_argument("--model", default="default",
                       help="a model's plain name (see `list`), or ORG/NAME of a model in the local "
                       "Hugging Face cache (never downloaded)")
    which.add_argument(
        "--model-dir", default=None, metavar="PATH",
        help="a checkpoint folder of your own (config.json, model.safetensors, tokenizer.json; or a "
        "Hugging Face BERT-style folder), or a .zip of one; safetensors only, never pickle",
    )


def add_strategy_args(s: argparse.ArgumentParser) -> None:
    """The decoding strategy's flags (greedy when none is given)."""
    g = s.add_argument_group("decoding strategy (default: greedy)")
    g.add_argument("--beam", type=positive_int, default=None, metavar="N", help="beam search of width N")
    g.add_argument("--length-penalty", type=float, default=None, metavar="A",
                   help="with --beam: rank hypotheses by log p / length**A (default 1; 0 = plain sum)")
    g.add_argument("--sample", action="store_true", help="sample each token instead")
    g.add_argument("--temperature", type=float, default=None, metavar="T", help="with --sample (default 1)")
    g.add_argument("--top-k", type=int, default=None, metavar="K",
                   help="with --sample: only the K most likely tokens (default 0: no limit)")
    g.add_argument("--top-p", type=float, default=None, metavar="P",
                   help="with --sample: the fewest most likely tokens reaching probability P (default 1)")
    g.add_argument("--seed", type=int, default=None, metavar="S",
                   help="with --sample: random seed; the same seed gives the same sample (default 0)")


def parse_strategy(args):
    """The Strategy the flags ask for; ValueError with a one-line reason for a bad combination."""
    from ..decoding.strategy import Strategy

    sampling = {"temperature": args.temperature, "top_k": args.top_k, "top_p": args.top_p, "seed": args.seed}
    if args.beam is not None and args.sample:
        raise ValueError("choose one of --beam and --sample")
    if args.length_penalty is not None and args.beam is None:
        raise ValueError("--length-penalty goes with --beam N")
    given = [f"--{k.replace('_', '-')}" for k, v in sampling.items() if v is not None]
    if given and not args.sample:
        raise ValueError(f"{given[0]} goes with --sample")
    if args.beam is not None:
        return Strategy.make("beam", beam=args.beam, length_penalty=args.length_penalty)
    if args.sample:
        return Strategy.make("sample", **sampling)
    return Strategy()


def load_bundle(args):
    """The model a command runs: ``--model NAME`` (a plain name, looked up only among the model sources;
    a path is never taken as a name; ``ORG/NAME`` is looked up in the local Hugging Face cache only) or
    ``--model-dir PATH`` (a checkpoint folder of this project's format or a Hugging Face folder
    model/store/formats/ reads, or a .zip of one, checked as an upload is)."""
    from ..store.registry import UnknownModelError, load_model
    from ..store.sources.hf_cache import is_hub_name, load_hub_model

    if getattr(args, "model_dir", None) is None:
        if is_hub_name(args.model):
            return load_hub_model(args.model)
        try:
            return load_model(args.model)
        except UnknownModelError as e:
            if Path(args.model).exists():
                hint = f"{args.model} is a path: to open it, use --model-dir {args.model}"
                raise UnknownModelError(f"{e} ({hint})") from None
            raise
    import tempfile

    from ..store.upload_files import extract_zip
    from ..store.user_folders import load_user_model

    path = Path(args.model_dir).expanduser()
    if path.is_file() and path.suffix.lower() == ".zip":
        # Unpacked with the app's upload checks into a temporary folder, loaded, then deleted.
        with tempfile.TemporaryDirectory(prefix="attention-lens-") as tmp:
            extract_zip(path, Path(tmp) / "model", display=str(path))
            return load_user_model(Path(tmp) / "model", name=path.stem, display=str(path))
    name = path.resolve().name if path.exists() else path.name
    if name.lower().endswith(".gguf"):
        name = name[: -len(".gguf")]
    return load_user_model(path, name=name, display=str(path))


def read_texts(args) -> list[str]:
    """The texts to run: the arguments, or else (when stdin is not a terminal) stdin's lines."""
    texts = list(args.texts)
    if not texts and not sys.stdin.isatty():
        # Bytes, decoded here: an undecodable line becomes text with lone surrogates, which the
        # task rejects with a message for that line instead of a traceback from the tokenizer.
        data = sys.stdin.buffer.read()
        texts = [line.rstrip("\r") for line in data.decode("utf-8", "surrogateescape").split("\n")]
        if texts and texts[-1] == "":
            texts.pop()
    return texts


def write_files(folder: Path, files: dict[str, bytes]) -> str | None:
    """Write every file into ``folder`` or none of them; returns a one-line problem, or None.

    Each file goes to a temporary name in the folder first and is renamed into place only when
    all of them are written, so a failure leaves no half-written output behind. (Not
    :func:`model.core.files.atomic_write`, which renames each file as soon as it is written.)
    """
    import os
    import tempfile

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return f"cannot create the output folder {folder}: {e.strerror or e}"
    for name in files:
        if (folder / name).is_dir():
            return f"cannot write {folder / name}: a folder of that name is in the way"
    written: dict[str, str] = {}
    try:
        for name, data in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
            written[name] = tmp
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        for name, tmp in written.items():
            os.replace(tmp, folder / name)
    except OSError as e:
        for tmp in written.values():
            delete_inside(Path(tmp), folder)
        return f"cannot write into {folder}: {e.strerror or e}"
    return None
