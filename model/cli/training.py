"""Commands that train, ship and measure models: train, train-pitfalls, train-variants, export,
average, significance, evaluate."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from .common import (
    add_model_args,
    add_strategy_args,
    fail,
    load_bundle,
    non_negative_int,
    parse_strategy,
    positive_float,
    positive_int,
    thread_count,
)


def _log(line: str) -> None:
    print(line, file=sys.stderr)


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


def _snapshot_saver(preset, out: Path):
    """The on_step callback saving the preset's weight snapshots into the run folder (None if it has none)."""
    if not preset.snapshots:
        return None
    from ..training.snapshots import SnapshotSaver, snapshot_steps

    return SnapshotSaver(out, snapshot_steps(preset.train.max_steps, preset.snapshots))


def _export(run_dir: Path, name: str, dtype_name: str, test_sentences: int | None, force: bool) -> int:
    """Ship a run folder as model ``name``: the test figures (JSON) on stdout, progress on stderr."""
    from ..store.shipping import ShipError, ship

    try:
        shipped = ship(run_dir, name, dtype_name, test_sentences, force, log=_log)
    except ShipError as e:
        return fail(str(e))
    print(json.dumps(shipped.metrics["results"], indent=1))
    print(f"shipped {run_dir} as {shipped.dest}", file=sys.stderr)
    return 0


def _init_from_problem(folder: Path, model_config) -> str | None:
    """Why training cannot start from ``folder``'s weights (None when it can), read from its config
    and the weights' header alone."""
    from ..store.formats.own import OWN
    from ..store.problems import CheckpointError
    from ..store.sources.shipped import tokenizer_of

    try:
        cfg = OWN.read_config(folder)
        OWN.check(folder)
        tokenizer = tokenizer_of(folder)
    except CheckpointError as e:
        return f"cannot start from {folder}: {e}"
    if not tokenizer.is_file():
        return f"cannot start from {folder}: it has no tokenizer.json"
    if cfg != model_config:
        differ = [f for f in cfg.__dataclass_fields__ if getattr(cfg, f) != getattr(model_config, f)]
        return (f"cannot start from {folder}: it holds a model with another config "
                f"({', '.join(differ)} differ from the preset's)")
    return None


def cmd_train(args) -> int:
    from ..training.presets import PRESETS, make_task, with_overrides
    from ..training.train import TqdmProgress, train

    if args.preset not in PRESETS:
        return fail(f"unknown preset {args.preset!r}; choose from {', '.join(PRESETS)}")
    if args.ship:
        from ..store.shipping import ship_problem

        # Checked before hours of training, not after.
        problem = ship_problem(args.preset, args.force)
        if problem:
            return fail(problem)
    preset = with_overrides(PRESETS[args.preset], steps=args.steps, threads=args.threads, lr=args.lr,
                            warmup=args.warmup)
    out = Path(args.out or f"runs/{args.preset}")
    if args.init_from is not None:
        problem = _init_from_problem(Path(args.init_from), preset.model)
        if problem:
            return fail(problem)  # before the run folder or its tokenizer exist
    out.mkdir(parents=True, exist_ok=True)
    if args.init_from is not None and not (out / "tokenizer.json").exists():
        # The weights only make sense with the tokenizer they were trained with.
        from ..store.sources.shipped import tokenizer_of

        shutil.copyfile(tokenizer_of(Path(args.init_from)), out / "tokenizer.json")
    task = make_task(preset, out / "tokenizer.json")
    evaluate = None
    if preset.task == "translation":
        from ..training.evaluate import evaluate_model

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


def _train_set(names: list[str], args, *, resume: bool, timed: bool, snapshots: bool) -> int:
    """Train the named presets one after another (runs/NAME), ship each (replacing a shipped one), then
    print a table of each one's test figures; ``timed`` adds each one's training time in this run,
    ``snapshots`` saves the presets' weight snapshots, ``resume`` carries each run on from its last
    checkpoint. Every name is checked for shipping before any training starts."""
    import time

    from ..store.registry import load_model
    from ..store.shipping import ship_problem
    from ..training.presets import PRESETS, make_task, with_overrides
    from ..training.train import TqdmProgress, train

    problems = [p for p in (ship_problem(name, args.force) for name in names) if p]
    if problems:  # checked before any training, not after
        return fail(problems[0])
    seconds: dict[str, float] = {}
    for name in names:
        preset = with_overrides(PRESETS[name], steps=args.steps, threads=args.threads)
        out = Path(f"runs/{name}")
        out.mkdir(parents=True, exist_ok=True)
        task = make_task(preset, out / "tokenizer.json")
        print(f"training {name} into {out} ({preset.train.max_steps} steps)", file=sys.stderr)
        start = time.perf_counter()
        with TqdmProgress(sys.stderr) as progress:
            train(preset.model, preset.train, task, out, callback=progress, resume=resume,
                  info=_preset_info(name, preset, task),
                  on_step=_snapshot_saver(preset, out) if snapshots else None)
        seconds[name] = time.perf_counter() - start
        status = _export(out, name, preset.ship_dtype, args.test_sentences, True)
        if status:
            return status
    columns = ["model", *(["training s (this run)"] if timed else []), "test exact match", "chrF", "n"]
    print("\t".join(columns))
    for name in names:
        r = load_model(name).metrics["results"]["task"]
        took = [f"{seconds[name]:.0f}"] if timed else []
        print("\t".join([name, *took, f"{r['exact_match']:.3f}", f"{r['chrf']:.1f}", f"{r['n']}"]))
    return 0


def cmd_train_pitfalls(args) -> int:
    """Train every pitfall preset in turn (runs/pitfall-*), ship each, then print exact match per model."""
    from ..training.presets import PITFALLS

    return _train_set(list(PITFALLS), args, resume=False, timed=False, snapshots=False)


def cmd_train_variants(args) -> int:
    """Train the architecture variants one after another (runs/variant-*; --resume carries each run on from
    its last checkpoint), ship each, then print each one's training time and test exact match."""
    from ..training.presets import VARIANTS

    names = VARIANTS if not args.only else [n for n in VARIANTS if n.removeprefix("variant-") in args.only]
    unknown = sorted(set(args.only or ()) - {n.removeprefix("variant-") for n in VARIANTS})
    if unknown:
        return fail(f"unknown variant {unknown[0]!r}; choose from "
                    + ", ".join(n.removeprefix("variant-") for n in VARIANTS))
    return _train_set(list(names), args, resume=args.resume, timed=True, snapshots=True)


def cmd_export(args) -> int:
    from ..training.presets import PRESETS

    dtype = args.dtype or (PRESETS[args.name].ship_dtype if args.name in PRESETS else "float32")
    return _export(Path(args.run), args.name, dtype, args.test_sentences, args.force)


def cmd_evaluate(args) -> int:
    from ..training.evaluate import evaluate_model

    try:
        strategy = parse_strategy(args)
    except ValueError as e:
        return fail(str(e))
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

    from ..store.formats.own import load_checkpoint, save_checkpoint
    from ..training.average import average_last

    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        return fail(f"{out} already exists and is not an empty folder; choose a new --out")
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
    from ..core.files import atomic_write
    from ..store.formats.own import load_checkpoint
    from ..training.significance import compare_models

    try:
        strategy = parse_strategy(args)
    except ValueError as e:
        return fail(str(e))
    baseline, candidate = load_checkpoint(Path(args.baseline)), load_checkpoint(Path(args.candidate))
    ours, theirs = Path(args.baseline) / "tokenizer.json", Path(args.candidate) / "tokenizer.json"
    if baseline.task.to_dict() != candidate.task.to_dict() or ours.read_bytes() != theirs.read_bytes():
        return fail("the two checkpoints do not share a task and tokenizer; "
                    "a paired test needs the same inputs")
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
        path = Path(args.json)
        try:
            figures = {"split": args.split, "decoding": strategy.param, "results": results}
            atomic_write(path, json.dumps(figures, indent=1))
        except OSError as e:  # named as the user gave it, not as atomic_write's temporary file
            raise OSError(e.errno, e.strerror, str(path)) from None
    return 0


def _add_train_commands(sub: argparse._SubParsersAction) -> None:
    """train, train-pitfalls and train-variants."""
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
    s.add_argument("--steps", type=positive_int, default=None, help="override the preset's optimiser steps")
    s.add_argument("--threads", type=thread_count, default=None)
    s.add_argument("--lr", type=positive_float, default=None, help="override the preset's peak learning rate")
    s.add_argument("--warmup", type=non_negative_int, default=None, help="override the preset's warmup steps")
    s.add_argument("--keep-checkpoints", action="store_true",
                   help="keep every checkpoint's weights in RUN/checkpoints/ (for `average`)")
    s.add_argument(
        "--ship", action="store_true", help="evaluate on the test split and copy into assets/models/"
    )
    s.add_argument("--force", action="store_true", help="with --ship: replace a model of the same name")
    s.add_argument("--eval-sentences", type=positive_int, default=100,
                   help="validation sentences per direction at each eval")
    s.add_argument(
        "--test-sentences", type=positive_int, default=None, help="limit test sentences when shipping"
    )
    s.set_defaults(fn=cmd_train)

    s = sub.add_parser(
        "train-pitfalls",
        help="train and ship the pitfall lab (reverse with one fault each), then print exact match per model",
    )
    s.add_argument("--force", action="store_true", help="replace pitfall models already shipped")
    s.add_argument("--steps", type=positive_int, default=None, help="override every preset's steps")
    s.add_argument("--threads", type=thread_count, default=None)
    s.add_argument(
        "--test-sentences", type=positive_int, default=None, help="limit test words when shipping"
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
    s.add_argument("--steps", type=positive_int, default=None, help="override every preset's steps")
    s.add_argument("--threads", type=thread_count, default=None)
    s.add_argument(
        "--test-sentences", type=positive_int, default=None, help="limit test words when shipping"
    )
    s.set_defaults(fn=cmd_train_variants)


def _add_run_commands(sub: argparse._SubParsersAction) -> None:
    """export, average, significance and evaluate."""
    s = sub.add_parser(
        "export", help="evaluate a run folder on the test split and ship it into assets/models/"
    )
    s.add_argument("--run", required=True)
    s.add_argument("--name", required=True, help="plain model name (a folder directly in assets/models/)")
    s.add_argument("--dtype", choices=["float32", "float16"], default=None)
    s.add_argument("--test-sentences", type=positive_int, default=None)
    s.add_argument("--force", action="store_true", help="replace a model of the same name")
    s.set_defaults(fn=cmd_export)

    s = sub.add_parser("average", help="average a run's last kept checkpoints into a new checkpoint folder")
    s.add_argument("--run", required=True, help="run folder trained with --keep-checkpoints")
    s.add_argument("--last", type=positive_int, default=5, help="how many of the last checkpoints")
    s.add_argument("--out", required=True, help="new (or empty) folder for the averaged checkpoint")
    s.add_argument("--dtype", choices=["float32", "float16"], default="float32",
                   help="store the weights as (float16: exactly as the model would ship)")
    s.set_defaults(fn=cmd_average)

    s = sub.add_parser("significance",
                       help="paired bootstrap (sacrebleu) of a candidate checkpoint against a baseline")
    s.add_argument("--baseline", required=True, help="checkpoint folder, e.g. assets/models/default")
    s.add_argument("--candidate", required=True, help="checkpoint folder of the same task and tokenizer")
    s.add_argument("--split", default="test", choices=["valid", "test"])
    s.add_argument("-n", type=positive_int, default=None, help="pairs per direction (default: all)")
    s.add_argument("--samples", type=positive_int, default=1000, help="bootstrap resamples")
    s.add_argument("--json", default=None, help="also write the figures to this file")
    add_strategy_args(s)
    s.set_defaults(fn=cmd_significance)

    s = sub.add_parser("evaluate", help="BLEU / chrF per direction on a split")
    add_model_args(s)
    s.add_argument("--split", default="test", choices=["train", "valid", "test"])
    s.add_argument("-n", type=positive_int, default=None, help="pairs per direction (default: all)")
    s.add_argument("--threads", type=thread_count, default=None,
                   help="torch CPU threads (default: torch's; use 1 next to another torch process)")
    add_strategy_args(s)
    s.set_defaults(fn=cmd_evaluate)


def add_commands(sub: argparse._SubParsersAction) -> None:
    """The training group's subcommands, in the order `--help` lists them."""
    _add_train_commands(sub)
    _add_run_commands(sub)
