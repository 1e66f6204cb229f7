"""Translation models at a realistic size: random weights with the real shape of Helsinki-NLP/opus-mt-zh-en
(Marian: d_model 512, 6 + 6 layers, 8 heads, d_ff 2048, 65,001 tokens) and of google/flan-t5-small (T5 v1.1:
d_model 512, 8 + 8 layers, 6 heads of 64, gated-GELU d_ff 1024, relative position bias, 32,128 tokens), each
opened by our loader beside ``transformers``, one torch thread, in one run.

    .venv/bin/python bench/bench_translation_families.py [--family marian|t5|all] [--tokens 64] [--rounds 3]

Each model is built once (seeded random weights, ``save_pretrained``) under ``.cache/bench_models/`` (not in
git) with a small SentencePiece model trained here. Marian: a vocab.json padded to the real 65,001 ids; its
final_logits_bias keeps </s> and <pad> from being chosen, so both sides write exactly N tokens. Flan-T5:
spiece.model alone (no tokenizer.json); its untied lm_head.weight holds the embedding's values (the installed
transformers ties the two), and </s> is not held back, so the line "tokens written" says how many each wrote.
Rows (medians over the rounds):
  load (s)                 ours: ``--model-dir`` (``load_user_model``); transformers: ``from_pretrained``
  resident memory (GB)     the process's growth from before each loads its copy to after its passes
  N-token translation (s)  ours: ``analyze`` (one pass, model/run/one_pass.py: the recorded encoder pass and
                           greedy decoding of N tokens, each step recording its rows of every attention);
                           transformers: ``generate(num_beams=1)`` of N tokens, then one eager pass of
                           source and output with ``output_attentions``
Prints figures and ratios (ours / transformers); asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CACHE = ROOT / ".cache" / "bench_models"
#: config.json of Helsinki-NLP/opus-mt-zh-en (sizes and options), weights random.
OPUS_MT_ZH_EN = dict(vocab_size=65001, decoder_vocab_size=65001, d_model=512,
                     encoder_layers=6, decoder_layers=6,
                     encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=2048,
                     decoder_ffn_dim=2048, max_position_embeddings=512, activation_function="swish",
                     scale_embedding=True, pad_token_id=65000, decoder_start_token_id=65000, eos_token_id=0)
TEXT = "我们明天早上坐火车去北京看我的朋友，然后一起去博物馆参观古代的书籍和印刷术的历史。"
#: config.json of google/flan-t5-small (sizes and options), weights random.
FLAN_T5_SMALL = dict(vocab_size=32128, d_model=512, d_kv=64, d_ff=1024, num_layers=8, num_decoder_layers=8,
                     num_heads=6, relative_attention_num_buckets=32, relative_attention_max_distance=128,
                     feed_forward_proj="gated-gelu", layer_norm_epsilon=1e-6, pad_token_id=0, eos_token_id=1,
                     decoder_start_token_id=0, tie_word_embeddings=False,
                     task_specific_params={"translation_en_to_de":
                                           {"prefix": "translate English to German: "}})
T5_TEXT = ("Tomorrow morning we take the train to Beijing to see my friend, and then we visit the museum "
           "together to look at old books and the history of printing.")


def build() -> Path:
    """The opus-mt-zh-en-shaped folder, built once."""
    import sentencepiece as spm
    import torch
    import transformers

    folder = CACHE / "opus-mt-zh-en-shape"
    if (folder / "model.safetensors").is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join([TEXT, "I ate an apple.", "The weather is nice today."] * 20),
                      encoding="utf-8")
    for side in ("source", "target"):
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(folder / side), vocab_size=120,
                                       character_coverage=1.0, hard_vocab_limit=False, minloglevel=2)
        (folder / f"{side}.model").rename(folder / f"{side}.spm")
        (folder / f"{side}.vocab").unlink()
    corpus.unlink()
    vocab = {"</s>": 0, "<unk>": 1}
    for side in ("source", "target"):
        sp = spm.SentencePieceProcessor(model_file=str(folder / f"{side}.spm"))
        for i in range(sp.get_piece_size()):
            vocab.setdefault(sp.id_to_piece(i), len(vocab))
    vocab.pop("<s>", None)
    filler = 0
    while len(vocab) < 65000:
        vocab.setdefault(f"\u2581w{filler}", len(vocab))
        filler += 1
    vocab = {p: i for i, p in enumerate(vocab)}
    vocab["<pad>"] = 65000
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({"source_lang": "zh", "target_lang": "en"}))
    torch.manual_seed(0)
    model = transformers.MarianMTModel(transformers.MarianConfig(**OPUS_MT_ZH_EN))
    with torch.no_grad():
        model.final_logits_bias[0, [0, 65000]] = -1e4  # never </s> or <pad>: both sides write N tokens
    model.save_pretrained(folder, safe_serialization=True)
    return folder


def build_t5() -> Path:
    """The flan-t5-small-shaped folder, built once: spiece.model only, lm_head.weight written by hand."""
    import sentencepiece as spm
    import torch
    import transformers
    from safetensors.torch import load_file, save_file

    folder = CACHE / "flan-t5-small-shape"
    if (folder / "model.safetensors").is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / "corpus.txt"
    lines = [T5_TEXT, "translate English to German: I ate an apple."] * 20
    corpus.write_text("\n".join(lines), encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(folder / "spiece"), vocab_size=150,
                                   character_coverage=1.0, hard_vocab_limit=False, minloglevel=2, pad_id=0,
                                   eos_id=1, unk_id=2, bos_id=-1)
    (folder / "spiece.vocab").unlink()
    corpus.unlink()
    torch.manual_seed(0)
    config = transformers.T5Config(**FLAN_T5_SMALL)
    model = transformers.T5ForConditionalGeneration(config)
    model.save_pretrained(folder, safe_serialization=True)
    saved = json.loads((folder / "config.json").read_text())
    saved["tie_word_embeddings"] = False  # what flan-t5-small's config.json says
    (folder / "config.json").write_text(json.dumps(saved))
    state = load_file(str(folder / "model.safetensors"))
    state["lm_head.weight"] = state["shared.weight"].clone()
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder


def _rss_gb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**30


def _timed(fn, rounds: int):
    times, result = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def measure(tokens: int, rounds: int, family: str = "marian") -> dict[str, float]:
    import torch
    import transformers

    from model.run.analysis import analyze, attention_only
    from model.store.user_folders import load_user_model

    t5 = family == "t5"
    folder = build_t5() if t5 else build()
    text = T5_TEXT if t5 else TEXT
    (folder / "model.safetensors").read_bytes()  # in the page cache for both loaders, not only the second
    gc.collect()
    before = _rss_gb()
    start = time.perf_counter()
    ours = load_user_model(folder)
    out = {"load ours": time.perf_counter() - start}
    out["translation ours"], analysis = _timed(
        lambda: analyze(ours, text, max_new=tokens, keep=attention_only), rounds)
    out["memory ours"] = _rss_gb() - before
    out["tokens ours"] = float(len(analysis.target_tokens) - len(analysis.prepared.prefix))
    src = torch.tensor([analysis.prepared.source_ids])
    gc.collect()
    before = _rss_gb()
    start = time.perf_counter()
    kind = transformers.T5ForConditionalGeneration if t5 else transformers.MarianMTModel
    theirs = kind.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
    start_ids = torch.tensor([analysis.prepared.prefix])
    out["load transformers"] = time.perf_counter() - start

    def translate():
        with torch.no_grad():
            generated = theirs.generate(src, decoder_input_ids=start_ids, num_beams=1, do_sample=False,
                                        max_new_tokens=tokens, min_length=0, bad_words_ids=None,
                                        forced_eos_token_id=None)
            theirs(input_ids=src, decoder_input_ids=generated, output_attentions=True)
        return generated

    out["translation transformers"], generated = _timed(translate, rounds)
    out["memory transformers"] = _rss_gb() - before
    out["tokens transformers"] = float(generated.shape[1] - 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--family", choices=("marian", "t5", "all"), default="all")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    shapes = {"marian": "opus-mt-zh-en", "t5": "flan-t5-small"}
    for family in (("marian", "t5") if args.family == "all" else (args.family,)):
        m = measure(args.tokens, args.rounds, family)
        print(f"{shapes[family]} shape, random weights; one torch thread; medians of {args.rounds}; "
              f"tokens written: ours {int(m['tokens ours'])}, transformers {int(m['tokens transformers'])}")
        print(f"{'row':<28} {'ours':>9} {'transformers':>13} {'ratio':>7}")
        for row, key in (("load (s)", "load"), ("resident memory (GB)", "memory"),
                         (f"{args.tokens}-token translation (s)", "translation")):
            a, b = m[f"{key} ours"], m[f"{key} transformers"]
            print(f"{row:<28} {a:9.2f} {b:13.2f} {a / b if b else float('nan'):7.2f}")


if __name__ == "__main__":
    main()
