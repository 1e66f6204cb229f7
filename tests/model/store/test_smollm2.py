"""SmolLM2-135M-Instruct read from its GGUF file into our Transformer equals transformers' own reading
of the same file (eager attention): every head's pattern, the logits and the greedy choice. A tiny
GGUF written here pins the converter's names, the tied and untied output and Qwen2's biases."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import gguf
import numpy as np
import pytest
import torch

from model.decoding.decoders import greedy_decode
from model.network.kinds import hook_name
from model.run.analysis import analyze
from model.store.formats import gguf as gguf_format
from model.store.formats.gguf_file import GGUFError
from model.store.problems import UserModelError
from model.store.registry import load_model, model_info
from model.store.upload_limits import UploadLimits
from model.store.uploads import UserModelSpace
from model.store.user_folders import load_user_model
from tests.cli_run import model_cli
from tests.model.store.test_gguf_file import SMOLLM2_NAME
from tests.model.store.test_gguf_file import smollm2_folder as smollm2_folder  # noqa: F401 (a fixture)

PROMPTS = ["The capital of France is", "Once upon a time, there was", "def fibonacci(n):",
           "The bank raised interest rates because", "我吃了一个苹果"]


@pytest.fixture(scope="module")
def ours():
    return load_model("smollm2")


@pytest.fixture(scope="module")
def theirs(smollm2_folder):  # noqa: F811
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(
        smollm2_folder, gguf_file=SMOLLM2_NAME, attn_implementation="eager", dtype=torch.float32)
    tokenizer = transformers.AutoTokenizer.from_pretrained(smollm2_folder, gguf_file=SMOLLM2_NAME)
    return model.eval(), tokenizer


def test_smollm2_is_offered_as_a_decoder_only_model(ours):
    info = model_info("smollm2")
    assert info.task == "continue" and info.kinds == ("decoder",)
    cfg = ours.cfg
    assert (cfg.n_dec_layers, cfg.n_heads, cfg.kv_heads, cfg.d_model, cfg.d_ff) == (30, 9, 3, 576, 1536)
    assert cfg.decoder_only and cfg.rope_theta == 1e5 and cfg.tie_embeddings
    # The input budget clamps the 8,192-token context, and says so.
    assert ours.info["budget"]["config_max_len"] == 8192 and 256 <= cfg.max_len < 8192


# slow: whole suite only (quick keeps SmolLM2's own tests; loading transformers' copy costs 15-25 s)
@pytest.mark.slow
@pytest.mark.parametrize("prompt", PROMPTS)
def test_parity_with_transformers_reading_the_same_file(ours, theirs, prompt):
    model, tokenizer = theirs
    ids = ours.task.prepare(prompt, ours.cfg.max_len).source_ids
    assert ids == tokenizer(prompt)["input_ids"]  # raw form: no BOS, as the Instruct model's metadata says
    with torch.no_grad():
        reference = model(torch.tensor([ids]), output_attentions=True)
    logits, cache = ours.model.run_with_cache(torch.tensor([ids]))
    for layer, pattern in enumerate(reference.attentions):
        assert (cache[hook_name("decoder", layer, "pattern")] - pattern).abs().max() <= 1e-4, layer
    assert (logits - reference.logits).abs().max() <= 1e-3
    assert int(logits[0, -1].argmax()) == int(reference.logits[0, -1].argmax())


def test_the_capital_of_france_is_paris(ours):
    result = analyze(ours, "The capital of France is", max_new=4)
    assert result.output_text.startswith(" Paris")
    assert result.steps[0].token == " Paris" and result.steps[0].prob > 0.5  # shown as the text it spells


# slow: whole suite only (quick keeps SmolLM2's own tests; loading transformers' copy costs 15-25 s)
@pytest.mark.slow
def test_greedy_generation_equals_transformers_generate(ours, theirs):
    model, tokenizer = theirs
    ids = ours.task.prepare("Once upon a time", ours.cfg.max_len).source_ids
    mine = greedy_decode(ours.model, [ids], [ids], ours.tokenizer.eos_id, max_new=12)[0]
    with torch.no_grad():
        ref = model.generate(torch.tensor([ids]), max_new_tokens=12, do_sample=False)[0, len(ids):].tolist()
    assert mine == [t for t in ref if t != ours.tokenizer.eos_id][: len(mine)]


# slow: whole suite only (quick keeps SmolLM2's own tests; loading transformers' copy costs 15-25 s)
@pytest.mark.slow
def test_the_chat_form_is_the_chat_template_as_transformers_applies_it(ours, theirs):
    _, tokenizer = theirs
    assert ours.task.directions == ["raw", "chat"]
    question = "What is the capital of France?"
    mine = ours.task.prepare(question, ours.cfg.max_len, "chat").source_ids
    ref = tokenizer.apply_chat_template([{"role": "user", "content": question}], add_generation_prompt=True,
                                        tokenize=True, return_dict=True)["input_ids"]
    assert mine == list(ref)
    answer = analyze(ours, question, "chat", max_new=8).output_text
    assert "Paris" in answer


# slow: in the whole suite only (the quick subset keeps the GGUF reader's own tests)
@pytest.mark.slow
def test_a_second_load_reads_the_cache_without_dequantizing(monkeypatch, smollm2_folder):  # noqa: F811
    load_model("smollm2")  # the cache is there after any load
    monkeypatch.setattr(gguf_format.GGUFFile, "tensor", lambda *a: pytest.fail("dequantized again"))
    again = load_user_model(smollm2_folder / SMOLLM2_NAME)
    assert again.cfg.n_dec_layers == 30


# ---------------------------------------------------------------- a tiny GGUF of our own


def write_tiny(path: Path, arch: str = "llama", tied: bool = True, seed: int = 0,
               tokenizer: bool = True, chat_template: str | None = None) -> dict[str, np.ndarray]:
    """A valid tiny decoder GGUF (2 layers, d_model 32, 4 heads / 2 kv heads) with random float32
    weights and a byte-level token list (none: ``tokenizer=False``), and ``chat_template`` if given;
    returns the tensors written."""
    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(str(path), arch)
    for add, value in ((w.add_block_count, 2), (w.add_context_length, 64), (w.add_embedding_length, 32),
                       (w.add_feed_forward_length, 48), (w.add_head_count, 4), (w.add_head_count_kv, 2),
                       (w.add_layer_norm_rms_eps, 1e-5), (w.add_rope_freq_base, 1e4)):
        add(value)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    tokens = ["<unk>", "<s>", "</s>", *letters, "Ġ", *[f"Ġ{c}" for c in letters]]
    if tokenizer:
        w.add_tokenizer_model("gpt2")
        w.add_token_list(tokens)
        w.add_token_merges([f"Ġ {c}" for c in letters])
        w.add_eos_token_id(2)
    if chat_template is not None:
        w.add_chat_template(chat_template)
    shapes = {"token_embd.weight": (len(tokens), 32), "output_norm.weight": (32,)}
    if not tied:
        shapes["output.weight"] = (len(tokens), 32)
    for i in range(2):
        shapes |= {f"blk.{i}.attn_norm.weight": (32,), f"blk.{i}.ffn_norm.weight": (32,),
                   f"blk.{i}.attn_q.weight": (32, 32), f"blk.{i}.attn_k.weight": (16, 32),
                   f"blk.{i}.attn_v.weight": (16, 32), f"blk.{i}.attn_output.weight": (32, 32),
                   f"blk.{i}.ffn_gate.weight": (48, 32), f"blk.{i}.ffn_up.weight": (48, 32),
                   f"blk.{i}.ffn_down.weight": (32, 48)}
        if arch == "qwen2":
            shapes |= {f"blk.{i}.attn_q.bias": (32,), f"blk.{i}.attn_k.bias": (16,),
                       f"blk.{i}.attn_v.bias": (16,)}
    tensors = {name: rng.normal(0, 0.2, shape).astype(np.float32) for name, shape in shapes.items()}
    for name, t in tensors.items():
        w.add_tensor(name, t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return tensors


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(gguf_format, "CACHE_DIR", tmp_path / "cache")


@pytest.mark.parametrize("arch,tied", [("llama", True), ("llama", False), ("qwen2", True)])
def test_a_tiny_gguf_converts_tensor_for_tensor(tmp_path, arch, tied):
    tensors = write_tiny(tmp_path / "tiny.gguf", arch, tied)
    bundle = load_user_model(tmp_path / "tiny.gguf")
    state = bundle.model.state_dict()
    assert bundle.cfg.tie_embeddings == tied and bundle.cfg.qkv_bias == (arch == "qwen2")
    assert np.array_equal(state["token_embed.weight"].numpy(), tensors["token_embd.weight"])
    # Qwen2's q and k rows are stored rotate-half (llama.cpp rotates its halves): we hold them in pairs
    pairs = gguf_format.rope_permutation(8).numpy() if arch == "qwen2" else np.arange(8)
    in_pairs = tensors["blk.1.attn_k.weight"].reshape(2, 8, 32)[:, pairs].reshape(16, 32)
    assert np.array_equal(state["decoder.blocks.1.self_attn.W_k.weight"].numpy(), in_pairs)
    assert np.array_equal(state["decoder.blocks.0.mlp.W_gate.weight"].numpy(),
                          tensors["blk.0.ffn_gate.weight"])
    assert np.array_equal(state["decoder.final_norm.weight"].numpy(), tensors["output_norm.weight"])
    out = tensors["token_embd.weight"] if tied else tensors["output.weight"]
    assert np.array_equal(state["unembed.weight"].numpy(), out)
    if arch == "qwen2":
        q_bias = state["decoder.blocks.0.self_attn.W_q.bias"].numpy()
        assert np.array_equal(q_bias, tensors["blk.0.attn_q.bias"].reshape(4, 8)[:, pairs].reshape(32))
    again = load_user_model(tmp_path / "tiny.gguf")  # from the cache: the same model
    for name, value in again.model.state_dict().items():
        assert torch.equal(value, state[name]), name


def test_a_gguf_missing_a_tensor_is_one_line(tmp_path):
    write_tiny(tmp_path / "full.gguf")
    data = (tmp_path / "full.gguf").read_bytes().replace(b"blk.1.ffn_up.weight", b"blk.1.ffn_XX.weight")
    (tmp_path / "bad.gguf").write_bytes(data)
    with pytest.raises(UserModelError) as err:
        load_user_model(tmp_path / "bad.gguf")
    assert "\n" not in str(err.value) and "blk.1.ffn_up.weight" in str(err.value)


def test_a_gguf_without_a_tokenizer_says_so_in_one_line(tmp_path):
    write_tiny(tmp_path / "bare.gguf", tokenizer=False)
    with pytest.raises(UserModelError) as err:
        load_user_model(tmp_path / "bare.gguf")
    assert "\n" not in str(err.value) and "holds no tokenizer" in str(err.value), err.value
    assert "vocab_size" not in str(err.value)


def test_a_tokenizer_longer_than_any_vocabulary_is_refused_before_its_tokens_are_read(tmp_path, monkeypatch):
    from model.store.formats import gguf_file

    write_tiny(tmp_path / "tiny.gguf")  # 56 tokens, 26 merges
    monkeypatch.setattr(gguf_file, "MAX_VOCABULARY", 40)
    strings_read = []
    real_string = gguf_file._Cursor.string
    monkeypatch.setattr(gguf_file._Cursor, "string",
                        lambda self, what: strings_read.append(what) or real_string(self, what))
    with pytest.raises(UserModelError) as err:
        load_user_model(tmp_path / "tiny.gguf")
    assert "\n" not in str(err.value)
    assert "'tokenizer.ggml.tokens' claims 56 entries" in str(err.value), err.value
    assert not [w for w in strings_read if "tokenizer.ggml.tokens" in w]  # refused before reading one


def test_a_gguf_of_another_architecture_is_one_line(tmp_path):
    write_tiny(tmp_path / "full.gguf")
    data = (tmp_path / "full.gguf").read_bytes().replace(b"llama", b"mamba")
    (tmp_path / "other.gguf").write_bytes(data)
    with pytest.raises(UserModelError, match="architecture 'mamba'"):
        load_user_model(tmp_path / "other.gguf")


def _zipped(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w") as z:
        for p in sorted(folder.iterdir()):
            z.write(p, p.name)
    return target


def test_a_gguf_upload_opens_and_a_hostile_one_is_refused(tmp_path):
    (tmp_path / "good").mkdir()
    write_tiny(tmp_path / "good" / "tiny.gguf")
    space = UserModelSpace("gguf-test", limits=UploadLimits(max_zip_bytes=10**7, max_unpacked_bytes=10**7))
    try:
        with open(_zipped(tmp_path / "good", tmp_path / "good.zip"), "rb") as f:
            entry = space.add_zip(f, "good.zip")
        bundle = load_model(entry.name)
        assert bundle.cfg.decoder_only and analyze(bundle, "ab c", max_new=3).target_tokens
        (tmp_path / "cut").mkdir()
        good = (tmp_path / "good" / "tiny.gguf").read_bytes()
        (tmp_path / "cut" / "tiny.gguf").write_bytes(good[: len(good) // 2])
        cut = _zipped(tmp_path / "cut", tmp_path / "cut.zip")
        with open(cut, "rb") as f, pytest.raises(UserModelError) as e:
            space.add_zip(f, "cut.zip")
        assert "\n" not in str(e.value) and "tiny.gguf" in str(e.value) and "beyond the end" in str(e.value)
    finally:
        space.close()


def test_a_folder_with_two_gguf_files_says_which_to_give(tmp_path):
    write_tiny(tmp_path / "a.gguf")
    shutil.copy(tmp_path / "a.gguf", tmp_path / "b.gguf")
    with pytest.raises(UserModelError, match="holds 2 .gguf files"):
        load_user_model(tmp_path)


def test_generate_on_a_gguf_file_from_the_command_line(tmp_path):
    write_tiny(tmp_path / "tiny.gguf")
    tiny = str(tmp_path / "tiny.gguf")
    run = model_cli(["generate", "--model-dir", tiny, "--max-new-tokens", "5", "ab c"])
    assert run.returncode == 0, run
    bundle = load_user_model(tmp_path / "tiny.gguf")
    ids = bundle.task.prepare("ab c", 64).source_ids
    expected = bundle.tokenizer.decode(greedy_decode(bundle.model, [ids], [ids], 2, max_new=5)[0])
    assert run.stdout == expected + "\n"
    refused = model_cli(["generate", "--model-dir", str(tmp_path / "tiny.gguf"), "--form", "chat", "ab"])
    assert refused.returncode == 2 and "has no chat template" in refused.stderr
    # inspect says the same (it said "Unknown direction 'chat'; use one of none.")
    out = str(tmp_path / "out")
    inspected = model_cli(["inspect", "--model-dir", tiny, "--form", "chat", "--out", out, "--text", "ab"])
    assert inspected.returncode == 2 and "has no chat template: use --form raw" in inspected.stderr, inspected
    assert "Unknown direction" not in inspected.stderr and not (tmp_path / "out").exists()
    with pytest.raises(GGUFError):
        gguf_format.GGUF.read_config(tmp_path / "missing.gguf")


def test_a_bare_gguf_upload_is_copied_within_the_limit_and_opens(tmp_path):
    write_tiny(tmp_path / "tiny.gguf")
    size = (tmp_path / "tiny.gguf").stat().st_size
    space = UserModelSpace("gguf-bare", limits=UploadLimits(max_zip_bytes=size + 10))
    try:
        with open(tmp_path / "tiny.gguf", "rb") as f:
            entry = space.add_gguf(f, "tiny.gguf")
        assert load_model(entry.name).cfg.n_dec_layers == 2 and entry.size == size
        small = UserModelSpace("gguf-small", limits=UploadLimits(max_zip_bytes=size - 1))
        try:
            with open(tmp_path / "tiny.gguf", "rb") as f, pytest.raises(UserModelError, match="at most"):
                small.add_gguf(f, "tiny.gguf")
            assert not any(small._folder[0].iterdir())  # nothing left of the refused copy
        finally:
            small.close()
    finally:
        space.close()


def test_most_heads_park_their_weight_on_the_first_token(ours):
    """The attention sink docs/models.md reports: the head statistics' first-token share, on SmolLM2."""
    import viz

    text = "The bank raised interest rates because inflation was rising faster than expected."
    result = analyze(ours, text, max_new=8)
    scores = result.attention("decoder", "scores")
    df = viz.head_stats(result.attention("decoder"), key_mask=~np.isfinite(scores))
    share = df["first_token"].to_numpy()  # [layer * head]
    assert share.shape == (270,)
    assert (share > 0.5).sum() > 135  # more than half of the 270 heads (measured: 198)
    assert share[:9].mean() < share[18:].mean()  # layer 0 less than the later layers (0.22 vs 0.66)
