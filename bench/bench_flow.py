"""The information-flow graph (model/lab/flow.py) of SmolLM2 at 256 and 2,048 tokens, one torch thread.

    .venv/bin/python bench/bench_flow.py [--lengths 256 2048] [--threshold 0.04]

Each length runs in a fresh process: the model is loaded, the resident set read, then one graph from the
last prompt token is built (``build_flow``: one pass keeping the residual stream entering every layer, then
layer by layer, top down, that layer's queries, keys and values recorded again from it and the rows the graph
reaches decomposed one row and one head at a time). Prints CPU and wall seconds, the rows decomposed, the
edges kept, the peak resident set above the loaded model (VmHWM after /proc/self/clear_refs), and what the
kept residual stream and one layer's values take. Targets (issue 48): 256
tokens <= 3 s, 2,048 tokens <= 30 s, peak extra memory <= 300 MB beyond the recorded residuals and values.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: Varied prose (a repeated sentence would make every head an induction head), cut to the length asked.
PROSE = (
    "The history of the city begins in the twelfth century, when a small market grew up on the river. "
    "Merchants came from the north and the south, and by the fifteenth century the town had a cathedral, "
    "a university and a harbour that traded wool, wine and salt with half of Europe. Plague, war and "
    "fire each took their share; the old walls came down in 1820 and the railway arrived twenty years "
    "later, bringing factories, a theatre and the first public library. "
)

CHILD = r"""
import ctypes, gc, json, os, resource, sys, time
import torch
torch.set_num_threads(1)
sys.path.insert(0, sys.argv[1])
from model.store.registry import load_model
from model.lab.flow import build_flow

def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024

length, threshold, prose = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
bundle = load_model("smollm2")
ids = []
for n in range(1, 200):
    ids = bundle.task.prepare(prose * n, 10**6, None).prefix
    if len(ids) >= length:
        break
ids = list(ids[:length])
tokens = bundle.tokenizer.tokens(ids)
gc.collect()
ctypes.CDLL("libc.so.6").malloc_trim(0)
loaded = rss("VmRSS")
open("/proc/self/clear_refs", "w").write("5")
cpu, wall = time.process_time(), time.perf_counter()
graph = build_flow(bundle.model, ids, tokens, len(ids) - 1, threshold)
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
cfg = bundle.cfg
residuals = 4 * len(ids) * cfg.d_model * (cfg.n_dec_layers + 1)
recorded = residuals + 4 * len(ids) * cfg.kv_heads * cfg.d_head
print(json.dumps({"tokens": len(ids), "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
                  "rows": graph.rows_computed, "edges": int(len(graph.layer)),
                  "peak_extra_mb": round((rss("VmHWM") - loaded) / 2**20, 1),
                  "residuals_values_mb": round(recorded / 2**20, 1),
                  "predicted": graph.predicted_token}))
"""


SEQ2SEQ_CHILD = r"""
import json, sys, time
import torch
torch.set_num_threads(1)
sys.path.insert(0, sys.argv[1])
from model.store.registry import load_model
from model.lab.flow import build_seq2seq_flow
from model.decoding.decoders import greedy_decode

threshold, text = float(sys.argv[2]), sys.argv[3]
bundle = load_model("default")
model = bundle.model.eval()
prepared = bundle.task.prepare(text, model.cfg.max_len, "en->zh")
src = list(prepared.source_ids)
out = greedy_decode(model, [src], [list(prepared.prefix)], bundle.tokenizer.eos_id)[0]
ids = (list(prepared.prefix) + out)[: model.cfg.max_len]
names = bundle.tokenizer.tokens
cpu, wall = time.process_time(), time.perf_counter()
graph = build_seq2seq_flow(model, src, ids, names(ids), names(src), len(ids) - 1, threshold)
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
print(json.dumps({"model": "default (translation, Pre-LN)", "source_tokens": len(src),
                  "target_tokens": len(ids),
                  "cpu_s": round(cpu, 3), "wall_s": round(wall, 3), "rows": graph.rows_computed,
                  "edges": int(len(graph.layer)),
                  "cross_edges": int(sum(1 for k in graph.kind.tolist() if k in (4, 5)))}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[256, 2048])
    parser.add_argument("--threshold", type=float, default=0.04)
    parser.add_argument("--translation", action="store_true",
                        help="also our translation model's graph, cross-attention edges into the encoder")
    args = parser.parse_args()
    for length in args.lengths:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(ROOT), str(length), str(args.threshold), PROSE],
            capture_output=True,
            text=True,
            check=True,
        )
        got = json.loads(out.stdout.strip().splitlines()[-1])
        got["extra_beyond_recorded_mb"] = round(got["peak_extra_mb"] - got["residuals_values_mb"], 1)
        print(json.dumps(got))
    if args.translation:  # its longest input: 64 positions a side
        child = [sys.executable, "-c", SEQ2SEQ_CHILD, str(ROOT), str(args.threshold), PROSE[:400]]
        out = subprocess.run(child, capture_output=True, text=True, check=True)
        print(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
