"""Messages to the user: every code has English text whose placeholders are the params given."""

import json
import pickle
import re
from pathlib import Path

import pytest
import torch

from model.core.messages import ENGLISH, SEVERITIES, Message, placeholders, render
from model.data.tasks import EncodeTask, InputError, SyntheticTask, TranslationTask
from model.data.tokenizers import WordPieceTokenizer
from model.data.translation_tokenizer import TranslationTokenizer
from model.export.archive import inspect_meta
from model.network.transformer import Transformer
from model.run.analysis import analyze, attention_only
from model.run.interventions import CausalMask
from model.store.budget import within_budget
from model.store.bundle import Bundle
from model.store.registry import load_model, model_dir
from model.store.sources.packages import PRETRAINED, pretrained_path
from tests.conftest import tiny_config
from tests.paths import REPO_ROOT

ROOT = REPO_ROOT


def _codes_in_sources() -> set[str]:
    codes = set()
    for path in (ROOT / "model").rglob("*.py"):
        codes |= set(re.findall(r'Message\(\s*"(\w+)"', path.read_text(encoding="utf-8")))
    return codes


@pytest.fixture(scope="module")
def translation() -> TranslationTask:
    return TranslationTask(TranslationTokenizer.load(model_dir("default") / "tokenizer.json"))


def _never_ending_bundle(max_len: int = 8) -> Bundle:
    """A tiny model whose logits are all 0: argmax picks <pad> forever, never <eos>."""
    task = SyntheticTask("reverse")
    cfg = tiny_config(vocab_size=task.tokenizer.vocab_size, max_len=max_len, tie_embeddings=False)
    model = Transformer(cfg).eval()
    with torch.no_grad():
        model.unembed.weight.zero_()
    return Bundle(name="tiny", model=model, task=task, directory=Path("."))


def _error(fn, *args, **kwargs) -> Message:
    with pytest.raises(InputError) as info:
        fn(*args, **kwargs)
    return info.value.message


@pytest.fixture(scope="module")
def produced(translation, tmp_path_factory) -> dict[str, Message]:
    """One message per code, each made by the code path that makes it in real use."""
    synthetic = SyntheticTask("reverse")
    out: list[Message] = []
    out += synthetic.prepare("abcdefghijklmnopqrstuvwxyz", max_len=10).notes  # truncated
    out += synthetic.prepare("ab1c", max_len=16).notes  # unknown characters
    out += synthetic.prepare("Hello", max_len=16).notes  # lowercased
    out += synthetic.target_ids("ab1")[1]  # unknown characters in the target
    out += translation.prepare("我們學習中文", max_len=32, direction="zh->en").notes  # Traditional input
    out += translation.target_ids("我們學習中文", "en->zh")[1]  # Traditional target
    bundle = _never_ending_bundle()
    out += analyze(bundle, "abc").notes  # output hit max length
    out += analyze(bundle, "abc", target="abcdefghijkl").notes  # target cut
    # a model its budget clamped, on an input cut at that limit
    out += analyze(within_budget(_never_ending_bundle(max_len=16), 8), "abcdefghijkl").notes
    out += analyze(_never_ending_bundle(max_len=16), "abc", max_new=3).notes  # stopped at max_new
    # a language model under an edit that makes its decoding cache stale: two passes, not one
    out += analyze(load_model("induction"), "abcab", edits=(CausalMask("reversed"),), keep=attention_only,
                   max_new=2).notes
    # a Phi-3 longrope model (factors switch past 16 positions): below, past, and crossed by the output
    from tests.model.store.test_phi3_longrope import HF_DECODER, SWITCH
    from tests.model.store.test_phi3_longrope import _save as save_longrope

    folder = tmp_path_factory.mktemp("longrope")
    save_longrope(folder)
    longrope = HF_DECODER.load(folder)
    for words, new in ((6, 4), (SWITCH + 3, 3), (10, 12)):
        out += analyze(longrope, " ".join(f"w{i}" for i in range(5, 5 + words)), max_new=new,
                       keep=attention_only).notes
    out.append(_error(synthetic.prepare, "   ", 16))
    out.append(_error(synthetic.prepare, "ab\udcff", 16))
    out.append(_error(translation.prepare, "hello", 32, "fr->en"))
    out.append(_error(analyze, bundle, "abc", target="  "))
    # an encoder-only model's task (MiniLM's WordPiece tokenizer; trained_len small to reach the note)
    encode = EncodeTask(WordPieceTokenizer.load(pretrained_path(PRETRAINED[0]) / "tokenizer.json"),
                        trained_len=6)
    out += encode.prepare("The Bank raised interest rates by the river bank 🦜", 10).notes  # uncased,
    # truncated pieces, an unknown word, beyond the trained length
    out.append(_error(encode.target_ids, "a target"))  # no decoder
    out += EncodeTask(encode.tokenizer, prefix="query: ").prepare("a sentence", 16).notes  # e5's prefix
    by_code: dict[str, Message] = {}
    for m in out:
        assert isinstance(m, Message), m
        by_code.setdefault(m.code, m)
    return by_code


def test_every_code_in_model_sources_has_english_text():
    codes = _codes_in_sources()
    assert len(codes) >= 12
    assert codes <= set(ENGLISH)


def test_the_real_code_paths_produce_every_english_code(produced):
    assert set(produced) == set(ENGLISH)
    assert _codes_in_sources() <= set(produced)


def test_placeholders_are_exactly_the_params_given(produced):
    for code, message in produced.items():
        assert placeholders(ENGLISH[code]) == set(message.kwargs), code


def test_str_is_the_english_rendering(produced):
    for message in produced.values():
        assert str(message) == render(message) == render(message, ENGLISH)
        assert "{" not in str(message)


def test_severities(produced):
    assert {c for c, m in produced.items() if m.severity == "info"} == {
        "input_lowercased",
        "input_script_converted",
        "target_script_converted",
        "input_uncased",
        "beyond_trained_length",
        "budget_clamped",  # why a cut was where it was: the cut itself is the warning
        "output_max_new",  # the bound the user set (or the decoder-only default): nothing went wrong
        "input_prefixed",  # what the model is made to read (e5's "query: "): nothing went wrong
        "two_passes",  # how the analysis was computed: the numbers are the same
        "rope_factors_short", "rope_factors_long",  # which longrope factors the numbers come from
        "rope_factors_switched",  # the same, when the output crossed the switch (as transformers does)
    }
    assert {c for c, m in produced.items() if m.severity == "warning"} == {
        "input_truncated",
        "unknown_characters",
        "target_unknown_characters",
        "target_cut",
        "output_max_length",
        "input_truncated_pieces",
        "unknown_words",
    }
    assert {m.severity for m in produced.values()} <= set(SEVERITIES)
    with pytest.raises(ValueError, match="severity"):
        Message("empty_input", {}, "fatal")


def test_english_wording_is_kept(produced):
    text = {code: str(m) for code, m in produced.items()}
    assert text["input_truncated"] == (
        "The input is 26 tokens long; the model reads at most 10 (end token included), "
        "so it was truncated to its first 9 tokens."
    )
    assert (
        text["unknown_characters"] == "1 character(s) unknown to this model's tokenizer, shown as <unk>: '1'"
    )
    assert text["target_unknown_characters"] == (
        "The target has characters this model does not know, shown as <unk>: ['1']"
    )
    assert "lowercased" in text["input_lowercased"]
    assert (
        "Traditional" in text["input_script_converted"] and "Traditional" in text["target_script_converted"]
    )
    assert text["target_cut"] == "The target was cut to the model's maximum of 8 tokens."
    assert (
        text["output_max_length"] == "The output reached the maximum length (8 tokens) without an end token."
    )
    assert "empty" in text["empty_input"] and "empty" in text["empty_target"]
    assert text["unknown_direction"] == "Unknown direction 'fr->en'; use one of zh->en, en->zh."


def test_numbers_stay_numbers(produced):
    params = produced["input_truncated"].kwargs
    assert params == {"tokens": 26, "max_len": 10, "kept": 9}
    assert all(type(v) is int for v in params.values())
    assert produced["unknown_characters"].kwargs["count"] == 1


def test_another_table_words_the_same_message_its_own_way(produced):
    table = {**ENGLISH, "input_truncated": "{kept}/{tokens} ({max_len})"}
    assert render(produced["input_truncated"], table) == "9/26 (10)"
    with pytest.raises(KeyError, match="input_truncated"):
        render(produced["input_truncated"], {})


def test_input_error_str_is_the_english_text():
    e = InputError(Message("unknown_direction", {"direction": "x", "choices": "a, b"}, "error"))
    assert str(e) == render(e.message) == "Unknown direction 'x'; use one of a, b."
    assert e.message.severity == "error"


def test_messages_are_hashable_picklable_and_equal_by_value(produced):
    for m in produced.values():
        assert pickle.loads(pickle.dumps(m)) == m
        assert hash(pickle.loads(pickle.dumps(m))) == hash(m)
    a = Message("target_cut", {"max_len": 8}, "warning")
    assert a == Message("target_cut", (("max_len", 8),), "warning")
    assert a != Message("target_cut", {"max_len": 9}, "warning")
    assert len({a, Message("target_cut", {"max_len": 8}, "warning")}) == 1


def test_analysis_notes_are_messages_and_exports_keep_english_strings():
    bundle = _never_ending_bundle()
    result = analyze(bundle, "ABC")
    assert [n.code for n in result.notes] == ["input_lowercased", "output_max_length"]
    meta = inspect_meta(bundle, result, "ABC")
    assert meta["notes"] == [str(n) for n in result.notes]
    assert meta["note_codes"] == ["input_lowercased", "output_max_length"]
    json.dumps(meta)  # strings and codes only: the export stays plain JSON


def test_input_errors_take_a_message_code_not_free_text():
    with pytest.raises(TypeError, match="Message"):
        InputError("free text cannot be translated")
