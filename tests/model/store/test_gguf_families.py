"""GGUF files of Qwen3, Gemma 3 and Phi-3 (and Llama / Qwen2), written here as llama.cpp's converter
writes them, read by us: equal to the same model's Hugging Face folder read by us (patterns <= 1e-5,
logits <= 1e-4) and to transformers' own reading of the GGUF (``gguf_file=``) where its mapping is
complete. Their SentencePiece tokenizer (``tokenizer.ggml.model`` = "llama") reads as transformers
converts it, and hostile files are one line each.

What llama.cpp's converter does, and this writer repeats: tensors renamed (``blk.N.attn_q`` …); Llama's
q and k rows permuted from Hugging Face's rotate-half layout into adjacent pairs (llama.cpp rotates
Llama's pairs, and the other families' halves, as Hugging Face does); Gemma's norm weights stored with
their +1; Phi-3's fused ``qkv_proj`` and ``gate_up_proj`` kept fused (``attn_qkv``, ``ffn_up``).
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")
gguf = pytest.importorskip("gguf")
spm = pytest.importorskip("sentencepiece")

from model.network.kinds import hook_name  # noqa: E402
from model.store.formats import gguf as gguf_format  # noqa: E402
from model.store.formats.gguf_file import GGUFFile  # noqa: E402
from model.store.formats.hf_decoder import HF_DECODER  # noqa: E402
from model.store.problems import UserModelError  # noqa: E402
from model.store.user_folders import load_user_model  # noqa: E402

TRAINING_TEXT = [
    "The quick brown fox jumps over the lazy dog.", "Attention shows which words a model reads.",
    "我喜欢吃苹果。", "今天天气很好，我们去公园散步吧。", "Transformers read text as tokens, 一个一个地。",
    "The capital of France is Paris.", "Machine learning models learn from data.",
    "北京是中国的首都。", "Numbers like 12345 and 3.14 appear too.", "Hello, world! How are you today?",
] * 20
#: The 20 sentences both tokenizers must cut alike: English, Chinese, mixed, and characters the
#: vocabulary has never seen (byte fallback).
SENTENCES = [
    "The quick brown fox", "attention", "我喜欢吃苹果", "今天天气很好", "Hello, world!",
    "Transformers 读 text", "Paris is the capital of France.", "  two leading spaces", "tabs\tand\nnewlines",
    "emoji 🙂 and ñ", "Ελληνικά", "日本語のテキスト", "한국어", "12345 + 678 = 13023", "ünïcödé",
    "a", "", "mixed中文English混合", "The lazy dog sleeps.", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math",
]
SPM_VOCAB = 400


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A SentencePiece BPE model trained here with byte fallback: (its processor, and the (piece, score,
    llama.cpp token type) of each id, as llama.cpp's converter writes a SentencePiece vocabulary)."""
    folder = tmp_path_factory.mktemp("spm")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(TRAINING_TEXT), model_writer=model,
                                   vocab_size=SPM_VOCAB, model_type="bpe", byte_fallback=True,
                                   character_coverage=1.0, minloglevel=2)
    (folder / "spm.model").write_bytes(model.getvalue())
    proc = spm.SentencePieceProcessor(model_file=str(folder / "spm.model"))
    found = []
    for i in range(proc.get_piece_size()):
        kind = (2 if proc.is_unknown(i) else 3 if proc.is_control(i) else 6 if proc.is_byte(i)
                else 5 if proc.is_unused(i) else 1)
        found.append((proc.id_to_piece(i), proc.get_score(i), kind))
    return proc, found


@pytest.fixture(scope="module")
def pieces(trained) -> list[tuple[str, float, int]]:
    return trained[1]


def _letters() -> list[str]:
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    return ["<unk>", "<s>", "</s>", *letters, "Ġ", *[f"Ġ{c}" for c in letters]]


def add_tokenizer(w, arch: str, pieces, vocab: int) -> None:
    """A byte-level vocabulary (Qwen, Llama 3) or the SentencePiece one (Gemma, Phi-3), padded to the
    model's vocabulary with [PADn] tokens as llama.cpp pads it."""
    if arch in ("gemma3", "phi3", "spm-llama"):
        tokens, scores, types = (list(x) for x in zip(*pieces, strict=True))
        w.add_tokenizer_model("llama")
        w.add_tokenizer_pre("default")
        if arch == "gemma3":
            w.add_add_space_prefix(False)
    else:
        tokens = _letters()
        scores, types = None, [1] * len(tokens)
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("qwen2" if arch.startswith("qwen") else "default")
        w.add_token_merges([f"Ġ {chr(c)}" for c in range(ord("a"), ord("z") + 1)])
    pad = vocab - len(tokens)
    assert pad >= 0
    tokens += [f"[PAD{i}]" for i in range(pad)]
    types += [5] * pad
    w.add_token_list(tokens)
    w.add_token_types(types)
    if scores is not None:
        w.add_token_scores(scores + [-1000.0] * pad)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_pad_token_id(0)  # Phi3Config's own default (32000) lies outside a tiny vocabulary


def _to_llama_pairs(t: torch.Tensor, heads: int) -> torch.Tensor:
    """Rows of each head from rotate-half (i, i + d/2) into adjacent pairs (2i, 2i + 1), as llama.cpp's
    converter does for Llama only."""
    return t.reshape(heads, 2, t.shape[0] // heads // 2, *t.shape[1:]).swapaxes(1, 2).reshape(t.shape)


_RENAMES = {
    "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
    "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output", "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
    "self_attn.qkv_proj": "attn_qkv", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
    "mlp.gate_up_proj": "ffn_up", "mlp.down_proj": "ffn_down",
}
_GEMMA_RENAMES = {"post_attention_layernorm": "post_attention_norm", "pre_feedforward_layernorm": "ffn_norm",
                  "post_feedforward_layernorm": "post_ffw_norm"}


def write_gguf(hf, arch: str, path: Path, pieces, extra: dict | None = None) -> Path:
    """``hf`` (a transformers model) as llama.cpp's converter writes it, float32 (and ``extra`` tensors)."""
    c = hf.config
    heads, kv = c.num_attention_heads, c.num_key_value_heads
    head_dim = getattr(c, "head_dim", None) or c.hidden_size // heads
    w = gguf.GGUFWriter(str(path), arch)
    w.add_block_count(c.num_hidden_layers)
    w.add_context_length(c.max_position_embeddings)
    w.add_embedding_length(c.hidden_size)
    w.add_feed_forward_length(c.intermediate_size)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_layer_norm_rms_eps(c.rms_norm_eps)
    w.add_vocab_size(c.vocab_size)
    theta = (c.rope_parameters.get("full_attention", c.rope_parameters) if c.rope_parameters else {}).get(
        "rope_theta", getattr(c, "rope_theta", 10000.0))
    w.add_rope_freq_base(theta)
    if arch in ("qwen3", "gemma3"):
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
    if arch == "gemma3":
        w.add_sliding_window(c.sliding_window)
    rot = (getattr(c, "partial_rotary_factor", None)
           or (c.rope_parameters or {}).get("partial_rotary_factor", 1.0))
    w.add_rope_dimension_count(int(head_dim * rot))
    rope = c.rope_parameters or {}
    if arch == "phi3" and rope.get("rope_type") == "longrope":  # llama.cpp: the factors as two tensors
        original = rope["original_max_position_embeddings"]
        ratio = c.max_position_embeddings / original
        w.add_rope_scaling_orig_ctx_len(original)
        attention = math.sqrt(1 + math.log(ratio) / math.log(original)) if ratio > 1 else 1.0
        w.add_rope_scaling_attn_factors(attention)
        extra = {"rope_factors_long.weight": np.array(rope["long_factor"], dtype=np.float32),
                 "rope_factors_short.weight": np.array(rope["short_factor"], dtype=np.float32),
                 **(extra or {})}
    add_tokenizer(w, arch, pieces, c.vocab_size)
    renames = {**_RENAMES, **_GEMMA_RENAMES} if arch == "gemma3" else _RENAMES
    for name, t in hf.state_dict().items():
        name = name.removeprefix("model.")
        t = t.detach().to(torch.float32).clone()
        if name == "lm_head.weight":
            if c.tie_word_embeddings:
                continue
            out = "output.weight"
        elif name == "embed_tokens.weight":
            out = "token_embd.weight"
        elif name == "norm.weight":
            out = "output_norm.weight"
        else:
            _, i, rest = name.split(".", 2)
            module, param = rest.rsplit(".", 1)
            out = f"blk.{i}.{renames[module]}.{param}"
            if arch == "llama" and module in ("self_attn.q_proj", "self_attn.k_proj"):
                t = _to_llama_pairs(t, heads if module == "self_attn.q_proj" else kv)
        if arch == "gemma3" and name.endswith("norm.weight"):
            t = t + 1.0  # llama.cpp stores Gemma's (1 + weight)
        w.add_tensor(out, t.numpy())
    for name, t in (extra or {}).items():
        w.add_tensor(name, t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _config(arch: str, vocab: int, **over):
    """Tiny seeded configs with the defaults transformers' GGUF reading assumes (qwen3: head_dim 128;
    gemma3: query_pre_attn_scalar 256 = head_dim, a global layer every sixth, local base 10,000)."""
    common = dict(vocab_size=vocab, bos_token_id=1, eos_token_id=2, max_position_embeddings=64,
                  num_attention_heads=4, num_key_value_heads=2, intermediate_size=48, hidden_size=32)
    if arch == "gemma3":
        cfg = transformers.Gemma3TextConfig(
            **{**common, "num_attention_heads": 2, "num_key_value_heads": 1}, head_dim=256,
            query_pre_attn_scalar=256, num_hidden_layers=6, sliding_window=4, rope_theta=500.0)
    elif arch == "phi3":
        cfg = transformers.Phi3Config(**common, num_hidden_layers=2, rope_theta=500.0, pad_token_id=0,
                                      tie_word_embeddings=False, sliding_window=None)
    elif arch == "qwen3":
        cfg = transformers.Qwen3Config(**common, num_hidden_layers=2, head_dim=128, rope_theta=500.0,
                                       tie_word_embeddings=True)
    else:
        cls = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config}[arch]
        cfg = cls(**common, num_hidden_layers=2, rope_theta=500.0, tie_word_embeddings=False)
    for k, v in over.items():
        setattr(cfg, k, v)
    return cfg


def _build(arch: str, folder: Path, pieces, **over):
    """The tiny model saved as a Hugging Face folder, and written as a GGUF beside it."""
    from tokenizers import Tokenizer, models

    torch.manual_seed(0)
    vocab = SPM_VOCAB + 16 if arch in ("gemma3", "phi3") else 96
    hf = transformers.AutoModelForCausalLM.from_config(_config(arch, vocab, **over),
                                                       attn_implementation="eager").eval()
    with torch.no_grad():  # non-trivial norms and biases, so a mix-up shows
        for name, p in hf.named_parameters():
            if "norm" in name or name.endswith("bias"):
                p.add_(torch.randn_like(p) * 0.1)
    folder.mkdir(parents=True, exist_ok=True)
    hf.save_pretrained(folder / "hf", safe_serialization=True)
    Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")).save(str(folder / "hf" / "tokenizer.json"))
    (folder / "gguf").mkdir()
    write_gguf(hf, arch, folder / "gguf" / f"tiny-{arch}.gguf", pieces)
    return hf


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(gguf_format, "CACHE_DIR", tmp_path / "cache")


def _compare(a, b, ids) -> tuple[float, float]:
    la, ca = a.run_with_cache(ids)
    lb, cb = b.run_with_cache(ids)
    worst = max(float((ca[hook_name("decoder", i, "pattern")]
                       - cb[hook_name("decoder", i, "pattern")]).abs().max())
                for i in range(a.cfg.n_dec_layers))
    return worst, float((la - lb).abs().max())


FAMILIES = ["qwen3", "gemma3", "phi3", "llama", "qwen2"]


@pytest.mark.parametrize("arch", FAMILIES)
def test_a_gguf_equals_its_hugging_face_folder_and_transformers_reading_it(arch, tmp_path, pieces):
    hf = _build(arch, tmp_path, pieces)
    path = tmp_path / "gguf" / f"tiny-{arch}.gguf"
    ours = load_user_model(path).model
    folder = HF_DECODER.load(tmp_path / "hf").model
    ids = torch.randint(3, 90, (2, 10), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        patterns, logits = _compare(ours, folder, ids)
    print(f"gguf {arch} vs folder: patterns {patterns:.2e}, logits {logits:.2e}")
    assert patterns <= 1e-5 and logits <= 1e-4
    theirs = transformers.AutoModelForCausalLM.from_pretrained(
        str(tmp_path / "gguf"), gguf_file=path.name, attn_implementation="eager", dtype=torch.float32).eval()
    with torch.no_grad():
        out = theirs(ids, output_attentions=True)
        mine, cache = ours.run_with_cache(ids)
        reference = hf(ids).logits
    worst = max(float((cache[hook_name("decoder", i, "pattern")] - p).abs().max())
                for i, p in enumerate(out.attentions))
    print(f"gguf {arch} vs transformers(gguf_file): patterns {worst:.2e}, "
          f"logits {float((mine - out.logits).abs().max()):.2e}")
    assert worst <= 1e-5 and (mine - out.logits).abs().max() <= 1e-4
    assert (mine - reference).abs().max() <= 1e-4


def test_gemma3_gguf_reads_its_window_norms_and_scale(tmp_path, pieces):
    _build("gemma3", tmp_path, pieces)
    cfg = load_user_model(tmp_path / "gguf" / "tiny-gemma3.gguf").cfg
    assert cfg.sliding_window == 4 and cfg.layer_pattern == "lllllg" and cfg.d_head == 256
    assert cfg.qk_norm == "head" and cfg.branch_norm == "both" and cfg.scale_embeddings


@pytest.mark.parametrize("arch", ["gemma3", "phi3", "spm-llama"])
def test_the_sentencepiece_tokenizer_of_a_gguf_cuts_as_transformers_converts_it(arch, tmp_path, pieces):
    w = gguf.GGUFWriter(str(tmp_path / "tok.gguf"), "llama" if arch == "spm-llama" else arch)
    add_tokenizer(w, arch, pieces, SPM_VOCAB)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with GGUFFile(tmp_path / "tok.gguf") as g:
        ours = g.tokenizer()
    theirs = transformers.AutoTokenizer.from_pretrained(str(tmp_path), gguf_file="tok.gguf")
    for text in SENTENCES:
        want = theirs(text, add_special_tokens=False)["input_ids"]
        got = ours.encode(text, add_special_tokens=False).ids
        assert got == want, (text, got, want)
        assert ours.decode(got) == theirs.decode(want, skip_special_tokens=True), text


def test_a_llama_sentencepiece_gguf_cuts_as_sentencepiece_itself(trained, tmp_path, pieces):
    w = gguf.GGUFWriter(str(tmp_path / "tok.gguf"), "llama")
    add_tokenizer(w, "spm-llama", pieces, SPM_VOCAB)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with GGUFFile(tmp_path / "tok.gguf") as g:
        ours = g.tokenizer()
    # SentencePiece's own engine first applies its NFKC map (𝔘 -> U), which a GGUF does not carry (nor
    # does llama.cpp apply it), and squeezes runs of spaces: the texts neither touches
    import unicodedata

    plain = [t for t in SENTENCES
             if unicodedata.normalize("NFKC", t) == t and "  " not in t and "\t" not in t]
    assert len(plain) >= 15
    for text in plain:
        assert ours.encode(text, add_special_tokens=False).ids == trained[0].encode(text), text


def _rewrite(path: Path, old: bytes, new: bytes, target: Path) -> Path:
    data = path.read_bytes()
    assert old in data
    target.write_bytes(data.replace(old, new))
    return target


@pytest.mark.parametrize("arch,old,new,message", [
    ("gemma3", b"blk.1.post_ffw_norm.weight", b"blk.1.post_ffw_xxxx.weight", "blk.1.post_ffw_norm.weight"),
    ("qwen3", b"blk.0.attn_k_norm.weight", b"blk.0.attn_k_xxxx.weight", "blk.0.attn_k_norm.weight"),
    ("phi3", b"blk.1.attn_qkv.weight", b"blk.1.attn_xxx.weight", "blk.1.attn_qkv.weight"),
])
def test_a_gguf_missing_a_norm_or_a_fused_tensor_is_one_line(arch, old, new, message, tmp_path, pieces):
    _build(arch, tmp_path, pieces)
    bad = _rewrite(tmp_path / "gguf" / f"tiny-{arch}.gguf", old, new, tmp_path / "bad.gguf")
    with pytest.raises(UserModelError) as err:
        load_user_model(bad)
    assert "\n" not in str(err.value) and message in str(err.value), err.value


def test_a_gguf_whose_key_length_disagrees_with_its_tensors_is_one_line(tmp_path, pieces):
    _build("qwen3", tmp_path, pieces)
    path = tmp_path / "gguf" / "tiny-qwen3.gguf"
    data = bytearray(path.read_bytes())
    for key in (b"qwen3.rope.dimension_count", b"qwen3.attention.key_length",
                b"qwen3.attention.value_length"):
        at = data.index(key) + len(key) + 4  # past the value type
        data[at:at + 4] = (64).to_bytes(4, "little")
    (tmp_path / "bad.gguf").write_bytes(bytes(data))
    with pytest.raises(UserModelError) as err:
        load_user_model(tmp_path / "bad.gguf")
    assert "\n" not in str(err.value) and "wrong shapes" in str(err.value), err.value
    data[at:at + 4] = (128).to_bytes(4, "little")  # key and value widths that differ
    (tmp_path / "bad.gguf").write_bytes(bytes(data))
    with pytest.raises(UserModelError, match="key width 64 and value width 128"):
        load_user_model(tmp_path / "bad.gguf")


LONGROPE = {"rope_type": "longrope", "rope_theta": 500.0, "short_factor": [1.0, 1.2, 1.5, 2.0],
            "long_factor": [1.5, 3.0, 6.0, 12.0], "original_max_position_embeddings": 16,
            "partial_rotary_factor": 1.0}


def test_a_phi3_gguf_with_longrope_equals_its_folder_either_side_of_the_switch(tmp_path, pieces):
    hf = _build("phi3", tmp_path, pieces, rope_parameters=dict(LONGROPE), original_max_position_embeddings=16)
    ours = load_user_model(tmp_path / "gguf" / "tiny-phi3.gguf")
    folder = HF_DECODER.load(tmp_path / "hf")
    for key in ("rope_short_factors", "rope_long_factors", "rope_switch_len", "rope_attention_factor"):
        assert getattr(ours.cfg, key) == pytest.approx(getattr(folder.cfg, key), abs=1e-6), key
    assert ours.cfg.rope_switch_len == 16 and ours.cfg.rope_attention_factor == pytest.approx(math.sqrt(1.5))
    for length in (10, 20):  # short factors, then long ones
        ids = torch.randint(3, 90, (2, length), generator=torch.Generator().manual_seed(length))
        with torch.no_grad():
            patterns, logits = _compare(ours.model, folder.model, ids)
            gap = float((ours.model(ids) - hf(ids).logits).abs().max())
        print(f"gguf phi3 longrope at {length} vs folder: patterns {patterns:.2e}, logits {logits:.2e}; "
              f"vs transformers {gap:.2e}")
        assert patterns <= 1e-5 and logits <= 1e-4 and gap <= 1e-4


def test_a_phi3_gguf_with_half_its_longrope_and_a_gemma3_gguf_without_its_window_are_one_line(
        tmp_path, pieces):
    hf = _build("phi3", tmp_path / "phi3", pieces)
    half = np.ones(4, dtype=np.float32)  # one factor per rotated pair (d_head 8)
    one = write_gguf(hf, "phi3", tmp_path / "one.gguf", pieces, extra={"rope_factors_long.weight": half})
    with pytest.raises(UserModelError) as err:
        load_user_model(one)
    assert "\n" not in str(err.value)
    assert "needs both rope_factors_short and rope_factors_long" in str(err.value)
    both = write_gguf(hf, "phi3", tmp_path / "long.gguf", pieces,
                      extra={"rope_factors_long.weight": half, "rope_factors_short.weight": half})
    with pytest.raises(UserModelError) as err:  # the factors without the length they switch at
        load_user_model(both)
    assert "\n" not in str(err.value) and "phi3.rope.scaling.original_context_length" in str(err.value)
    wrong = write_gguf(hf, "phi3", tmp_path / "wrong.gguf", pieces,
                       extra={"rope_factors_long.weight": np.ones(3, dtype=np.float32),
                              "rope_factors_short.weight": half})
    with pytest.raises(UserModelError, match="not one factor per rotated pair"):
        load_user_model(wrong)
    _build("gemma3", tmp_path / "gemma3", pieces)
    gemma = tmp_path / "gemma3" / "gguf" / "tiny-gemma3.gguf"
    bad = _rewrite(gemma, b"gemma3.attention.sliding_window", b"gemma3.attention.sliding_xxxxxx",
                   tmp_path / "w.gguf")
    with pytest.raises(UserModelError) as err:
        load_user_model(bad)
    assert "\n" not in str(err.value) and "gemma3.attention.sliding_window" in str(err.value), err.value
