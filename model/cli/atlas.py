"""The head atlas command: atlas."""

from __future__ import annotations

import argparse
import sys

from .common import add_model_args, fail, load_bundle, positive_int, thread_count


def cmd_atlas(args) -> int:
    """Compute (or read from runs/atlas/) a model's head atlas and print each head's roles."""
    import torch

    from ..lab.atlas import AtlasError, load_or_compute

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
        return fail(str(e))
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


def add_commands(sub: argparse._SubParsersAction) -> None:
    """atlas."""
    s = sub.add_parser("atlas", help="each head's statistics and roles over the test split "
                       "(cached in runs/atlas/)")
    add_model_args(s)
    s.add_argument("--sentences", type=positive_int, default=None,
                   help="translation: sentences sampled from the test split (default 200); "
                   "didactic: all test words unless fewer are asked for")
    s.add_argument("--force", action="store_true", help="recompute even when runs/atlas/ holds it")
    s.add_argument("--threads", type=thread_count, default=1, help="torch threads (default 1, as the app)")
    s.set_defaults(fn=cmd_atlas)
