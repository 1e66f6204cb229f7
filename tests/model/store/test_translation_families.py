"""Marian, BART and mBART folders, opened through the user-model loader and held to ``transformers``.

Each family is a tiny random model built from a ``transformers`` config (seeded, no hub) with a tokenizer
trained here (tests/model/store/seq2seq_folders.py). On a teacher-forced pair every encoder, decoder and
cross-attention pattern is within 1e-5 of ``transformers``' eager pass and the logits within 1e-4; greedy
decoding equals ``generate(num_beams=1)``; the tokenizers give ``transformers``' ids. Beam search is held to
its own invariants (ours lets finished hypotheses leave the beam, ``generate`` refills it).
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from model.decoding.beam import beam_search
from model.decoding.decoders import greedy_decode
from model.network.kinds import hook_name
from model.network.positional import sinusoidal_table
from model.store.user_folders import load_user_model

from .seq2seq_folders import (
    EN,
    TOKENIZER_SENTENCES,
    ZH,
    assert_refused_in_one_line,
    bart_folder,
    marian_folder,
    separate_marian_folder,
)

pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

FAMILIES = ("marian", "bart", "mbart")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """family -> (folder, transformers tokenizer, transformers model, our bundle)."""
    root = tmp_path_factory.mktemp("seq2seq")
    out = {}
    for family in FAMILIES:
        folder, tok, hf = marian_folder(root) if family == "marian" else bart_folder(root, family)
        out[family] = (folder, tok, hf, load_user_model(folder))
    return out


def _inputs(family: str) -> list[str]:
    return ZH[:5] if family == "marian" else EN[:5]


def test_halves_layout_is_marians_sinusoidal_table():
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    table = MarianSinusoidalPositionalEmbedding(40, 16)
    theirs = table.create_weight() if hasattr(table, "create_weight") else table._init_weight(table.weight)
    ours = sinusoidal_table(40, 16, "halves")
    assert (ours - theirs).abs().max() < 1e-6
    assert (sinusoidal_table(40, 16) - ours).abs().max() > 0.5  # the paper's interleaved layout differs


@pytest.mark.parametrize("family", FAMILIES)
def test_patterns_and_logits_match_transformers(built, family):
    _, _, hf, bundle = built[family]
    pairs = zip(_inputs(family), EN[:5] if family == "marian" else ZH[:5], strict=True)
    _assert_teacher_forced_parity(hf, bundle, pairs)


def _assert_teacher_forced_parity(hf, bundle, pairs) -> None:
    """Every (text, reference) pair read teacher-forced by both: encoder, decoder and cross-attention
    patterns within 1e-5 of transformers' eager pass, logits within 1e-4 (and as wide as its own)."""
    model, task = bundle.model, bundle.task
    worst = {"encoder": 0.0, "decoder": 0.0, "cross": 0.0, "logits": 0.0}
    for text, reference in pairs:
        prepared = task.prepare(text, model.cfg.max_len)
        target, _ = task.target_ids(reference, prepared.direction)
        src, tgt = torch.tensor([prepared.source_ids]), torch.tensor([prepared.prefix + target])
        with torch.no_grad():
            out = hf(input_ids=src, decoder_input_ids=tgt, output_attentions=True)
            logits, cache = model.run_with_cache(src, tgt)
        assert logits.shape[-1] == out.logits.shape[-1]
        worst["logits"] = max(worst["logits"], (out.logits - logits).abs().max().item())
        for kind, theirs in (("encoder", out.encoder_attentions), ("decoder", out.decoder_attentions),
                             ("cross", out.cross_attentions)):
            for i, pattern in enumerate(theirs):
                diff = (pattern - cache[hook_name(kind, i, "pattern")]).abs().max().item()
                worst[kind] = max(worst[kind], diff)
    assert worst["logits"] <= 1e-4, worst
    assert max(worst[k] for k in ("encoder", "decoder", "cross")) <= 1e-5, worst


def _generate(hf, family: str, src: list[int], prefix: list[int], new: int) -> list[int]:
    """transformers' greedy decoding with its extras neutralised: no forced </s> at the length limit, no
    banned <pad>, no minimum length; the decoder starts from our prefix (mBART: </s> and the forced code)."""
    out = hf.generate(torch.tensor([src]), decoder_input_ids=torch.tensor([prefix]), num_beams=1,
                      do_sample=False, max_new_tokens=new, min_length=0, forced_eos_token_id=None,
                      forced_bos_token_id=None, bad_words_ids=None, eos_token_id=hf.config.eos_token_id)
    ids = out[0, len(prefix):].tolist()
    eos = hf.config.eos_token_id
    return ids[: ids.index(eos)] if eos in ids else ids


@pytest.mark.parametrize("family", FAMILIES)
def test_greedy_decoding_equals_generate(built, family):
    _, _, hf, bundle = built[family]
    model, task = bundle.model, bundle.task
    new = 12
    for text in _inputs(family):
        prepared = task.prepare(text, model.cfg.max_len)
        ours = greedy_decode(model, [prepared.source_ids], [prepared.prefix], task.tokenizer.eos_id, new)[0]
        assert ours == _generate(hf, family, prepared.source_ids, prepared.prefix, new), text


@pytest.mark.parametrize("family", FAMILIES)
def test_beam_search_invariants(built, family):
    """Width 1 is greedy decoding; every finished hypothesis' logp is its teacher-forced log-probability;
    hypotheses come best first; a wider beam never scores below a narrower one's best hypothesis."""
    _, _, _, bundle = built[family]
    model, task = bundle.model, bundle.task
    eos = task.tokenizer.eos_id
    for text in _inputs(family)[:3]:
        p = task.prepare(text, model.cfg.max_len)
        greedy = greedy_decode(model, [p.source_ids], [p.prefix], eos, 8)[0]
        assert beam_search(model, [p.source_ids], [p.prefix], eos, width=1, max_new=8)[0].best.ids == greedy
        result = beam_search(model, [p.source_ids], [p.prefix], eos, width=4, max_new=8,
                             length_penalty=0.0)[0]
        scores = [h.score for h in result.finished]
        assert scores == sorted(scores, reverse=True)
        for hyp in result.finished[:4]:
            ids = p.prefix + hyp.ids + ([eos] if hyp.ended else [])
            with torch.no_grad():
                logits = model(torch.tensor([p.source_ids]), torch.tensor([ids[:-1]]))
            logp = torch.log_softmax(model.named_logits(logits[0]), -1)
            start = len(p.prefix) - 1
            forced = sum(logp[start + j, t].item() for j, t in enumerate(ids[len(p.prefix):]))
            assert forced == pytest.approx(hyp.logp, abs=1e-4)
        greedy_logp = beam_search(model, [p.source_ids], [p.prefix], eos, width=1, max_new=8,
                                  length_penalty=0.0)[0].best.score
        assert result.best.score >= greedy_logp - 1e-6


def test_marian_tokenizer_ids_equal_transformers(built):
    _, tok, _, bundle = built["marian"]
    task = bundle.task
    assert len(TOKENIZER_SENTENCES) == 20
    unknown = 0
    for text in TOKENIZER_SENTENCES:
        prepared = task.prepare(text, 64)
        assert prepared.source_ids == tok(text).input_ids, text
        target, notes = task.target_ids(text, "zh->en")
        assert target + [task.tokenizer.eos_id] == tok(text_target=text).input_ids, text
        unknown += bool(task.tokenizer.unknown_characters(text))
    assert unknown >= 4  # the unknown characters' sentences do hold pieces the vocabulary lacks


@pytest.mark.parametrize("family", ("bart", "mbart"))
def test_bart_tokenizer_ids_equal_transformers(built, family):
    _, tok, _, bundle = built[family]
    for text in TOKENIZER_SENTENCES:
        assert bundle.task.prepare(text, 64).source_ids == tok(text).input_ids, text


def test_directions_and_frames(built):
    marian, bart, mbart = (built[f][3].task for f in FAMILIES)
    assert marian.directions == ["zh->en"] and marian.prepare(ZH[0], 64).prefix == [marian.tokenizer.pad_id]
    assert bart.directions == [] and bart.prepare(EN[0], 64).prefix == [2]
    assert mbart.directions == ["en->zh", "zh->en"]
    codes = {c: mbart.tokenizer.token_to_id(c) for c in ("en_XX", "zh_CN")}
    forward, back = mbart.prepare(EN[0], 64, "en->zh"), mbart.prepare(ZH[0], 64, "zh->en")
    assert forward.source_ids[0] == codes["en_XX"] and forward.prefix == [2, codes["zh_CN"]]
    assert back.source_ids[0] == codes["zh_CN"] and back.prefix == [2, codes["en_XX"]]


def test_multi_target_marian_reads_target_tokens(tmp_path):
    folder, tok, _ = marian_folder(tmp_path, targets=("fra", "spa"))
    task = load_user_model(folder).task
    assert task.directions == ["zh->fra", "zh->spa"]
    assert task.prepare(ZH[1], 64, "zh->spa").source_ids == tok(">>spa<< " + ZH[1]).input_ids


def _copy(built, family: str, tmp_path):
    target = tmp_path / family
    shutil.copytree(built[family][0], target)
    return target


def _edit_config(folder, **changes):
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))


def _poison(folder):
    from safetensors.torch import load_file, save_file

    state = load_file(str(folder / "model.safetensors"))
    state["model.shared.weight"][3, 5] = float("nan")
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})


HOSTILE = {
    "a NaN weight": ("marian", _poison, "NaN"),
    "no source.spm": ("marian", lambda f: (f / "source.spm").unlink(), "source.spm"),
    "vocab.json a list": ("marian", lambda f: (f / "vocab.json").write_text("[1, 2]"), "vocab.json"),
    "garbage spm": ("marian", lambda f: (f / "target.spm").write_bytes(b"\x00not a model" * 10),
                    "target.spm"),
    "pickles only": ("marian", lambda f: ((f / "model.safetensors").rename(f / "pytorch_model.bin")),
                     "pytorch_model.bin"),
    # the decoder would have a vocabulary of its own, but the tokenizer names no target ids
    "separate vocabularies": ("marian", lambda f: _edit_config(f, share_encoder_decoder_embeddings=False),
                              "separate_vocabs"),
    "decoder_vocab_size differs but shared": ("marian", lambda f: _edit_config(f, decoder_vocab_size=40),
                                              "decoder_vocab_size"),
    "unknown activation": ("bart", lambda f: _edit_config(f, activation_function="tanh"), "tanh"),
    "wrong width": ("bart", lambda f: _edit_config(f, d_model=48), "does not match"),
    "huge vocabulary": ("bart", lambda f: _edit_config(f, vocab_size=10**9), "vocab_size"),
    "decoder start out of range": ("bart", lambda f: _edit_config(f, decoder_start_token_id=10**6),
                                   "decoder_start_token_id"),
    "mbart without languages": ("mbart", lambda f: (f / "tokenizer_config.json").write_text("{}"),
                                "src_lang"),
    "no tokenizer.json": ("bart", lambda f: (f / "tokenizer.json").unlink(), "tokenizer.json"),
}


def _separate_vocabularies(folder, where: str):
    """A shared-vocabulary Marian whose tokenizer says separate_vocabs (in ``where``: config.json or
    tokenizer_config.json), with or without target_vocab.json: its network has one table, so no target
    vocabulary can name the decoder's ids."""
    (folder / "target_vocab.json").write_text((folder / "vocab.json").read_text(encoding="utf-8"),
                                              encoding="utf-8")
    name = folder / where
    config = json.loads(name.read_text())
    config["separate_vocabs"] = True
    name.write_text(json.dumps(config))
    if where == "tokenizer_config.json":
        (folder / "target_vocab.json").unlink()


HOSTILE["separate_vocabs in config.json"] = ("marian", lambda f: _separate_vocabularies(f, "config.json"),
                                             "separate_vocabs")
HOSTILE["separate_vocabs in tokenizer_config.json"] = (
    "marian", lambda f: _separate_vocabularies(f, "tokenizer_config.json"), "separate_vocabs")


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_folders_are_refused_in_one_line(built, tmp_path, case):
    family, spoil, named = HOSTILE[case]
    folder = _copy(built, family, tmp_path)
    spoil(folder)
    assert_refused_in_one_line(folder, named)


def test_the_command_line_translates_with_a_marian_folder(built):
    """``python -m model translate --model-dir`` prints, for each text, what ``transformers``' greedy
    ``generate`` writes from MarianTokenizer's ids, the decoder started from <pad>, up to max_len."""
    from tests.cli_run import model_cli

    folder, tok, hf, bundle = built["marian"]
    texts = ZH[:4]
    run = model_cli(["translate", "--model-dir", str(folder), *texts])
    assert run.returncode == 0 and "Traceback" not in run.stderr, run
    lines = run.stdout.split("\n")
    assert lines[-1] == "" and len(lines) == len(texts) + 1, run
    start, room = hf.config.decoder_start_token_id, bundle.model.cfg.max_len - 1
    lengths = []
    for text, line in zip(texts, lines, strict=False):
        ids = _generate(hf, "marian", tok(text).input_ids, [start], room)
        assert line == bundle.task.tokenizer.decode(ids), (text, run)
        assert line == tok.decode(ids, skip_special_tokens=True), text
        lengths.append(len(ids))
    assert max(lengths) >= 6, lengths  # the comparison covers decoding steps past the first few


def test_the_command_line_caps_a_marian_translation_as_generate_does(built):
    """``translate --max-new-tokens N`` on a Marian folder prints, for each text, what ``transformers``'
    ``generate(max_new_tokens=N, num_beams=1)`` writes from the same ids: N tokens, or fewer where </s>
    comes first."""
    from tests.cli_run import model_cli

    folder, tok, hf, bundle = built["marian"]
    texts = ZH[:4]
    start = hf.config.decoder_start_token_id
    whole = [_generate(hf, "marian", tok(t).input_ids, [start], bundle.model.cfg.max_len - 1) for t in texts]
    for n in (1, 3):
        run = model_cli(["translate", "--model-dir", str(folder), "--max-new-tokens", str(n), *texts])
        assert run.returncode == 0 and "Traceback" not in run.stderr, run
        lines = run.stdout.split("\n")
        assert lines[-1] == "" and len(lines) == len(texts) + 1, run
        for text, line, full in zip(texts, lines, whole, strict=False):
            ids = _generate(hf, "marian", tok(text).input_ids, [start], n)
            assert line == bundle.task.tokenizer.decode(ids), (text, run)
            assert line == tok.decode(ids, skip_special_tokens=True), text
            assert ids == full[:n], text  # the cap cuts the whole translation, nothing else changes
    assert max(len(ids) for ids in whole) > 3, whole  # the cap of 3 cut some of them


@pytest.mark.parametrize("family", ["marian", "bart"])
def test_the_picker_describes_a_translation_folder_as_one(built, family, tmp_path, monkeypatch):
    """An uploaded translation folder and the same folder in the Hugging Face cache are listed as
    encoder–decoder models with the translation task and all three attention kinds (they were once
    described as decoder-only language models, and a cached one broke the picker)."""
    from model.network.kinds import ATTENTION_KINDS
    from model.store.sources.hf_cache import HubCacheSource
    from model.store.sources.user import register, unregister_user_model, user_model_info
    from tests.model.store.test_hf_cache import _into_cache

    folder = built[family][0]
    entry = register(folder, f"{family}.zip", family, owner="test", taken=set())
    try:
        info = user_model_info(entry)
    finally:
        unregister_user_model(entry.name)
    every_kind = tuple(k.name for k in ATTENTION_KINDS)
    assert info.task == "translation" and info.kinds == every_kind
    assert "decoder-only" not in info.description and info.text("description", "zh") != info.description
    bundle = load_user_model(folder)
    assert info.example == bundle.task.example  # the picker's example is the one the model starts with

    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    _into_cache(folder, tmp_path / "hf" / "hub", f"Helsinki-NLP/opus-mt-{family}")
    source = HubCacheSource()
    (name,) = source.names()
    cached = source.info(name)
    assert cached.task == "translation" and cached.kinds == every_kind
    assert f"({family})" in cached.description


# --------------------------------------------------------------------------- separate vocabularies


@pytest.fixture(scope="module")
def separate(tmp_path_factory):
    """(folder, MarianTokenizer(separate_vocabs=True), transformers model, our bundle)."""
    folder, tok, hf = separate_marian_folder(tmp_path_factory.mktemp("separate"))
    return folder, tok, hf, load_user_model(folder)


def _target_names(tok) -> dict[int, str]:
    return {i: t for t, i in tok.target_encoder.items()}


def test_separate_vocabularies_give_the_decoder_its_own_table(separate):
    _, tok, hf, bundle = separate
    cfg, task = bundle.cfg, bundle.task
    assert hf.config.share_encoder_decoder_embeddings is False
    assert (cfg.vocab_size, cfg.target_vocab_size) == (hf.config.vocab_size, hf.config.decoder_vocab_size)
    assert cfg.target_vocab_size < cfg.vocab_size
    model = bundle.model
    assert model.token_embed.weight.shape[0] == cfg.vocab_size
    assert model.target_embed.weight.shape[0] == model.unembed.weight.shape[0] == cfg.target_vocab_size
    assert torch.equal(model.token_embed.weight, hf.model.encoder.embed_tokens.weight)
    assert torch.equal(model.target_embed.weight, hf.model.decoder.embed_tokens.weight)
    assert task.target_tokenizer is not task.tokenizer and bundle.target_tokenizer is task.target_tokenizer


@pytest.mark.parametrize("family", [*FAMILIES, "separate"])
def test_the_model_pages_parameter_formula_counts_what_the_model_holds(built, separate, family):
    """The model page's parameter table (from the config alone) sums to the loaded modules' parameters, the
    bias on every logit (final_logits_bias, a buffer in transformers) included. (transformers' own count
    differs by what we do not hold: Marian's fixed sinusoidal tables, BART's two unread position rows.)"""
    from app_support.anatomy import model_parameters

    _, _, hf, bundle = separate if family == "separate" else built[family]
    parts = {part: value for part, _, value in model_parameters(bundle.cfg)}
    held = {id(p): p.numel() for p in bundle.model.parameters()}  # tied matrices once
    assert sum(parts.values()) == sum(held.values())
    assert parts["logits_bias"] == hf.final_logits_bias.numel() == bundle.cfg.output_vocab_size


def test_separate_vocabularies_patterns_and_logits_match_transformers(separate):
    _, _, hf, bundle = separate
    assert bundle.model.cfg.output_vocab_size == hf.config.decoder_vocab_size
    _assert_teacher_forced_parity(hf, bundle, zip(ZH[:5], EN[:5], strict=True))


def test_separate_vocabularies_greedy_decoding_equals_generate(separate):
    _, tok, hf, bundle = separate
    model, task = bundle.model, bundle.task
    outputs = []
    for text in ZH[:5]:
        prepared = task.prepare(text, model.cfg.max_len)
        eos = task.target_tokenizer.eos_id
        ours = greedy_decode(model, [prepared.source_ids], [prepared.prefix], eos, 12)[0]
        assert ours == _generate(hf, "marian", prepared.source_ids, prepared.prefix, 12), text
        assert task.target_tokenizer.decode(ours) == tok.decode(ours, skip_special_tokens=True), text
        outputs.append(tuple(ours))
    assert len(set(outputs)) > 1  # the inputs do lead to different outputs


def test_separate_vocabularies_token_ids_equal_marian_tokenizer(separate):
    """Source ids from vocab.json and target ids from target_vocab.json, as MarianTokenizer(separate_vocabs)
    gives them, and each target id named as it names it."""
    _, tok, _, bundle = separate
    task = bundle.task
    assert tok.separate_vocabs and len(TOKENIZER_SENTENCES) == 20
    names = _target_names(tok)
    differ = 0
    for text in TOKENIZER_SENTENCES:
        prepared = task.prepare(text, 64)
        assert prepared.source_ids == tok(text).input_ids, text
        target, _ = task.target_ids(text, "zh->en")
        theirs = tok(text_target=text).input_ids
        assert target + [task.target_tokenizer.eos_id] == theirs, text
        assert task.target_tokenizer.tokens(theirs) == [names[i] for i in theirs], text
        differ += target != prepared.source_ids[:-1]
    assert differ >= 18  # the two sides really give other ids


def test_an_analysis_names_decoder_ids_from_the_target_vocabulary(separate):
    """Decoder rows, the output text and every step's tokens come from target_vocab.json; source tokens
    from vocab.json (the same ids name other pieces there)."""
    from model.run.analysis import analyze

    _, tok, _, bundle = separate
    names, source_names = _target_names(tok), {i: t for t, i in tok.encoder.items()}
    forced = analyze(bundle, ZH[0], target=EN[0])
    ids = [bundle.task.prepare(ZH[0], 64).prefix[0], *tok(text_target=EN[0]).input_ids[:-1]]
    assert forced.target_tokens == [names[i] for i in ids]
    assert forced.target_tokens != [source_names.get(i) for i in ids]
    assert forced.source_tokens == [source_names[i] for i in tok(ZH[0]).input_ids]
    assert [s.token for s in forced.steps] == [names[i] for i in tok(text_target=EN[0]).input_ids]
    assert all(t in tok.target_encoder for s in forced.steps for t in s.top_tokens)
    free = analyze(bundle, ZH[1])
    out = [s.token_id for s in free.steps][:-1]
    assert free.output_text == tok.decode(out, skip_special_tokens=True)


def _spoil_target_vocab(folder, **moved):
    vocab = json.loads((folder / "target_vocab.json").read_text(encoding="utf-8"))
    for token, i in moved.items():
        other = next(t for t, j in vocab.items() if j == i)
        vocab[other], vocab[token] = vocab[token], i
    (folder / "target_vocab.json").write_text(json.dumps(vocab), encoding="utf-8")


def _edit_tokenizer_config(folder, **changes):
    name = folder / "tokenizer_config.json"
    config = json.loads(name.read_text())
    config.update(changes)
    name.write_text(json.dumps(config))


SEPARATE_HOSTILE = {
    "no target_vocab.json": (lambda f: (f / "target_vocab.json").unlink(), "target_vocab.json"),
    "target_vocab.json a list": (lambda f: (f / "target_vocab.json").write_text("[1, 2]"),
                                 "target_vocab.json"),
    "separate_vocabs not said": (lambda f: _edit_tokenizer_config(f, separate_vocabs=False),
                                 "separate_vocabs"),
    "no decoder_vocab_size": (lambda f: _edit_config(f, decoder_vocab_size=None), "decoder_vocab_size"),
    "huge decoder_vocab_size": (lambda f: _edit_config(f, decoder_vocab_size=10**9), "decoder_vocab_size"),
    "decoder_vocab_size not a number": (lambda f: _edit_config(f, decoder_vocab_size="53"),
                                        "decoder_vocab_size"),
    "target ids past decoder_vocab_size": (lambda f: _edit_config(f, decoder_vocab_size=10),
                                           "decoder_vocab_size"),
    "weights of another target size": (lambda f: _edit_config(f, decoder_vocab_size=60), "does not match"),
    "target </s> elsewhere": (lambda f: _spoil_target_vocab(f, **{"</s>": 5}), "eos_token_id"),
    "target <pad> elsewhere": (lambda f: _spoil_target_vocab(f, **{"<pad>": 7}), "pad_token_id"),
    "decoder start past the target vocabulary": (lambda f: _edit_config(f, decoder_start_token_id=60),
                                                  "decoder_start_token_id"),
}


@pytest.mark.parametrize("case", sorted(SEPARATE_HOSTILE))
def test_hostile_separate_vocabulary_folders_are_refused_in_one_line(separate, tmp_path, case):
    spoil, named = SEPARATE_HOSTILE[case]
    folder = tmp_path / "marian-separate"
    shutil.copytree(separate[0], folder)
    spoil(folder)
    assert_refused_in_one_line(folder, named)


def test_ablation_patching_and_attribution_name_outputs_from_the_target_vocabulary(separate):
    """The lab's decoder-side labels on a separate-vocabulary Marian: each step's token, the output texts and
    the attributed outputs are the greedy output's ids as target_vocab.json names them (MarianTokenizer's
    decode for the texts); the source tokens as vocab.json names them."""
    from model.lab.ablation import ablate
    from model.lab.attribution import attribute
    from model.lab.choices import Site
    from model.lab.patching import patch

    _, tok, _, bundle = separate
    model, task = bundle.model, bundle.task
    names, source_names = _target_names(tok), {i: t for t, i in tok.encoder.items()}
    eos = task.target_tokenizer.eos_id
    outputs = {}
    for text in ZH[:2]:
        p = task.prepare(text, model.cfg.max_len)
        ids = greedy_decode(model, [p.source_ids], [p.prefix], eos, None)[0]
        stopped = len(p.prefix) + len(ids) < model.cfg.max_len
        outputs[text] = (ids, [names[i] for i in ids + ([eos] if stopped else [])])
    ids, tokens = outputs[ZH[0]]
    assert tokens != [source_names.get(i) for i in ids[: len(tokens)]]
    ablation = ablate(bundle, ZH[0], heads=[("cross", 0, 1)])
    assert [s.token for s in ablation.steps] == tokens
    assert ablation.intact_output == tok.decode(ids, skip_special_tokens=True)
    assert all(t in tok.target_encoder for s in ablation.steps for t, _ in s.top_intact + s.top_ablated)
    patched = patch(bundle, ZH[0], ZH[1], Site("resid", "decoder", 0))
    assert [s.token for s in patched.steps] == outputs[ZH[1]][1]
    assert patched.output_a == tok.decode(ids, skip_special_tokens=True)
    attribution = attribute(bundle, ZH[0], n_steps=2, outputs=3)
    assert attribution.output_tokens == tokens[:3]
    assert attribution.source_tokens == [source_names[i] for i in tok(ZH[0]).input_ids]


def test_a_multi_target_separate_vocabulary_marian_reads_target_tokens_from_the_source_vocabulary(tmp_path):
    """>>xx<< tokens open the source, so they are source ids (vocab.json), as MarianTokenizer reads them."""
    folder, tok, _ = separate_marian_folder(tmp_path, targets=("fra", "spa"))
    task = load_user_model(folder).task
    assert task.directions == ["zh->fra", "zh->spa"]
    assert task.prepare(ZH[1], 64, "zh->spa").source_ids == tok(">>spa<< " + ZH[1]).input_ids
