"""The head atlas command: atlas."""

from __future__ import annotations

import argparse
import sys

from .common import add_model_args, fail, load_bundle, non_negative_int, positive_int, thread_count

#: model/lab/atlas_shards.py's default (kept here too: the parser is built without importing torch)
DEFAULT_SHARD_SIZE = 32


def cmd_atlas(args) -> int:
    """Compute (or read from runs/atlas/) a model's head atlas and print each head's roles."""
    import torch

    from ..lab.atlas import AtlasError, load_or_compute

    torch.set_num_threads(args.threads)
    bundle = load_bundle(args)
    if args.corpus is not None:
        return _corpus_atlas(args, bundle)
    if args.workers != 1 or args.ray is not None:
        return fail("--workers and --ray run a corpus: give it with --corpus FILE")
    last = [-1]

    def progress(done: int, total: int) -> None:
        if done != last[0]:
            last[0] = done
            print(f"\ratlas of {bundle.name}: {done}/{total} sentences", end="", file=sys.stderr, flush=True)

    try:
        atlas, cached = load_or_compute(bundle, args.sentences, progress=progress, force=args.force)
    except AtlasError as e:
        return fail(str(e))
    print(file=sys.stderr)
    how = "read from disk" if cached else f"computed in {atlas.seconds:.1f} s"
    print(f"# {atlas.model}: {atlas.dataset}; {how}", file=sys.stderr)
    _print_atlas(atlas)
    return 0


def _print_atlas(atlas) -> None:
    print("kind\tlayer\thead\troles\tentropy\tmax weight\tsink share\talignment")
    for kind in atlas.kinds:
        for layer in range(atlas.layer_counts[kind]):
            for head in range(atlas.n_heads):
                roles = ",".join(f"{r.name}({r.value:.2f}>={r.threshold:g})"
                                 for r in atlas.roles(kind, layer, head))
                figures = [atlas.stat(s, kind, layer, head) for s in ("entropy", "max_weight", "sink_share",
                                                                     "alignment")]
                print("\t".join([kind, str(layer), str(head), roles or "-", *(f"{v:.3f}" for v in figures)]))


def _corpus_atlas(args, bundle) -> int:
    """The atlas and the detectors over --corpus FILE, in shards (local, a process pool or Ray)."""
    from tqdm import tqdm

    from ..lab.atlas import AtlasError
    from ..lab.atlas_corpus import read_corpus
    from ..lab.atlas_shards import ModelSpec, detector_rows, run_corpus

    try:
        corpus = read_corpus(args.corpus)
    except AtlasError as e:
        return fail(str(e))
    spec = ModelSpec(name=None if args.model_dir else args.model, model_dir=args.model_dir)
    engine = "ray" if args.ray is not None else "local"
    bars: list = []  # one bar over the shards' prompts (prompts done, prompts/s, ETA), made when work starts

    def progress(done: int, total: int) -> None:
        if not bars:
            bars.append(tqdm(total=total, initial=done, unit="prompt", desc=f"atlas of {bundle.name}",
                             file=sys.stderr, dynamic_ncols=True, disable=args.quiet))
        bars[0].update(done - bars[0].n)

    def close() -> None:
        for bar in bars:
            bar.close()

    try:
        run = run_corpus(bundle, spec, corpus, args.sentences, args.seed, workers=args.workers, engine=engine,
                         address=args.ray or None, shard_size=args.shard_size, threads=args.threads,
                         force=args.force, progress=progress)
    except AtlasError as e:
        close()
        return fail(str(e))
    close()
    atlas, src = run.atlas, run.atlas.source
    how = ("read from disk" if run.cached else
           f"computed in {atlas.seconds:.1f} s: {run.computed} shards computed, {run.reused} read back")
    print(f"# {atlas.model}: {atlas.dataset}; {src['shards']} shards of {src['shard_size']} on "
          f"{src['engine']} ({src['workers']} workers); {how}; {run.folder}", file=sys.stderr)
    _print_atlas(atlas)
    rows = detector_rows(run.detectors)
    names = list(rows[0][2]) if rows else []
    print()
    print("\t".join(["detector kind", "layer", "head", *names]))
    for layer, head, row in rows:
        figures = (f"{row[n]:.3f}" for n in names)
        print("\t".join([run.detectors.corpus.kind, str(layer), str(head), *figures]))
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    """atlas."""
    s = sub.add_parser("atlas", help="each head's statistics and roles over the test split "
                       "(cached in runs/atlas/)")
    add_model_args(s)
    s.add_argument("--sentences", type=positive_int, default=None,
                   help="translation: sentences sampled from the test split (default 200); "
                   "didactic: all test words unless fewer are asked for")
    s.add_argument("--force", action="store_true", help="recompute even when runs/atlas/ holds it")
    s.add_argument("--threads", type=thread_count, default=1,
                   help="torch threads (default 1, as the app; per worker with --workers/--ray)")
    s.add_argument("--corpus", default=None, metavar="FILE",
                   help="your own corpus: plain text (one prompt a line), JSONL (a \"text\" field) or "
                   "Parquet (a \"text\" column); --sentences N samples N prompts with --seed")
    s.add_argument("--seed", type=non_negative_int, default=0, help="the corpus sample's seed (default 0)")
    s.add_argument("--shard-size", type=positive_int, default=DEFAULT_SHARD_SIZE, metavar="N",
                   help=f"prompts per shard (default {DEFAULT_SHARD_SIZE}): the unit of work and of a "
                   "resumed run")
    s.add_argument("--workers", type=positive_int, default=1,
                   help="shards on a local process pool of N workers (default 1: this process)")
    s.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="shards as Ray tasks: no ADDRESS starts a local Ray (of --workers CPUs), "
                   "'auto' joins a running cluster, or ray://HOST:PORT")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(fn=cmd_atlas)
