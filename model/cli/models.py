"""Commands that run a model: list, translate, generate, inspect."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..messages import render
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
    from ..store.bundle import CheckpointError
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
    from ..analysis import analyze
    from ..data.tasks import InputError

    found = _texts_to_run(args, "sentences")
    if isinstance(found, int):
        return found
    texts, strategy, bundle = found
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


def cmd_generate(args) -> int:
    """A decoder-only model's continuation of each text (raw, or answered in chat form)."""
    from ..data.tasks import InputError
    from ..decoding import DEFAULT_NEW_TOKENS, decode

    found = _texts_to_run(args, "prompts")
    if isinstance(found, int):
        return found
    texts, strategy, bundle = found
    if not bundle.cfg.decoder_only:
        return fail(f"{bundle.name} is not a decoder-only language model: use translate")
    if args.form == "chat" and "chat" not in bundle.task.directions:
        return fail(f"{bundle.name} has no chat template: use --form raw")
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


def cmd_inspect(args) -> int:
    from ..analysis import activations_npz, analyze, inspect_meta

    try:
        strategy = parse_strategy(args)
    except ValueError as e:
        return fail(str(e))
    bundle = load_bundle(args)
    direction = None if args.direction == "auto" else args.direction
    if args.form is not None:
        if direction is not None:
            return fail("--form is for language models, --direction for translation: give one of them")
        direction = None if args.form == "raw" else args.form
    result = analyze(bundle, args.text, direction, target=args.target, strategy=strategy,
                     max_new=args.max_new_tokens)
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
        return fail(problem)
    print(f"wrote {out / 'activations.npz'} ({len(result.activations)} arrays) and {out / 'meta.json'}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    """list, translate and inspect."""
    s = sub.add_parser("list", help="each model's name and an example input, tab-separated")
    s.set_defaults(fn=cmd_list)

    s = sub.add_parser("translate", help="print the model's output for each text (arguments or stdin lines)")
    add_model_args(s)
    s.add_argument("--direction", default="auto", choices=["auto", "zh->en", "en->zh"])
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
