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
from model.store.problems import UserModelError
from model.store.user_folders import load_user_model

from .seq2seq_folders import EN, TOKENIZER_SENTENCES, ZH, bart_folder, marian_folder

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
    folder, tok, hf, bundle = built[family]
    model, task = bundle.model, bundle.task
    worst = {"encoder": 0.0, "decoder": 0.0, "cross": 0.0, "logits": 0.0}
    for text, reference in zip(_inputs(family), EN[:5] if family == "marian" else ZH[:5], strict=True):
        prepared = task.prepare(text, model.cfg.max_len)
        target, _ = task.target_ids(reference, prepared.direction)
        src = torch.tensor([prepared.source_ids])
        tgt = torch.tensor([prepared.prefix + target])
        with torch.no_grad():
            out = hf(input_ids=src, decoder_input_ids=tgt, output_attentions=True)
            logits, cache = model.run_with_cache(src, tgt)
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
    "separate vocabularies": ("marian", lambda f: _edit_config(f, share_encoder_decoder_embeddings=False),
                              "separate"),
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
    """The folder as a separate-vocabulary Marian: target_vocab.json beside vocab.json, separate_vocabs in
    ``where`` (config.json or tokenizer_config.json)."""
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


def test_a_marian_with_separate_vocabularies_is_refused_in_one_line(tmp_path):
    """A folder ``transformers`` saves for a Marian whose decoder has a vocabulary of its own (source ids
    from vocab.json, target ids from target_vocab.json, no shared embedding): refused, saying why."""
    import transformers

    from .seq2seq_folders import DIMS

    folder, tok, _ = marian_folder(tmp_path)
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    # the target's own ids: the pieces in another order, </s>, <unk> and <pad> where the source has them
    pieces = [t for t in vocab if t not in ("</s>", "<unk>", "<pad>")][::-1]
    target = {t: i for i, t in enumerate(["</s>", "<unk>", *pieces, "<pad>"])}
    assert target["<pad>"] == vocab["<pad>"] and target != vocab
    (folder / "target_vocab.json").write_text(json.dumps(target), encoding="utf-8")
    cfg = transformers.MarianConfig(vocab_size=len(vocab), decoder_vocab_size=len(target),
                                    share_encoder_decoder_embeddings=False, pad_token_id=vocab["<pad>"],
                                    eos_token_id=0, decoder_start_token_id=vocab["<pad>"], **DIMS)
    transformers.MarianMTModel(cfg).save_pretrained(folder, safe_serialization=True)
    with pytest.raises(UserModelError) as caught:
        load_user_model(folder)
    message = str(caught.value)
    assert "\n" not in message and "separate source and target vocabularies" in message, message


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_folders_are_refused_in_one_line(built, tmp_path, case):
    family, spoil, named = HOSTILE[case]
    folder = _copy(built, family, tmp_path)
    spoil(folder)
    with pytest.raises(UserModelError) as caught:
        load_user_model(folder)
    message = str(caught.value)
    assert "\n" not in message and named in message, message


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
