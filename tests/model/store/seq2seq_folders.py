"""Tiny random Marian, BART and mBART folders built with ``transformers`` (seeded, no hub) and tokenizers
trained here (SentencePiece for Marian and mBART, byte-level BPE for BART): the parity tests and the page
sweeps open them through the user-model loader."""

from __future__ import annotations

import json
from pathlib import Path

import torch

ZH = ["我吃了一个苹果。", "今天天气很好。", "他在看书。", "我们明天去北京。",
      "这只猫很可爱。", "你叫什么名字？",
      "我喜欢学习中文。", "火车几点开？"]
EN = ["I ate an apple.", "The weather is nice today.", "He is reading a book.", "We go to Beijing tomorrow.",
      "This cat is very cute.", "What is your name?", "I like learning Chinese.",
      "When does the train leave?"]
#: 20 sentences for the tokenizer parity: Chinese, English, mixed, and characters no training text held.
TOKENIZER_SENTENCES = [*ZH[:6], *EN[:6], "我喜欢 Python 和 apple。", "He said 你好 twice.", "北京 is big.",
                       "Attention 就是一切", "雪人☃在这里", "emoji 🙂 here", "Ωμέγα alpha", "ĳsselmeer ﬁne"]

def assert_refused_in_one_line(folder: Path, named: str) -> None:
    """The user-model loader refuses ``folder`` with one line that names ``named`` (the file or field at
    fault)."""
    import pytest

    from model.store.problems import UserModelError
    from model.store.user_folders import load_user_model

    with pytest.raises(UserModelError) as caught:
        load_user_model(folder)
    message = str(caught.value)
    assert "\n" not in message and named in message, message


DIMS = dict(d_model=32, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=4, decoder_attention_heads=4,
            encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64)


def _spm(path: Path, texts: list[str], size: int, **extra) -> Path:
    import sentencepiece as spm

    corpus = path.with_suffix(".txt")
    corpus.write_text("\n".join(texts * 4), encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(path), vocab_size=size,
                                   character_coverage=1.0, model_type="unigram", hard_vocab_limit=False,
                                   minloglevel=2, **extra)
    corpus.unlink()
    return path.with_suffix(".model")


def _randomise(model) -> None:
    """Norm weights, biases and final_logits_bias away from their 1 / 0 start, so a wrong mapping shows."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(torch.randn_like(p) * 0.1)
        model.final_logits_bias.copy_(torch.randn_like(model.final_logits_bias))


def marian_folder(root: Path, targets: tuple[str, ...] = ()) -> tuple[Path, object, object]:
    """(folder, MarianTokenizer, transformers model) of a tiny zh->en Marian; ``targets``: >>xx<< tokens
    (a multi-target model)."""
    import transformers

    root.mkdir(parents=True, exist_ok=True)
    work = root / "spm"
    work.mkdir(exist_ok=True)
    src = _spm(work / "source", ZH + EN[:2], 110)
    tgt = _spm(work / "target", EN, 70)
    import sentencepiece as spm

    pieces = []
    for model_file in (src, tgt):
        sp = spm.SentencePieceProcessor(model_file=str(model_file))
        pieces += [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    vocab = {"</s>": 0, "<unk>": 1}
    for p in [f">>{t}<<" for t in targets] + pieces:
        if p not in vocab and p not in ("<s>", "</s>", "<unk>"):
            vocab[p] = len(vocab)
    vocab["<pad>"] = len(vocab)
    (work / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tok = transformers.MarianTokenizer(vocab=str(work / "vocab.json"),
                                       source_spm=str(src), target_spm=str(tgt),
                                       source_lang="zh", target_lang="en")
    folder = root / "marian"
    tok.save_pretrained(folder)
    torch.manual_seed(0)
    cfg = transformers.MarianConfig(vocab_size=len(vocab), pad_token_id=vocab["<pad>"], eos_token_id=0,
                                    decoder_start_token_id=vocab["<pad>"], activation_function="swish",
                                    scale_embedding=True, **DIMS)
    model = transformers.MarianMTModel(cfg)
    _randomise(model)
    model.config._attn_implementation = "eager"
    model.eval()
    model.save_pretrained(folder, safe_serialization=True)
    return folder, tok, model


def _spm_vocab(model_file: Path, first: tuple[str, ...] = ()) -> dict[str, int]:
    """A Marian vocabulary of one SentencePiece model's pieces: </s> 0, <unk> 1, <pad> 2, ``first``, the
    pieces."""
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    vocab = {"</s>": 0, "<unk>": 1, "<pad>": 2}
    for p in [*first, *(sp.id_to_piece(i) for i in range(sp.get_piece_size()))]:
        if p not in vocab and p != "<s>":
            vocab[p] = len(vocab)
    return vocab


def separate_marian_folder(root: Path, targets: tuple[str, ...] = ()) -> tuple[Path, object, object]:
    """(folder, MarianTokenizer, transformers model) of a tiny zh->en Marian with separate vocabularies, as
    ``transformers`` saves one: source ids from vocab.json (source.spm's pieces), target ids from
    target_vocab.json (target.spm's pieces, a smaller vocabulary), a decoder embedding of its own
    (share_encoder_decoder_embeddings false, decoder_vocab_size). config.json has one pad_token_id (the
    decoder's start, the padding row of both tables), so both vocabularies hold <pad> at that id."""
    import transformers

    root.mkdir(parents=True, exist_ok=True)
    work = root / "spm-separate"
    work.mkdir(exist_ok=True)
    src = _spm(work / "source", ZH + EN[:2], 110)
    tgt = _spm(work / "target", EN, 70)
    vocab, target = _spm_vocab(src, tuple(f">>{t}<<" for t in targets)), _spm_vocab(tgt)
    pad = vocab["<pad>"]
    assert len(target) < len(vocab) and target["<pad>"] == pad
    (work / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (work / "target_vocab.json").write_text(json.dumps(target, ensure_ascii=False), encoding="utf-8")
    tok = transformers.MarianTokenizer(vocab=str(work / "vocab.json"), source_spm=str(src),
                                       target_spm=str(tgt), target_vocab_file=str(work / "target_vocab.json"),
                                       separate_vocabs=True, source_lang="zh", target_lang="en")
    folder = root / "marian-separate"
    tok.save_pretrained(folder)
    torch.manual_seed(4)
    cfg = transformers.MarianConfig(vocab_size=len(vocab), decoder_vocab_size=len(target),
                                    share_encoder_decoder_embeddings=False, pad_token_id=pad, eos_token_id=0,
                                    decoder_start_token_id=pad, activation_function="swish",
                                    scale_embedding=True, **DIMS)
    model = transformers.MarianMTModel(cfg)
    _randomise(model)
    with torch.no_grad():  # token tables large enough that the greedy output is not one token repeated
        for table in (model.model.encoder.embed_tokens, model.model.decoder.embed_tokens):
            table.weight.normal_(0.0, 0.5)
            table.weight[pad] = 0.0  # the padding row stays zero, as transformers starts it
        # larger projections, the cross-attention's most: each source leads to an output of its own
        for name, p in model.named_parameters():
            if name.endswith(("proj.weight", "fc1.weight", "fc2.weight")):
                p.mul_(40.0 if "encoder_attn" in name and name.endswith(("v_proj.weight", "out_proj.weight"))
                       else 8.0)
    model.config._attn_implementation = "eager"
    model.eval()
    model.save_pretrained(folder, safe_serialization=True)
    return folder, tok, model


def _bart_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(EN * 3 + ZH, trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=False,
                                                      add_prefix_space=False)
    return tok


MBART_CODES = ["en_XX", "zh_CN"]


def _mbart_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(EN * 3 + ZH * 3, trainers.UnigramTrainer(
        vocab_size=150, special_tokens=["<s>", "<pad>", "</s>", "<unk>"], unk_token="<unk>"))
    tok.add_special_tokens(MBART_CODES + ["<mask>"])
    en = tok.token_to_id("en_XX")
    tok.post_processor = processors.TemplateProcessing(single="en_XX $A </s>", pair="en_XX $A $B </s>",
                                                       special_tokens=[("en_XX", en), ("</s>", 2)])
    return tok


def bart_folder(root: Path, family: str = "bart") -> tuple[Path, object, object]:
    """(folder, transformers fast tokenizer, transformers model) of a tiny BART or mBART
    (MBart50-style codes)."""
    import transformers

    folder = root / family
    folder.mkdir(parents=True, exist_ok=True)
    raw = _bart_tokenizer() if family == "bart" else _mbart_tokenizer()
    raw.save(str(folder / "tokenizer.json"))
    specials = dict(bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>",
                    mask_token="<mask>")
    if family == "bart":
        tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"), **specials)
        tok.save_pretrained(folder)
    else:
        tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"), **specials)
        tok.save_pretrained(folder)
        config = json.loads((folder / "tokenizer_config.json").read_text())
        config.update(src_lang="en_XX", tgt_lang="zh_CN", tokenizer_class="MBart50Tokenizer")
        (folder / "tokenizer_config.json").write_text(json.dumps(config))
    torch.manual_seed(1)
    vocab = raw.get_vocab_size()
    if family == "bart":
        cfg = transformers.BartConfig(vocab_size=vocab, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                                      decoder_start_token_id=2, forced_bos_token_id=0, **DIMS)
        model = transformers.BartForConditionalGeneration(cfg)
    else:
        cfg = transformers.MBartConfig(vocab_size=vocab, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                                       decoder_start_token_id=2, forced_bos_token_id=raw.token_to_id("zh_CN"),
                                       scale_embedding=True, **DIMS)
        model = transformers.MBartForConditionalGeneration(cfg)
    _randomise(model)
    model.config._attn_implementation = "eager"
    model.eval()
    model.save_pretrained(folder, safe_serialization=True)
    return folder, tok, model


T5_DIMS = dict(d_model=32, d_kv=6, d_ff=48, num_layers=2, num_decoder_layers=2, num_heads=4,
               relative_attention_num_buckets=8, relative_attention_max_distance=20)
#: The task prefixes a T5 config names (flan-t5's config.json holds the same kind of table).
T5_TASKS = {"translation_en_to_de": {"prefix": "translate English to German: "},
            "translation_en_to_fr": {"prefix": "translate English to French: "},
            "summarization": {"prefix": "summarize: "}}


def t5_spiece(path: Path) -> Path:
    """A T5-style SentencePiece model: <pad> 0, </s> 1, <unk> 2, no <s>."""
    prefixes = ["translate English to German: the house", "translate English to French:"]
    return _spm(path, EN * 2 + ZH + prefixes, 160, pad_id=0, eos_id=1, unk_id=2, bos_id=-1)


def t5_folder(root: Path, version: str = "1.1", tokenizer: str = "json") -> tuple[Path, object, object]:
    """(folder, transformers T5Tokenizer, transformers model) of a tiny T5: v1.0 (ReLU, tied embedding with
    the d_model^-0.5 rescaling) or v1.1 (gated GELU, its own lm_head.weight written into the file by hand, as
    the installed transformers always ties). ``tokenizer``: "json" (tokenizer.json and spiece.model) or
    "spm" (spiece.model alone)."""
    import transformers
    from safetensors.torch import load_file, save_file

    folder = root / f"t5-{version}-{tokenizer}"
    folder.mkdir(parents=True, exist_ok=True)
    spiece = t5_spiece(root / f"spiece_{version.replace('.', '')}_{tokenizer}")
    (folder / "spiece.model").write_bytes(spiece.read_bytes())
    tok = transformers.T5Tokenizer.from_pretrained(str(folder), extra_ids=4)  # converts spiece.model
    tok.save_pretrained(folder)
    if tokenizer == "spm":
        for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
            (folder / name).unlink(missing_ok=True)
    vocab = len(tok)
    torch.manual_seed(3 if version == "1.1" else 2)
    v11 = version == "1.1"
    cfg = transformers.T5Config(vocab_size=vocab, feed_forward_proj="gated-gelu" if v11 else "relu",
                                tie_word_embeddings=not v11, decoder_start_token_id=0, pad_token_id=0,
                                eos_token_id=1, task_specific_params=T5_TASKS, **T5_DIMS)
    cfg._attn_implementation = "eager"
    model = transformers.T5ForConditionalGeneration(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "layer_norm" in name:
                p.add_(torch.randn_like(p) * 0.1)
            if "relative_attention_bias" in name:
                p.normal_(0.0, 1.0)  # a bias large enough to move the patterns
    if v11:  # untied: a head of its own, which the reference uses too
        model.lm_head.weight = torch.nn.Parameter(torch.randn(vocab, T5_DIMS["d_model"]) * 0.3)
    model.config._attn_implementation = "eager"
    model.eval()
    model.save_pretrained(folder, safe_serialization=True)
    config = json.loads((folder / "config.json").read_text())
    config["tie_word_embeddings"] = not v11
    # as flan-t5's config.json names 512; 64 here, like the other families' test models, so pages that decode
    # a random model (which never writes </s>) up to max_len stay small
    config["n_positions"] = 64
    (folder / "config.json").write_text(json.dumps(config))
    if v11:
        state = load_file(str(folder / "model.safetensors"))
        state["lm_head.weight"] = model.lm_head.weight.detach().clone().contiguous()
        save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder, tok, model
