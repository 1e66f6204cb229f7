"""Command line: python -m model {list,translate,inspect,train,train-pitfalls,train-variants,evaluate,export}.

Bad input ends with a one-line error on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from pathlib import Path

from .messages import render

EXIT_USAGE = 2


def _fail(message: str) -> int:
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


def _positive_int(value: str) -> int:
    """argparse type: a whole number >= 1 (``-n -5`` must not silently mean "nothing")."""
    return _whole_number(value, 1)


def _non_negative_int(value: str) -> int:
    """argparse type: a whole number >= 0."""
    return _whole_number(value, 0)


def _positive_float(value: str) -> float:
    """argparse type: a finite number > 0 (a learning rate of 0, -1 or nan trains nothing)."""
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not (x > 0 and math.isfinite(x)):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0 (got {value})")
    return x


def cmd_list(args) -> int:
    from .registry import available_models, example_input
    from .training.checkpoint import CheckpointError

    for name in available_models():
        try:
            example = example_input(name)
        except CheckpointError as e:
            # One broken folder must not hide the good ones.
            print(f"warning: model {name!r} is broken and was skipped: {e}", file=sys.stderr)
            continue
        print(f"{name}\t{example}")
    return 0


def _texts(args) -> list[str]:
    texts = list(args.texts)
    if not texts and not sys.stdin.isatty():
        # Bytes, decoded here: an undecodable line becomes text with lone surrogates, which the
        # task rejects with a message for that line instead of a traceback from the tokenizer.
        data = sys.stdin.buffer.read()
        texts = [line.rstrip("\r") for line in data.decode("utf-8", "surrogateescape").split("\n")]
        if texts and texts[-1] == "":
            texts.pop()
    return texts


def _add_strategy_args(s: argparse.ArgumentParser) -> None:
    """The decoding strategy's flags (greedy when none is given)."""
    g = s.add_argument_group("decoding strategy (default: greedy)")
    g.add_argument("--beam", type=_positive_int, default=None, metavar="N", help="beam search of width N")
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


def _strategy(args):
    """The Strategy the flags ask for; ValueError with a one-line reason for a bad combination."""
    from .decoding import Strategy

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
    a path is never taken as a name) or ``--model-dir PATH`` (a checkpoint folder of this project's
    format or a Hugging Face BERT-style folder, or a .zip of one, checked as an upload is)."""
    from .registry import UnknownModelError, load_model

    if getattr(args, "model_dir", None) is None:
        try:
            return load_model(args.model)
        except UnknownModelError as e:
            if Path(args.model).exists():
                hint = f"{args.model} is a path: to open it, use --model-dir {args.model}"
                raise UnknownModelError(f"{e} ({hint})") from None
            raise
    import tempfile

    from .user_models import extract_zip, load_user_model

    path = Path(args.model_dir).expanduser()
    if path.is_file() and path.suffix.lower() == ".zip":
        # Unpacked with the app's upload checks into a temporary folder, loaded, then deleted.
        with tempfile.TemporaryDirectory(prefix="attention-lens-") as tmp:
            extract_zip(path, Path(tmp) / "model", display=str(path))
            return load_user_model(Path(tmp) / "model", name=path.stem, display=str(path))
    return load_user_model(path, name=path.resolve().name if path.exists() else path.name, display=str(path))


def cmd_translate(args) -> int:
    from .analysis import analyze
    from .data.tasks import InputError

    texts = _texts(args)
    if not texts:
        return _fail("no text given: pass sentences as arguments or one per line on stdin")
    try:
        strategy = _strategy(args)
    except ValueError as e:
        return _fail(str(e))
    bundle = load_bundle(args)
    direction = None if args.direction == "auto" else args.direction
    status = 0
    for n, text in enumerate(texts, 1):
        try:
            result = analyze(bundle, text, direction, strategy=strategy)
        except InputError as e:
            # An empty line out keeps output lines aligned with input lines; the exit status tells.
            print(f"error: input {n}: {render(e.message)}", file=sys.stderr)
            print(flush=True)
            status = EXIT_USAGE
            continue
        for note in result.notes:
            print(f"warning: {render(note)}", file=sys.stderr)
        print(result.output_text, flush=True)
    return status


def cmd_inspect(args) -> int:
    from .analysis import activations_npz, analyze, inspect_meta

    try:
        strategy = _strategy(args)
    except ValueError as e:
        return _fail(str(e))
    bundle = load_bundle(args)
    direction = None if args.direction == "auto" else args.direction
    result = analyze(bundle, args.text, direction, target=args.target, strategy=strategy)
    for note in result.notes:
        print(f"warning: {render(note)}", file=sys.stderr)
    out = Path(args.out)
    meta = inspect_meta(bundle, result, args.text)
    files = {
        "activations.npz": activations_npz(result),
        "meta.json": json.dumps(meta, ensure_ascii=False, indent=1).encode("utf-8"),
    }
    problem = write_files(out, files)
    if problem:
        return _fail(problem)
    print(f"wrote {out / 'activations.npz'} ({len(result.activations)} arrays) and {out / 'meta.json'}")
    return 0


def delete_inside(path: Path, root: Path) -> None:
    """Delete ``path`` (a file or a folder tree) only if it lies directly inside ``root``.

    Every deletion the CLI makes goes through here: its temporary files and folders are created
    inside a folder the command owns, and a path that resolves anywhere else (``/``, ``..``, a
    symlink out) is refused with a RuntimeError instead of deleted.
    """
    root = Path(root).resolve()
    target = Path(path)
    if target.is_symlink() or target.resolve().parent != root or target.resolve() == root:
        raise RuntimeError(f"refusing to delete {path}: not directly inside {root}")
    if target.is_dir():
        shutil.rmtree(target)
    else:
        target.unlink(missing_ok=True)


def write_files(folder: Path, files: dict[str, bytes]) -> str | None:
    """Write every file into ``folder`` or none of them; returns a one-line problem, or None.

    Each file goes to a temporary name in the folder first and is renamed into place only when
    all of them are written, so a failure leaves no half-written output behind.
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


def cmd_train(args) -> int:
    from .training.presets import PRESETS, make_task, with_overrides
    from .training.train import TqdmProgress, train

    if args.preset not in PRESETS:
        return _fail(f"unknown preset {args.preset!r}; choose from {', '.join(PRESETS)}")
    if args.ship:
        # Checked before hours of training, not after.
        problem = _ship_problem(args.preset, args.force)
        if problem:
            return _fail(problem)
    preset = with_overrides(PRESETS[args.preset], steps=args.steps, threads=args.threads, lr=args.lr,
                            warmup=args.warmup)
    out = Path(args.out or f"runs/{args.preset}")
    out.mkdir(parents=True, exist_ok=True)
    if args.init_from is not None and not (out / "tokenizer.json").exists():
        # The weights only make sense with the tokenizer they were trained with.
        shutil.copyfile(Path(args.init_from) / "tokenizer.json", out / "tokenizer.json")
    task = make_task(preset, out / "tokenizer.json")
    evaluate = None
    if preset.task == "translation":
        from .training.evaluate import evaluate_model

        def evaluate(model):
            res = evaluate_model(model, task, "valid", n=args.eval_sentences)
            return {f"{d}_{k}": v for d, r in res.items() for k, v in r.items() if k in ("bleu", "chrf")}

    info = _preset_info(args.preset, preset, task)
    print(f"training {args.preset} into {out} ({preset.train.max_steps} steps)", file=sys.stderr)
    with TqdmProgress(sys.stderr) as progress:
        train(preset.model, preset.train, task, out, callback=progress, resume=args.resume,
              evaluate=evaluate, info=info, init_from=args.init_from, on_step=_snapshot_saver(preset, out),
              keep_checkpoints=args.keep_checkpoints)
    if args.ship:
        return _export(out, args.preset, preset.ship_dtype, args.test_sentences, args.force)
    return 0


def _preset_info(name: str, preset, task) -> dict:
    """What a model trained from ``preset`` says about itself in its config.json."""
    info = {
        "preset": name,
        "description": preset.description,
        "example": task.example,
        "label": preset.label or name,
        "group": preset.group,
        "order": preset.order,
        "listed": preset.listed,
        "i18n": {lang: {f: v for lang_, f, v in preset.i18n if lang_ == lang} for lang, _, _ in preset.i18n},
    }
    if preset.fault_line or preset.group == "pitfall":
        info["fault_line"] = preset.fault_line  # the one line of code the fault changes ("" = none)
    return info


def cmd_train_pitfalls(args) -> int:
    """Train every pitfall preset in turn (runs/pitfall-*), ship each, then print exact match per model."""
    from .registry import load_model
    from .training.presets import PITFALLS, PRESETS, make_task, with_overrides
    from .training.train import TqdmProgress, train

    problems = [p for p in (_ship_problem(name, args.force) for name in PITFALLS) if p]
    if problems:  # checked before any training, not after
        return _fail(problems[0])
    for name in PITFALLS:
        preset = with_overrides(PRESETS[name], steps=args.steps, threads=args.threads)
        out = Path(f"runs/{name}")
        out.mkdir(parents=True, exist_ok=True)
        task = make_task(preset, out / "tokenizer.json")
        print(f"training {name} into {out} ({preset.train.max_steps} steps)", file=sys.stderr)
        info = _preset_info(name, preset, task)
        with TqdmProgress(sys.stderr) as progress:
            train(preset.model, preset.train, task, out, callback=progress, info=info)
        status = _export(out, name, preset.ship_dtype, args.test_sentences, True)
        if status:
            return status
    print("model\ttest exact match\tchrF\tn")
    for name in PITFALLS:
        r = load_model(name).metrics["results"]["task"]
        print(f"{name}\t{r['exact_match']:.3f}\t{r['chrf']:.1f}\t{r['n']}")
    return 0


def _snapshot_saver(preset, out: Path):
    """The on_step callback saving the preset's weight snapshots into the run folder (None if it has none)."""
    if not preset.snapshots:
        return None
    from .training.snapshots import SnapshotSaver, snapshot_steps

    return SnapshotSaver(out, snapshot_steps(preset.train.max_steps, preset.snapshots))


def cmd_train_variants(args) -> int:
    """Train the architecture variants one after another (runs/variant-*; --resume carries each run on from
    its last checkpoint), ship each, then print each one's training time and test exact match."""
    import time

    from .registry import load_model
    from .training.presets import PRESETS, VARIANTS, make_task, with_overrides
    from .training.train import TqdmProgress, train

    names = VARIANTS if not args.only else [n for n in VARIANTS if n.removeprefix("variant-") in args.only]
    unknown = sorted(set(args.only or ()) - {n.removeprefix("variant-") for n in VARIANTS})
    if unknown:
        return _fail(f"unknown variant {unknown[0]!r}; choose from "
                     + ", ".join(n.removeprefix("variant-") for n in VARIANTS))
    problems = [p for p in (_ship_problem(name, args.force) for name in names) if p]
    if problems:  # checked before any training, not after
        return _fail(problems[0])
    seconds: dict[str, float] = {}
    for name in names:
        preset = with_overrides(PRESETS[name], steps=args.steps, threads=args.threads)
        out = Path(f"runs/{name}")
        out.mkdir(parents=True, exist_ok=True)
        task = make_task(preset, out / "tokenizer.json")
        print(f"training {name} into {out} ({preset.train.max_steps} steps)", file=sys.stderr)
        start = time.perf_counter()
        with TqdmProgress(sys.stderr) as progress:
            train(preset.model, preset.train, task, out, callback=progress, resume=args.resume,
                  info=_preset_info(name, preset, task), on_step=_snapshot_saver(preset, out))
        seconds[name] = time.perf_counter() - start
        status = _export(out, name, preset.ship_dtype, args.test_sentences, True)
        if status:
            return status
    print("model\ttraining s (this run)\ttest exact match\tchrF\tn")
    for name in names:
        r = load_model(name).metrics["results"]["task"]
        print(f"{name}\t{seconds[name]:.0f}\t{r['exact_match']:.3f}\t{r['chrf']:.1f}\t{r['n']}")
    return 0


def _ship_problem(name: str, force: bool) -> str | None:
    """Why ``name`` cannot be shipped into the models folder now (None if it can)."""
    from .registry import MODELS_DIR, UnknownModelError, check_model_name

    try:
        check_model_name(name)
    except UnknownModelError as e:
        return str(e)
    dest = MODELS_DIR / name
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        return f"{dest} exists and is not a plain folder; not touching it"
    if dest.exists() and not force:
        return f"a model named {name!r} exists in {MODELS_DIR}; pass --force to replace it"
    return None


def _install_model(staged: Path, name: str) -> Path:
    """Move a fully written model folder into the models folder as ``name``.

    Both ``staged`` and the old model (moved aside first) live directly inside MODELS_DIR, so the
    only folder this can ever delete is the replaced model's, inside the models folder.
    """
    import tempfile

    from .registry import MODELS_DIR, check_model_name

    models = MODELS_DIR.resolve()
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


def _export(run_dir: Path, name: str, dtype_name: str, test_sentences: int | None, force: bool) -> int:
    import tempfile

    import torch

    from .registry import MODELS_DIR
    from .training.checkpoint import load_checkpoint, save_checkpoint
    from .training.evaluate import evaluate_model
    from .training.snapshots import copy_snapshots, evaluate_snapshots, snapshot_files

    problem = _ship_problem(name, force)
    if problem:
        return _fail(problem)
    bundle = load_checkpoint(run_dir)
    dtype = {"float32": torch.float32, "float16": torch.float16}[dtype_name]
    # Evaluate the weights exactly as shipped (float16 rounding included).
    shipped = {k: v.to(dtype).to(torch.float32) for k, v in bundle.model.state_dict().items()}
    bundle.model.load_state_dict(shipped)
    print(f"evaluating {name} on the test split ...", file=sys.stderr)
    per_step = ("time", "step_losses", "step_grad_norms")  # the per-step arrays stay in history.json
    curve = [{k: v for k, v in r.items() if k not in per_step} for r in bundle.history if "valid_loss" in r]
    metrics = {"split": "test", "step": bundle.info.get("step"), "weights_dtype": dtype_name,
               "results": evaluate_model(bundle.model, bundle.task, "test", n=test_sentences),
               "training_curve": curve}
    snapshots = snapshot_files(run_dir)
    if snapshots:  # each weight snapshot evaluated as stored (float16), for the training scrubber
        print(f"evaluating {len(snapshots)} snapshots of {name} ...", file=sys.stderr)
        metrics["snapshots"] = evaluate_snapshots(bundle.cfg, bundle.task, snapshots, test_sentences)
    info = {k: v for k, v in bundle.info.items() if k != "final"}
    MODELS_DIR.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{name}.new-", dir=MODELS_DIR))
    try:
        save_checkpoint(staged, bundle.model, bundle.task, info=info, history=bundle.history, metrics=metrics,
                        dtype=dtype)
        copy_snapshots(run_dir, staged, bundle.info.get("step"))
        dest = _install_model(staged, name)
    finally:
        if staged.exists():
            delete_inside(staged, MODELS_DIR)
    print(json.dumps(metrics["results"], indent=1))
    print(f"shipped {run_dir} as {dest}", file=sys.stderr)
    return 0


def cmd_export(args) -> int:
    from .training.presets import PRESETS

    dtype = args.dtype or (PRESETS[args.name].ship_dtype if args.name in PRESETS else "float32")
    return _export(Path(args.run), args.name, dtype, args.test_sentences, args.force)


def cmd_evaluate(args) -> int:
    from .training.evaluate import evaluate_model

    try:
        strategy = _strategy(args)
    except ValueError as e:
        return _fail(str(e))
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    bundle = load_bundle(args)
    results = evaluate_model(bundle.model, bundle.task, args.split, n=args.n, strategy=strategy)
    print(f"# {args.split} split, decoding: {strategy.param}", file=sys.stderr)
    for direction, r in results.items():
        figures = [f"BLEU {r['bleu']:.2f}"] if "bleu" in r else []
        figures += [f"chrF {r['chrf']:.2f}", f"exact match {r['exact_match']:.3f}", f"n {r['n']}"]
        print("\t".join([direction, *figures]))
    return 0


def cmd_average(args) -> int:
    """Average a run's last kept checkpoints into a new checkpoint folder (never into an existing one)."""
    import torch

    from .training.average import average_last
    from .training.checkpoint import load_checkpoint, save_checkpoint

    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        return _fail(f"{out} already exists and is not an empty folder; choose a new --out")
    bundle = load_checkpoint(Path(args.run))
    model, steps = average_last(bundle, Path(args.run), args.last)
    info = {k: v for k, v in bundle.info.items() if k != "final"}
    info["averaged_steps"] = steps
    out.mkdir(parents=True, exist_ok=True)
    dtype = {"float32": torch.float32, "float16": torch.float16}[args.dtype]
    if args.dtype != "float32":  # stored as it will ship: evaluations of this folder see the rounding
        info["weights_dtype"] = args.dtype
    save_checkpoint(out, model, bundle.task, info=info, history=bundle.history, dtype=dtype)
    print(f"averaged steps {', '.join(map(str, steps))} of {args.run} into {out}", file=sys.stderr)
    return 0


def cmd_significance(args) -> int:
    """Paired bootstrap (sacrebleu) of a candidate checkpoint against a baseline on one split."""
    from .training.checkpoint import load_checkpoint
    from .training.significance import compare_models

    try:
        strategy = _strategy(args)
    except ValueError as e:
        return _fail(str(e))
    baseline, candidate = load_checkpoint(Path(args.baseline)), load_checkpoint(Path(args.candidate))
    if baseline.task.to_dict() != candidate.task.to_dict() or (Path(args.baseline) / "tokenizer.json").read_bytes() \
            != (Path(args.candidate) / "tokenizer.json").read_bytes():
        return _fail("the two checkpoints do not share a task and tokenizer; a paired test needs the same inputs")
    results = compare_models(baseline.model, candidate.model, baseline.task, args.split, args.n, strategy,
                             args.samples)
    print(f"# {args.split} split, decoding: {strategy.param}, paired bootstrap with {args.samples} resamples",
          file=sys.stderr)
    print("direction\tmetric\tbaseline\tcandidate\tdelta\tp\tcandidate 95% CI ±")
    for direction, metrics in results.items():
        for metric, r in metrics.items():
            print(f"{direction}\t{metric}\t{r['baseline']:.2f}\t{r['candidate']:.2f}\t{r['delta']:+.2f}\t"
                  f"{r['p_value']:.4f}\t{r['ci95']:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"split": args.split, "decoding": strategy.param,
                                               "results": results}, indent=1))
    return 0


def cmd_atlas(args) -> int:
    """Compute (or read from runs/atlas/) a model's head atlas and print each head's roles."""
    import torch

    from .atlas import AtlasError, load_or_compute

    torch.set_num_threads(args.threads)
    bundle = load_bundle(args)
    last = [-1]

    def progress(done: int, total: int) -> None:
        if done != last[0]:
            last[0] = done
            print(f"\ratlas of {bundle.name}: {done}/{total} sentences", end="", file=sys.stderr, flush=True)

    try:
        atlas, cached = load_or_compute(bundle, args.sentences, progress=progress, force=args.force)
    except AtlasError as e:
        return _fail(str(e))
    print(file=sys.stderr)
    how = "read from disk" if cached else f"computed in {atlas.seconds:.1f} s"
    print(f"# {atlas.model}: {atlas.dataset}; {how}", file=sys.stderr)
    print("kind\tlayer\thead\troles\tentropy\tmax weight\tsink share\talignment")
    for kind in atlas.kinds:
        for layer in range(atlas.layer_counts[kind]):
            for head in range(atlas.n_heads):
                roles = ",".join(f"{r.name}({r.value:.2f}>={r.threshold:g})"
                                 for r in atlas.roles(kind, layer, head))
                figures = [atlas.stat(s, kind, layer, head) for s in ("entropy", "max_weight", "sink_share",
                                                                     "alignment")]
                print("\t".join([kind, str(layer), str(head), roles or "-", *(f"{v:.3f}" for v in figures)]))
    return 0


def _model_args(s: argparse.ArgumentParser) -> None:
    """--model NAME or --model-dir PATH (one of them), for every subcommand that runs a model."""
    which = s.add_mutually_exclusive_group()
    which.add_argument("--model", default="default", help="a model's plain name (see `list`)")
    which.add_argument(
        "--model-dir", default=None, metavar="PATH",
        help="a checkpoint folder of your own (config.json, model.safetensors, tokenizer.json; or a "
        "Hugging Face BERT-style folder), or a .zip of one; safetensors only, never pickle",
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m model", description="Attention Lens models: run, inspect, train."
    )
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("list", help="each model's name and an example input, tab-separated")
    s.set_defaults(fn=cmd_list)

    s = sub.add_parser("translate", help="print the model's output for each text (arguments or stdin lines)")
    _model_args(s)
    s.add_argument("--direction", default="auto", choices=["auto", "zh->en", "en->zh"])
    s.add_argument("texts", nargs="*")
    _add_strategy_args(s)
    s.set_defaults(fn=cmd_translate)

    s = sub.add_parser("inspect", help="write every hooked tensor (npz) and meta.json for one input")
    _model_args(s)
    s.add_argument("--text", required=True)
    s.add_argument("--target", default=None, help="teacher-force this output instead of decoding")
    s.add_argument("--direction", default="auto", choices=["auto", "zh->en", "en->zh"])
    s.add_argument("--out", required=True)
    _add_strategy_args(s)
    s.set_defaults(fn=cmd_inspect)

    s = sub.add_parser("train", help="train a preset (default, reverse, copy, sort)")
    s.add_argument("--preset", required=True)
    s.add_argument("--out", default=None, help="run folder (default runs/PRESET)")
    s.add_argument("--resume", action="store_true", help="continue from the run folder's last checkpoint")
    s.add_argument(
        "--init-from",
        type=Path,
        default=None,
        help="start from this checkpoint's weights (e.g. assets/models/default) with a fresh schedule",
    )
    s.add_argument("--steps", type=_positive_int, default=None, help="override the preset's optimiser steps")
    s.add_argument("--threads", type=_positive_int, default=None)
    s.add_argument("--lr", type=_positive_float, default=None, help="override the preset's peak learning rate")
    s.add_argument("--warmup", type=_non_negative_int, default=None, help="override the preset's warmup steps")
    s.add_argument("--keep-checkpoints", action="store_true",
                   help="keep every checkpoint's weights in RUN/checkpoints/ (for `average`)")
    s.add_argument(
        "--ship", action="store_true", help="evaluate on the test split and copy into assets/models/"
    )
    s.add_argument("--force", action="store_true", help="with --ship: replace a model of the same name")
    s.add_argument("--eval-sentences", type=_positive_int, default=100,
                   help="validation sentences per direction at each eval")
    s.add_argument(
        "--test-sentences", type=_positive_int, default=None, help="limit test sentences when shipping"
    )
    s.set_defaults(fn=cmd_train)

    s = sub.add_parser(
        "train-pitfalls",
        help="train and ship the pitfall lab (reverse with one fault each), then print exact match per model",
    )
    s.add_argument("--force", action="store_true", help="replace pitfall models already shipped")
    s.add_argument("--steps", type=_positive_int, default=None, help="override every preset's steps")
    s.add_argument("--threads", type=_positive_int, default=None)
    s.add_argument(
        "--test-sentences", type=_positive_int, default=None, help="limit test words when shipping"
    )
    s.set_defaults(fn=cmd_train_pitfalls)

    s = sub.add_parser(
        "train-variants",
        help="train and ship the architecture variants (reverse, one change each; the base with snapshots), "
        "one after another, then print each one's time and test exact match",
    )
    s.add_argument("--force", action="store_true", help="replace variant models already shipped")
    s.add_argument("--resume", action="store_true", help="carry each run on from its last checkpoint")
    s.add_argument("--only", nargs="+", default=None, metavar="VARIANT",
                   help="train only these (e.g. base post-ln); default: all")
    s.add_argument("--steps", type=_positive_int, default=None, help="override every preset's steps")
    s.add_argument("--threads", type=_positive_int, default=None)
    s.add_argument(
        "--test-sentences", type=_positive_int, default=None, help="limit test words when shipping"
    )
    s.set_defaults(fn=cmd_train_variants)

    s = sub.add_parser(
        "export", help="evaluate a run folder on the test split and ship it into assets/models/"
    )
    s.add_argument("--run", required=True)
    s.add_argument("--name", required=True, help="plain model name (a folder directly in assets/models/)")
    s.add_argument("--dtype", choices=["float32", "float16"], default=None)
    s.add_argument("--test-sentences", type=_positive_int, default=None)
    s.add_argument("--force", action="store_true", help="replace a model of the same name")
    s.set_defaults(fn=cmd_export)

    s = sub.add_parser("average", help="average a run's last kept checkpoints into a new checkpoint folder")
    s.add_argument("--run", required=True, help="run folder trained with --keep-checkpoints")
    s.add_argument("--last", type=_positive_int, default=5, help="how many of the last checkpoints")
    s.add_argument("--out", required=True, help="new (or empty) folder for the averaged checkpoint")
    s.add_argument("--dtype", choices=["float32", "float16"], default="float32",
                   help="store the weights as (float16: exactly as the model would ship)")
    s.set_defaults(fn=cmd_average)

    s = sub.add_parser("significance",
                       help="paired bootstrap (sacrebleu) of a candidate checkpoint against a baseline")
    s.add_argument("--baseline", required=True, help="checkpoint folder, e.g. assets/models/default")
    s.add_argument("--candidate", required=True, help="checkpoint folder of the same task and tokenizer")
    s.add_argument("--split", default="test", choices=["valid", "test"])
    s.add_argument("-n", type=_positive_int, default=None, help="pairs per direction (default: all)")
    s.add_argument("--samples", type=_positive_int, default=1000, help="bootstrap resamples")
    s.add_argument("--json", default=None, help="also write the figures to this file")
    _add_strategy_args(s)
    s.set_defaults(fn=cmd_significance)

    s = sub.add_parser("evaluate", help="BLEU / chrF per direction on a split")
    _model_args(s)
    s.add_argument("--split", default="test", choices=["train", "valid", "test"])
    s.add_argument("-n", type=_positive_int, default=None, help="pairs per direction (default: all)")
    s.add_argument("--threads", type=_positive_int, default=None,
                   help="torch CPU threads (default: torch's; use 1 next to another torch process)")
    _add_strategy_args(s)
    s.set_defaults(fn=cmd_evaluate)

    s = sub.add_parser("atlas", help="each head's statistics and roles over the test split "
                       "(cached in runs/atlas/)")
    _model_args(s)
    s.add_argument("--sentences", type=_positive_int, default=None,
                   help="translation: sentences sampled from the test split (default 200); "
                   "didactic: all test words unless fewer are asked for")
    s.add_argument("--force", action="store_true", help="recompute even when runs/atlas/ holds it")
    s.add_argument("--threads", type=_positive_int, default=1, help="torch threads (default 1, as the app)")
    s.set_defaults(fn=cmd_atlas)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from .data.tasks import InputError
    from .registry import UnknownModelError
    from .training.checkpoint import CheckpointError

    expected: tuple[type[BaseException], ...] = (InputError, CheckpointError, UnknownModelError)
    try:
        from .data.tatoeba import DataUnavailableError

        expected += (DataUnavailableError,)
    except ImportError:
        pass
    try:
        return args.fn(args)
    except expected as e:
        return _fail(str(e))
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except OSError as e:  # a path the user gave that cannot be read or written
        where = f"{e.filename}: " if e.filename else ""
        return _fail(f"{where}{e.strerror or e}")
    except KeyboardInterrupt:
        return 130


def _silence_stdout() -> None:
    """The reader went away (e.g. `| head -1`): stop quietly, and keep Python's exit-time flush of
    stdout from raising again."""
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
