"""Decoder models at a realistic size: random weights with the real shape of Qwen3-0.6B and Pythia-410M,
opened by our loader beside ``transformers``, one torch thread, in one run.

    .venv/bin/python bench/bench_decoder_families.py [--models qwen3,pythia] [--tokens 256] [--new 32]
                                                     [--rounds 3]

The models are built once (seeded random weights, ``save_pretrained``) under ``.cache/bench_models/`` (not
in git) with a small byte-level tokenizer: their embeddings are larger than the tokenizer, as real
checkpoints' are. Before anything is timed, both loaders open a tiny folder of the same family once, so
neither pays its first imports in the figures (a server opens many models per process). With the C
library's mmap threshold the app sets (model/run/runtime.py). Rows, per model (medians over the rounds):
  load (s)                  ours: ``--model-dir`` (``load_user_model``: every tensor checked and copied into
                            memory the model owns); transformers: ``from_pretrained`` (maps the file: its
                            pages are read when first used)
  resident memory (GB)      the process's growth from before each loads its copy to after its passes
  analysis, new=0 (s)       ours: ``analyze(max_new=0, keep=attention_only)`` of an N-token prompt (the prompt
                            alone: what a link with new=0 shows); transformers: one eager forward pass of the
                            same ids with ``output_attentions``
  analysis, new=K (s)       ours: the same with ``max_new=K`` (the sidebar's new tokens; the app's default is
                            32): one pass, the prompt pass is the prefill (model/run/one_pass.py);
                            transformers: ``generate`` of K greedy tokens from the same ids with
                            ``output_attentions`` and ``output_scores`` (eager)
  input budget              how many tokens our budget lets this model read on this machine
Prints figures and ratios (ours / transformers); asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CACHE = ROOT / ".cache" / "bench_models"

#: The real shapes (config.json of Qwen/Qwen3-0.6B and EleutherAI/pythia-410m), weights random.
SHAPES = {
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", dict(
        vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
        num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
        rope_theta=1_000_000.0, tie_word_embeddings=True, rms_norm_eps=1e-6)),
    "pythia": ("GPTNeoXConfig", "GPTNeoXForCausalLM", dict(
        vocab_size=50304, hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
        num_attention_heads=16, rotary_pct=0.25, max_position_embeddings=2048, use_parallel_residual=True,
        tie_word_embeddings=False)),
}
WORDS = ("the printing press began in the fifteenth century when a goldsmith combined movable metal "
         "type with an ink and a wooden press").split()


def _tokenizer_json(path: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    tok.train_from_iterator([" ".join(WORDS)] * 20, trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<|endoftext|>"], initial_alphabet=alphabet))
    tok.save(str(path))


#: The tiny folder of each family that both loaders open before anything is timed.
TINY = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4)


def build(name: str, tiny: bool = False) -> Path:
    """The model's folder (or its tiny warm-up folder), built once."""
    import torch
    import transformers

    folder = CACHE / (f"{name}-tiny" if tiny else name)
    if (folder / "model.safetensors").is_file() or (folder / "model.safetensors.index.json").is_file():
        return folder
    config_cls, model_cls, shape = SHAPES[name]
    if tiny:
        grouped = {"num_key_value_heads": 2, "head_dim": 16} if "head_dim" in shape else {}
        shape = {**shape, **TINY, **grouped}
    torch.manual_seed(0)
    config = getattr(transformers, config_cls)(**shape, bos_token_id=0, eos_token_id=0)
    model = getattr(transformers, model_cls)(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder, safe_serialization=True, max_shard_size="100GB")
    _tokenizer_json(folder / "tokenizer.json")
    return folder


def _rss_gb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**30


def _timed(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _ours(folder: Path, tokens: int, new: int, rounds: int) -> tuple[dict, list[int]]:
    """Our figures, and the ids our analysis read (the model goes with this frame)."""
    from model.run.analysis import analyze, attention_only
    from model.store.budget import budget_note
    from model.store.user_folders import load_user_model

    gc.collect()
    before = _rss_gb()
    start = time.perf_counter()
    ours = load_user_model(folder)
    out = {"load ours": time.perf_counter() - start}
    text = " ".join(WORDS[i % len(WORDS)] for i in range(tokens * 2))
    prompt = ours.task.prepare(text, tokens)
    ids = list(prompt.prefix)[:tokens]
    text = ours.tokenizer.decode(ids)  # the model's own <bos>, if any, is added again by the analysis
    read = analyze(ours, text, max_new=0, keep=attention_only)
    out["tokens"] = float(len(read.target_tokens))
    ids = list(read.prepared.prefix)  # the ids our analysis reads, given to transformers as they are
    out["analysis0 ours"] = _timed(lambda: analyze(ours, text, max_new=0, keep=attention_only), rounds)
    out["analysisK ours"] = _timed(lambda: analyze(ours, text, max_new=new, keep=attention_only), rounds)
    out["memory ours"] = _rss_gb() - before  # after the passes: every weight page touched
    out["budget"] = float(ours.cfg.max_len)
    note = budget_note(ours)  # a Message when the budget cuts what the config allows
    out["budget note"] = "" if note is None else f"(cut from {dict(note.params)['config_max_len']})"
    return out, ids


def measure(name: str, tokens: int, new: int, rounds: int) -> dict[str, float]:
    import torch
    import transformers

    from model.store.user_folders import load_user_model

    folder, tiny = build(name), build(name, tiny=True)
    load_user_model(tiny)  # the first imports of each loader, outside the figures
    transformers.AutoModelForCausalLM.from_pretrained(tiny, attn_implementation="eager", dtype=torch.float32)
    out, ids = _ours(folder, tokens, new, rounds)
    gc.collect()
    before = _rss_gb()
    start = time.perf_counter()
    theirs = transformers.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager",
                                                               dtype=torch.float32).eval()
    out["load transformers"] = time.perf_counter() - start  # safetensors are mapped: read when first used
    batch = torch.tensor([ids])
    generate = dict(max_new_tokens=new, min_new_tokens=new, do_sample=False, output_attentions=True,
                    output_scores=True, return_dict_in_generate=True, pad_token_id=0)
    with torch.no_grad():
        out["analysis0 transformers"] = _timed(lambda: theirs(batch, output_attentions=True), rounds)
        out["analysisK transformers"] = _timed(lambda: theirs.generate(batch, **generate), rounds)
    out["memory transformers"] = _rss_gb() - before
    return out  # the copy goes with this frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="qwen3,pythia")
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--new", type=int, default=32, help="new tokens of the second analysis row")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    from model.run.runtime import configure_malloc

    torch.set_num_threads(1)
    configure_malloc()
    print(f"one torch thread; {args.tokens}-token prompt; medians of {args.rounds}; load average "
          f"{os.getloadavg()[0]:.1f} at the start")
    print(f"{'model':<8} {'row':<30} {'ours':>9} {'transformers':>13} {'ratio':>7}")
    for name in args.models.split(","):
        m = measure(name, args.tokens, args.new, args.rounds)
        n = int(m["tokens"])
        for row, key in (("load (s)", "load"), ("resident memory (GB)", "memory"),
                         (f"analysis {n} tok, new=0 (s)", "analysis0"),
                         (f"analysis {n} tok, new={args.new} (s)", "analysisK")):
            a, b = m[f"{key} ours"], m[f"{key} transformers"]
            print(f"{name:<8} {row:<30} {a:9.2f} {b:13.2f} {a / b if b else float('nan'):7.2f}")
        print(f"{name:<8} {'input budget (tokens)':<30} {int(m['budget']):9d}   {m['budget note']}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
