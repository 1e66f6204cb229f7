"""A training run -> a model folder in the shipped models folder (``assets/models/``).

:func:`ship` evaluates a run's last checkpoint on the test split exactly as it will ship (float16
rounding included), writes it with its metrics and snapshots into a staging folder inside the models
folder, and moves that into place as the model's name. :func:`ship_problem` says beforehand why a
name cannot be shipped, so that a command can refuse before hours of training rather than after.

The models folder is read from :mod:`.sources.shipped` at call time (``shipped.MODELS_DIR``), so
whoever points it elsewhere (``ATTENTION_LENS_MODELS``, a test) is obeyed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from ..core.files import delete_inside
from .registry import UnknownModelError, check_model_name
from .sources import shipped


class ShipError(ValueError):
    """A model cannot be shipped under this name now (the message is one line, for the user)."""


class Shipped(NamedTuple):
    dest: Path  # the model's folder in the models folder
    metrics: dict  # what was written as its metrics.json ("results": the test figures)


def ship_problem(name: str, force: bool) -> str | None:
    """Why ``name`` cannot be shipped into the models folder now (None if it can)."""
    models_dir = shipped.MODELS_DIR
    try:
        check_model_name(name)
    except UnknownModelError as e:
        return str(e)
    dest = models_dir / name
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        return f"{dest} exists and is not a plain folder; not touching it"
    if dest.exists() and not force:
        return f"a model named {name!r} exists in {models_dir}; pass --force to replace it"
    return None


def install_model(staged: Path, name: str) -> Path:
    """Move a fully written model folder into the models folder as ``name``; returns its new path.

    Both ``staged`` and the old model (moved aside first) live directly inside MODELS_DIR, so the
    only folder this can ever delete is the replaced model's, inside the models folder.
    """
    import tempfile

    models = shipped.MODELS_DIR.resolve()
    dest = models / check_model_name(name)
    if staged.resolve().parent != models or dest.parent != models:
        raise RuntimeError(f"refusing to install {staged} as {dest}: not inside {models}")
    # The staging folder (mkdtemp) and atomically written files (mkstemp) are private (0700 / 0600):
    # a shipped model is for whoever runs the app, so it becomes readable like any file of the project.
    for path in [staged, *staged.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    if not dest.exists():
        staged.replace(dest)
        return dest
    old = Path(tempfile.mkdtemp(prefix=f".{name}.old-", dir=models))
    dest.replace(old / name)
    staged.replace(dest)
    delete_inside(old, models)
    return dest


def share_tokenizer(staged: Path, name: str) -> str | None:
    """When the staged model's tokenizer.json is byte for byte one that another shipped model holds,
    drop it and name that model (and the file's hash) in config.json instead; returns that model."""
    from ..core.files import atomic_write_json, file_digest
    from .bundle import read_json

    source = shipped.shipped()
    if Path(staged).resolve().parent != source.directory.resolve():
        raise RuntimeError(f"refusing to edit {staged}: not a folder staged inside {source.directory}")
    own = staged / "tokenizer.json"
    if not own.is_file():
        return None
    digest = file_digest(own)
    for other in source.names():
        theirs = source.directory / other / "tokenizer.json"
        if other != name and theirs.is_file() and theirs.stat().st_size == own.stat().st_size \
                and file_digest(theirs) == digest:
            config = read_json(staged / "config.json")
            atomic_write_json(staged / "config.json", {**config, "tokenizer_from": other,
                                                       "tokenizer_sha256": digest})
            delete_inside(own, staged)  # the staged copy only, inside the staged folder
            return other
    return None


def ship(run_dir: Path, name: str, dtype_name: str, test_sentences: int | None, force: bool, *,
         log: Callable[[str], None] | None = None) -> Shipped:
    """Evaluate the run folder's checkpoint on the test split and install it as model ``name``.

    ``dtype_name`` ("float32" or "float16") is how the weights are stored, and evaluated; at most
    ``test_sentences`` per direction (None: all). ``force`` replaces a model of that name. ``log``
    gets a line as each evaluation starts. Raises :class:`ShipError` (before any work) when
    :func:`ship_problem` finds the name cannot be shipped.
    """
    import tempfile

    import torch

    from ..training.evaluate import evaluate_model
    from ..training.lm_evaluate import language_model_results
    from ..training.snapshots import copy_snapshots, evaluate_snapshots, snapshot_files
    from .formats.own import load_checkpoint, save_checkpoint

    log = log or (lambda line: None)
    problem = ship_problem(name, force)
    if problem:
        raise ShipError(problem)
    bundle = load_checkpoint(run_dir)
    dtype = {"float32": torch.float32, "float16": torch.float16}[dtype_name]
    # Evaluate the weights exactly as shipped (float16 rounding included).
    as_shipped = {k: v.to(dtype).to(torch.float32) for k, v in bundle.model.state_dict().items()}
    bundle.model.load_state_dict(as_shipped)
    log(f"evaluating {name} on the test split ...")
    per_step = ("time", "step_losses", "step_grad_norms")  # the per-step arrays stay in history.json
    curve = [{k: v for k, v in r.items() if k not in per_step} for r in bundle.history if "valid_loss" in r]
    metrics = {"split": "test", "step": bundle.info.get("step"), "weights_dtype": dtype_name,
               "results": (language_model_results if bundle.cfg.decoder_only else evaluate_model)(
                   bundle.model, bundle.task, "test", n=test_sentences),
               "training_curve": curve}
    snapshots = snapshot_files(run_dir)
    if snapshots:  # each weight snapshot evaluated as stored (float16), for the training scrubber
        log(f"evaluating {len(snapshots)} snapshots of {name} ...")
        metrics["snapshots"] = evaluate_snapshots(bundle.cfg, bundle.task, snapshots, test_sentences)
    info = {k: v for k, v in bundle.info.items() if k != "final"}
    models_dir = shipped.MODELS_DIR
    models_dir.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{name}.new-", dir=models_dir))
    try:
        save_checkpoint(staged, bundle.model, bundle.task, info=info, history=bundle.history, metrics=metrics,
                        dtype=dtype)
        copy_snapshots(run_dir, staged, bundle.info.get("step"))
        share_tokenizer(staged, name)
        dest = install_model(staged, name)
    finally:
        if staged.exists():
            delete_inside(staged, models_dir)
    return Shipped(dest, metrics)
