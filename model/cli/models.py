"""Commands that run a model: list, translate, generate, inspect."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..core.messages import render
from .common import (
    EXIT_USAGE,
    add_model_args,
    add_strategy_args,
    fail,
    load_bundle,
    parse_strategy,
    positive_int,
    read_texts,
    write_files,
)


def cmd_list(args) -> int:
    from ..store.problems import CheckpointError
    from ..store.registry import available_models, example_input

    for name in available_models():
        try:
            example = example_input(name)
        except CheckpointError as e:
            # One broken folder must not hide the good ones.
            print(f"warning: model {name!r} is broken and was skipped: {e}", file=sys.stderr)
            continue
        print(f"{name}\t{example}")
    return 0


def _texts_to_run(args, what: str):
    """(texts, strategy, bundle) of a command that runs a model on each text, or its exit status
    when there is nothing to run or the strategy's flags do not go together."""
    texts = read_texts(args)
    if not texts:
        return fail(f"no text given: pass {what} as arguments or one per line on stdin")
    try:
        strategy = parse_strategy(args)
    except ValueError as e:
        return fail(str(e))
    return texts, strategy, load_bundle(args)


def cmd_translate(args) -> int:
    from ..data.tasks import InputError
    from ..run.analysis import analyze

    found = _texts_to_run(args, "sentences")
    if isinstance(found, int):
        return found
    texts, strategy, bundle = found
    direction = None if args.direction == "auto" else args.direction
    max_new = args.max_new_tokens
    said_cut: set[int] = set()  # the rooms already named (inputs of one direction share theirs)
    status = 0
    for n, text in enumerate(texts, 1):
        try:
            result = analyze(bundle, text, direction, strategy=strategy, max_new=max_new)
        except InputError as e:
            # An empty line out keeps output lines aligned with input lines; the exit status tells.
            print(f"error: input {n}: {render(e.message)}", file=sys.stderr)
            print(flush=True)
            status = EXIT_USAGE
            continue
        before = len(result.prepared.prefix)  # the decoder's start (a language model's prompt)
        room = bundle.cfg.max_len - before
        if max_new is not None and max_new > room and room not in said_cut:
            said_cut.add(room)
            print(f"warning: --max-new-tokens {max_new} was cut to {room}: the model reads at most "
                  f"{bundle.cfg.max_len} tokens, {before} of them before the output", file=sys.stderr)
        for note in result.notes:
            print(f"warning: {render(note)}", file=sys.stderr)
        print(result.output_text, flush=True)
    return status


def _no_chat_form(bundle) -> str:
    """One line: the model has no chat form, why when its template gives none, and what to do."""
    reason = getattr(bundle.task, "chat_reason", None)
    return f"{bundle.name} has no chat template{f' ({reason})' if reason else ''}: use --form raw"


def cmd_generate(args) -> int:
    """A decoder-only model's continuation of each text (raw, or answered in chat form)."""
    from ..data.tasks import InputError
    from ..decoding.decoders import decode
    from ..decoding.strategy import DEFAULT_NEW_TOKENS

    found = _texts_to_run(args, "prompts")
    if isinstance(found, int):
        return found
    texts, strategy, bundle = found
    if not bundle.cfg.decoder_only:
        return fail(f"{bundle.name} is not a decoder-only language model: use translate")
    if args.form == "chat" and "chat" not in bundle.task.directions:
        return fail(_no_chat_form(bundle))
    max_new = args.max_new_tokens or DEFAULT_NEW_TOKENS
    status = 0
    for n, text in enumerate(texts, 1):
        try:
            p = bundle.task.prepare(text, bundle.cfg.max_len, None if args.form == "raw" else "chat")
        except InputError as e:
            print(f"error: input {n}: {render(e.message)}", file=sys.stderr)
            print(flush=True)
            status = EXIT_USAGE
            continue
        eos = bundle.tokenizer.eos_id
        with bundle.model.lock:
            ids = decode(bundle.model, [p.source_ids], [p.prefix], eos, strategy, max_new)[0]
        for note in p.notes:
            print(f"warning: {render(note)}", file=sys.stderr)
        print(bundle.tokenizer.decode(ids), flush=True)
    return status


def _megabytes(value: str) -> float:
    """argparse type: a size in MiB above 0 (fractions allowed)."""
    try:
        mb = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not mb > 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be above 0")
    return mb


def _inspect_scope(args):
    """The --kind/--layer/--head scope of inspect, or a one-line problem."""
    from ..export.scopes import Scope

    if args.head is not None and args.layer is None:
        return "--head needs --layer"
    if args.layer is not None and args.kind is None:
        return "--layer needs --kind (encoder, decoder or cross)"
    return Scope(args.kind, args.layer, args.head)


def cmd_inspect(args) -> int:
    from ..export.scopes import per_position
    from ..run.analysis import analyze

    try:
        strategy = parse_strategy(args)
    except ValueError as e:
        return fail(str(e))
    scope = _inspect_scope(args)
    if isinstance(scope, str):
        return fail(scope)
    bundle = load_bundle(args)
    direction = None if args.direction == "auto" else args.direction
    if args.form is not None:
        if direction is not None:
            return fail("--form is for language models, --direction for translation: give one of them")
        direction = None if args.form == "raw" else args.form
        if direction == "chat" and "chat" not in bundle.task.directions:
            return fail(_no_chat_form(bundle))  # as generate says it
    counts = {k: n for k, n in bundle.model.attention_layer_counts().items() if n > 0}
    if scope.kind is not None and scope.kind not in counts:
        return fail(f"{bundle.name} has no {scope.kind} attention: choose --kind from {', '.join(counts)}")
    if scope.layer is not None and not 0 <= scope.layer < counts[scope.kind]:
        return fail(f"--layer must be from 0 to {counts[scope.kind] - 1}")
    if scope.head is not None and not 0 <= scope.head < bundle.cfg.n_heads:
        return fail(f"--head must be from 0 to {bundle.cfg.n_heads - 1}")
    result = analyze(bundle, args.text, direction, target=args.target, strategy=strategy,
                     max_new=args.max_new_tokens, keep=lambda h: per_position(h) and scope.holds_hook(h))
    try:
        files = inspect_files(bundle, result, args.text, scope, int(args.max_mb * 2**20))
    except ValueError as e:
        return fail(str(e))
    for note in result.notes:
        print(f"warning: {render(note)}", file=sys.stderr)
    out = Path(args.out)
    problem = write_files(out, files)
    if problem:
        return fail(problem)
    data = files["activations.npz"]
    print(f"wrote {out / 'activations.npz'} ({scope.slug}: {len(data):,} bytes) and {out / 'meta.json'}")
    return 0


def inspect_files(bundle, result, text: str, scope, limit: int) -> dict[str, bytes]:
    """``{"activations.npz": …, "meta.json": …}`` of ``inspect --out`` for an analysis of ``text`` (one that
    kept the per-position hooks of ``scope``); ValueError with a one-line reason past ``limit`` bytes.
    Also what ``attention_lens``' ``Run.save`` writes."""
    from ..export.archive import activations_npz, inspect_meta

    problem = _scope_problem(result, scope, limit)
    if problem:
        raise ValueError(problem)
    meta = inspect_meta(bundle, result, text, scope)
    return {"activations.npz": activations_npz(result, scope),
            "meta.json": json.dumps(meta, ensure_ascii=False, indent=1).encode("utf-8")}


def _scope_problem(result, scope, limit: int) -> str | None:
    """Why the archive of ``scope`` is not written (past ``limit`` bytes: a part that fits), or None."""
    from ..export.archive import kinds_of, scope_bytes
    from ..export.scopes import ALL, scopes

    size = scope_bytes(result, scope)
    if size <= limit or scope.head is not None:  # one head is written whatever its size
        return None
    first = scopes(lambda s: scope_bytes(result, s), kinds_of(result), limit)[0]
    parts = (("kind", first.kind), ("layer", first.layer), ("head", first.head))
    flags = " ".join(f"--{name} {value}" for name, value in parts if value is not None)
    what = "every hook" if scope == ALL else scope.slug
    mib = 2**20
    return (f"the archive of {what} would hold {size / mib:,.2f} MiB of tensors, past the limit of "
            f"{limit / mib:,.2f} MiB (--max-mb): write a part, e.g. {flags} "
            f"({scope_bytes(result, first) / mib:,.2f} MiB)")


def add_commands(sub: argparse._SubParsersAction) -> None:
    """list, translate and inspect."""
    s = sub.add_parser("list", help="each model's name and an example input, tab-separated")
    s.set_defaults(fn=cmd_list)

    s = sub.add_parser("translate", help="print the model's output for each text (arguments or stdin lines)")
    add_model_args(s)
    s.add_argument("--direction", default="auto", choices=["auto", "zh->en", "en->zh"])
    s.add_argument("--max-new-tokens", type=positive_int, default=None, metavar="N",
                   help="write at most N new tokens (default: until the end token, or the model's length)")
    s.add_argument("texts", nargs="*")
    add_strategy_args(s)
    s.set_defaults(fn=cmd_translate)

    s = sub.add_parser("generate", help="print a language model's continuation of each prompt "
                       "(arguments or stdin lines)")
    add_model_args(s)
    _add_lm_args(s, form_default="raw")
    s.add_argument("texts", nargs="*")
    add_strategy_args(s)
    s.set_defaults(fn=cmd_generate)

    s = sub.add_parser("inspect", help="write every hooked tensor (npz) and meta.json for one input")
    add_model_args(s)
    s.add_argument("--text", required=True)
    s.add_argument("--target", default=None, help="teacher-force this output instead of decoding")
    s.add_argument("--direction", default="auto", choices=["auto", "zh->en", "en->zh"])
    s.add_argument("--out", required=True)
    s.add_argument("--kind", default=None, choices=["encoder", "decoder", "cross"],
                   help="write this attention kind's stack only (with --layer: one block)")
    s.add_argument("--layer", type=int, default=None, help="write one block of --kind")
    s.add_argument("--head", type=int, default=None, help="with --layer: the squares of one head only")
    s.add_argument("--max-mb", type=_megabytes, default=256, metavar="MB",
                   help="largest archive written (MiB of tensors; default 256): past it, choose a part")
    _add_lm_args(s, form_default=None)
    add_strategy_args(s)
    s.set_defaults(fn=cmd_inspect)


def _add_lm_args(s: argparse.ArgumentParser, form_default: str | None) -> None:
    """A language model's options: the prompt's form and the bound on new tokens."""
    s.add_argument("--form", default=form_default, choices=["raw", "chat"],
                   help="raw: continue the text as typed; chat: answer it as a user's message in the "
                   "model's chat template")
    s.add_argument("--max-new-tokens", type=positive_int, default=None, metavar="N",
                   help="write at most N new tokens (a language model's default: 32)")
