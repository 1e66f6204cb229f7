"""Uploads whose config passes every size limit but whose full-length analysis would not fit in
memory: loaded through the upload's own loader, answered as the single-head page asks, each in a
fresh process, with the input limit the budget gives, the notes, the time and the memory.

    .venv/bin/python bench/bench_budget.py

The two cases are the ones a hostile-input probe found: max_len 8,192 with 64 heads and 8 + 8
layers (its full-length analysis would allocate 16 GB), and max_len 4,096 with 16 heads and 2 + 2
layers (5.5 GB of resident memory, then a failed allocation). Each is given its config's own
8,000-letter example. Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CASES = {
    "8192 pos, 64 heads, 8+8 layers": dict(max_len=8192, n_heads=64, n_enc_layers=8, n_dec_layers=8),
    "4096 pos, 16 heads, 2+2 layers": dict(max_len=4096, n_heads=16, n_enc_layers=2, n_dec_layers=2),
}

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
import psutil
from model.run.analysis import analyze, attention_only
from model.core.messages import render
from model.store.budget import ANALYSIS_BUDGET_BYTES, analysis_bytes
from model.store.user_folders import load_user_model

folder = Path(sys.argv[1])
process = psutil.Process()
start = time.perf_counter()
bundle = load_user_model(folder, name="upload")
loaded_s = time.perf_counter() - start
loaded_rss = process.memory_info().rss
example = json.loads((folder / "config.json").read_text())["example"]
start = time.perf_counter()
result = analyze(bundle, example, keep=attention_only)
answer_s = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({
    "limit": bundle.cfg.max_len,
    "config_max_len": bundle.info.get("budget", {}).get("config_max_len", bundle.cfg.max_len),
    "tokens": len(result.source_tokens),
    "estimate_mib": analysis_bytes(bundle.cfg, bundle.cfg.max_len) / 2**20,
    "budget_mib": ANALYSIS_BUDGET_BYTES / 2**20, "load_s": loaded_s, "answer_s": answer_s,
    "loaded_rss_mib": loaded_rss / 2**20, "peak_rss_mib": peak / 2**20,
    "notes": [render(n) for n in result.notes],
}))
"""


def make_upload(folder: Path, sizes: dict) -> None:
    """A checkpoint folder of random weights at ``sizes`` (d_model 256), the reverse model's tokenizer."""
    import torch

    from model.data.tasks import task_from_dict
    from model.network.config import ModelConfig
    from model.network.transformer import Transformer
    from model.store.formats.own import save_checkpoint

    reverse = ROOT / "assets" / "models" / "reverse"
    shipped = json.loads((reverse / "config.json").read_text())
    cfg = ModelConfig.from_dict({**shipped["model"], "d_model": 256, "d_ff": 256, **sizes})
    torch.manual_seed(0)
    task = task_from_dict(shipped["task"], reverse)
    save_checkpoint(folder, Transformer(cfg), task, info={"example": "a" * 8000, "label": "probe"},
                    dtype=torch.float16)


def main() -> None:
    print(f"{'case':34} {'limit':>6} {'of':>6} {'tokens':>6} {'est MiB':>8} {'load s':>7} {'answer s':>8} "
          f"{'RSS loaded':>10} {'RSS peak':>9} {'peak-loaded':>11}")
    notes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, sizes in CASES.items():
            folder = Path(tmp) / label.split(",")[0].replace(" ", "_")
            make_upload(folder, sizes)
            weights_mb = (folder / "model.safetensors").stat().st_size / 1e6
            out = subprocess.run([sys.executable, "-c", CHILD, str(folder)], cwd=ROOT, capture_output=True,
                                 text=True, check=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            grew = r["peak_rss_mib"] - r["loaded_rss_mib"]
            print(f"{label:34} {r['limit']:6d} {r['config_max_len']:6d} {r['tokens']:6d} "
                  f"{r['estimate_mib']:8.0f} {r['load_s']:7.2f} {r['answer_s']:8.2f} "
                  f"{r['loaded_rss_mib']:10.0f} {r['peak_rss_mib']:9.0f} {grew:11.0f}"
                  f"   ({weights_mb:.1f} MB of weights)")
            notes[label] = r["notes"]
    print(f"budget per analysis: {r['budget_mib']:.0f} MiB")
    for label, said in notes.items():
        print(f"notes for {label}:")
        for line in said:
            print(f"  - {line}")


if __name__ == "__main__":
    main()
