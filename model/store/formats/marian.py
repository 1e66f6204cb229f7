"""Hugging Face Marian folders (``model_type`` "marian": Helsinki-NLP's opus-mt models), converted into our
own encoder-decoder ``Transformer`` with the BART family's layer names (model/store/formats/bart.py).

What Marian needs beyond our own translation models is config options: sinusoidal positions laid out in two
halves (every sine, then every cosine: ``sinusoid_layout`` "halves"), embeddings * sqrt(d_model) when
``scale_embedding``, the ``swish`` (SiLU) activation, Post-LN, ``final_logits_bias`` (``logits_bias``), and a
decoder that starts from ``<pad>`` (``decoder_start_token_id``), which its self-attention must not hide
(``mask_target_padding`` False).

The tokenizer is not a tokenizer.json: pieces come from ``source.spm`` / ``target.spm`` and ids from
``vocab.json`` (model/data/spm_vocab.py). The language pair is in tokenizer_config.json (``source_lang``,
``target_lang``); a multi-target model's vocabulary holds ``>>xx<<`` tokens instead, one per target, which
open the source.

Separate vocabularies (``share_encoder_decoder_embeddings`` false in config.json, ``separate_vocabs`` in
tokenizer_config.json): the encoder reads vocab.json's ids from ``model.encoder.embed_tokens``, the decoder
target_vocab.json's from its own ``model.decoder.embed_tokens`` (``decoder_vocab_size`` rows), and the output
projection and final_logits_bias are that size (``target_vocab_size`` in our config). The task's
``target_tokenizer`` (target.spm, target_vocab.json) names every id the decoder reads or writes. config.json's
one eos_token_id and pad_token_id (the decoder's start) must be </s> and <pad> in both vocabularies.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...data.seq2seq_task import Frame
from ...data.spm_vocab import SpmVocabTokenizer, read_vocab
from ...network.config import SIZE_LIMITS, ModelConfig
from ..bundle import Bundle
from .bart import family_config, family_name_map, tied_copies
from .seq2seq import (
    Seq2SeqFormatError,
    budget,
    check_mapped,
    decoder_start,
    read_config,
    read_mapped,
    refuse_pickles,
    seq2seq_bundle,
    tokenizer_config,
    whole,
)

MODEL_TYPES = ("marian",)
#: The files Marian's tokenizer is read from (a folder needs no tokenizer.json).
TOKENIZER_FILES = ("source.spm", "target.spm", "vocab.json")
EXAMPLE = "我吃了一个苹果"
#: A target-language token of a multi-target model (>>fra<<, >>zh_Hant<<).
TARGET_TOKEN = re.compile(r">>([A-Za-z]{2,8}(?:_[A-Za-z]{2,8})?)<<")
_LANGUAGE = re.compile(r"[A-Za-z]{2,8}(?:[_-][A-Za-z]{2,8})?")
#: Target tokens offered as directions (a ROMANCE model has ~40; the first ones, in vocabulary order).
MAX_TARGETS = 12


def separate_vocabularies(hf: dict, where: Path) -> int | None:
    """The decoder's own vocabulary size (decoder_vocab_size) when config.json does not share one embedding
    between encoder and decoder; None when it does."""
    dec_vocab = hf.get("decoder_vocab_size")
    if hf.get("share_encoder_decoder_embeddings", True) is not False:
        if dec_vocab is not None and dec_vocab != hf.get("vocab_size"):
            raise Seq2SeqFormatError(f"{where}: decoder_vocab_size {str(dec_vocab)[:20]} differs from "
                                     f"vocab_size {str(hf.get('vocab_size'))[:20]} but "
                                     "share_encoder_decoder_embeddings is true (one table cannot have both "
                                     "sizes)")
        return None
    if dec_vocab is None:
        raise Seq2SeqFormatError(f"{where}: share_encoder_decoder_embeddings is false but there is no "
                                 "decoder_vocab_size (the size of the decoder's own vocabulary)")
    limit = SIZE_LIMITS["vocab_size"]
    if not isinstance(dec_vocab, int) or isinstance(dec_vocab, bool) or not 1 <= dec_vocab <= limit:
        raise Seq2SeqFormatError(f"{where}: decoder_vocab_size must be a whole number from 1 to {limit:,} "
                                 f"(got {str(dec_vocab)[:40]!r})")
    return dec_vocab


def marian_config(hf: dict, where: Path) -> ModelConfig:
    if hf.get("model_type") not in MODEL_TYPES:
        raise Seq2SeqFormatError(f"{where}: model_type {hf.get('model_type')!r} is not 'marian'")
    target_vocab = separate_vocabularies(hf, where)
    if hf.get("normalize_before") or hf.get("normalize_embedding") or hf.get("add_final_layer_norm"):
        raise Seq2SeqFormatError(f"{where}: not supported: normalize_before / normalize_embedding / "
                                 "add_final_layer_norm (opus-mt models use none of them)")
    return family_config(hf, where, norm_first=False, pos_encoding="sinusoidal", sinusoid_layout="halves",
                         mask_target_padding=False, target_vocab_size=target_vocab)


def _target_tokenizer(folder: Path, hf: dict, cfg: ModelConfig, tokenizer: SpmVocabTokenizer, eos: int
                      ) -> SpmVocabTokenizer:
    """The target side's tokenizer: ``tokenizer`` itself for one shared vocabulary, else target.spm with
    target_vocab.json. The tokenizer and the network must agree on which it is."""
    tok_cfg = tokenizer_config(folder)
    said = next((name for name, c in (("tokenizer_config.json", tok_cfg), ("config.json", hf))
                 if c.get("separate_vocabs") is True), None)
    if cfg.target_vocab_size is None:
        if said:
            raise Seq2SeqFormatError(f"{folder / said}: separate_vocabs is true but config.json shares one "
                                     "embedding between source and target (share_encoder_decoder_embeddings)")
        return tokenizer
    if not said:
        raise Seq2SeqFormatError(f"{folder / 'tokenizer_config.json'}: config.json gives the decoder a "
                                 "vocabulary of its own (share_encoder_decoder_embeddings false) but "
                                 "separate_vocabs is not true, so nothing names its ids")
    path = folder / "target_vocab.json"
    if not path.is_file():
        raise Seq2SeqFormatError(f"{path} is missing (separate_vocabs: the target's ids are read from it)")
    try:
        target = tokenizer.target_side(read_vocab(path))
    except (ValueError, OSError) as e:
        raise Seq2SeqFormatError(str(e)) from e
    if target.vocab_size > cfg.output_vocab_size:
        raise Seq2SeqFormatError(f"{path} has ids up to {target.vocab_size - 1} but config.json's "
                                 f"decoder_vocab_size is {cfg.output_vocab_size}")
    if target.eos_id != eos or target.pad_id != cfg.pad_id:
        raise Seq2SeqFormatError(f"{path}: </s> {target.eos_id} / <pad> {target.pad_id} are not "
                                 f"config.json's eos_token_id {eos} / pad_token_id {cfg.pad_id} (one id for "
                                 "both vocabularies)")
    return target


def _tokenizer(folder: Path, hf: dict, cfg: ModelConfig) -> tuple[SpmVocabTokenizer, SpmVocabTokenizer]:
    """(the source's tokenizer, the target's: the same object for one shared vocabulary)."""
    for needed in TOKENIZER_FILES:
        if not (folder / needed).is_file():
            raise Seq2SeqFormatError(f"{folder / needed} is missing (Marian's tokenizer reads "
                                     f"{', '.join(TOKENIZER_FILES)})")
    try:
        tokenizer = SpmVocabTokenizer.load(folder)
    except (ValueError, OSError) as e:
        raise Seq2SeqFormatError(str(e)) from e
    if tokenizer.vocab_size > cfg.vocab_size:
        raise Seq2SeqFormatError(f"{folder / 'vocab.json'} has ids up to {tokenizer.vocab_size - 1} but "
                                 f"config.json's vocab_size is {cfg.vocab_size}")
    eos = whole(hf, "eos_token_id", folder / "config.json", tokenizer.eos_id, cfg.vocab_size)
    if eos != tokenizer.eos_id or cfg.pad_id != tokenizer.pad_id:
        raise Seq2SeqFormatError(f"{folder / 'config.json'}: eos_token_id {eos} / pad_token_id {cfg.pad_id} "
                                 f"are not vocab.json's </s> {tokenizer.eos_id} / <pad> {tokenizer.pad_id}")
    return tokenizer, _target_tokenizer(folder, hf, cfg, tokenizer, eos)


def marian_frames(tokenizer: SpmVocabTokenizer, tok_cfg: dict, start: int) -> dict[str, Frame]:
    """Directions: the pair of tokenizer_config.json, or one per >>xx<< token (which opens the source);
    none known: one frame with no direction."""
    eos = (tokenizer.eos_id,)
    source, target = (tok_cfg.get(k) for k in ("source_lang", "target_lang"))
    pair = [str(x) for x in (source, target) if isinstance(x, str) and _LANGUAGE.fullmatch(x)]
    targets = sorted((i, m.group(1)) for t, i in tokenizer._vocab.items() if (m := TARGET_TOKEN.fullmatch(t)))
    src = pair[0] if pair else "src"
    if targets:
        return {f"{src}->{lang}": Frame((i,), eos, (start,)) for i, lang in targets[:MAX_TARGETS]}
    if len(pair) == 2 and pair[0] != pair[1]:
        return {f"{pair[0]}->{pair[1]}": Frame((), eos, (start,))}
    return {"": Frame((), eos, (start,))}


def load_marian_folder(path: Path | str, name: str | None = None, example: str | None = None) -> Bundle:
    folder = Path(path)
    hf = read_config(folder)
    where = folder / "config.json"
    cfg = marian_config(hf, where)
    limit = budget(cfg, folder)
    tokenizer, target = _tokenizer(folder, hf, cfg)
    start = decoder_start(hf, where, cfg.output_vocab_size, cfg.pad_id)
    frames = marian_frames(tokenizer, tokenizer_config(folder), start)
    weights = refuse_pickles(folder)
    mapping = marian_name_map(cfg)
    stored = check_mapped(weights, cfg, mapping, _ignored(cfg), prefixes=("model.",))
    model = read_mapped(weights, cfg, mapping, stored,
                        lambda ours, t: t.reshape(-1) if ours == "unembed.bias" else t)
    notes = []
    if hf.get("bad_words_ids"):
        notes.append("bad_words_ids is not applied: <pad> may be chosen like any token (it rarely is)")
    # one vocabulary: a reference is cut by target.spm and looked up in it; separate: the target's own
    encode = target.encode if target is not tokenizer else tokenizer.encode_target
    return seq2seq_bundle(folder, name, hf, cfg, model, tokenizer, frames, example or EXAMPLE, "marian",
                          notes, target_encode=encode, limit=limit, target_tokenizer=target)


def marian_name_map(cfg: ModelConfig):
    """The BART family's name map; with separate vocabularies, each stack's own table for the shared one."""
    mapping = family_name_map(cfg, None)
    if cfg.target_vocab_size is not None:
        mapping["token_embed.weight"] = ("encoder.embed_tokens.weight", None)
        mapping["target_embed.weight"] = ("decoder.embed_tokens.weight", None)
    return mapping


def _ignored(cfg: ModelConfig):
    tied = tied_copies(cfg)

    def ignored(name: str, shape: tuple) -> bool:
        # Older exports store the sinusoidal tables, which are computed, not learned.
        computed = ("encoder.embed_positions.weight", "decoder.embed_positions.weight")
        return tied(name, shape) or name in computed
    return ignored


class MarianFormat:
    """A Hugging Face Marian folder (config.json ``model_type`` "marian")."""

    name = "marian"
    what = ("Marian translation model", "Marian 翻译模型")
    task = "translation"
    example = EXAMPLE
    tokenizer_files = TOKENIZER_FILES

    def claims(self, config: dict) -> bool:
        return config.get("model_type") in MODEL_TYPES

    def read_config(self, folder: Path) -> ModelConfig:
        folder = Path(folder)
        return marian_config(read_config(folder), folder / "config.json")

    def check(self, folder: Path) -> None:
        folder = Path(folder)
        cfg = self.read_config(folder)
        check_mapped(refuse_pickles(folder), cfg, marian_name_map(cfg), _ignored(cfg), prefixes=("model.",))

    def load(self, folder: Path, name: str | None = None, example: str | None = None) -> Bundle:
        return load_marian_folder(folder, name=name, example=example)


MARIAN = MarianFormat()
