"""Vocabularies padded past the tokenizer: real checkpoints ship more embedding rows than tokens
(Qwen2.5 151,936 for 151,665; Pythia 50,304 for 50,277). Decoding (greedy, beam, sampling), the
analysis's top-k lists, the ablation's and the logit lens never pick or show such an id; the model's
own logits keep every row (parity with the original).

The models here are made to prefer the padding rows (their output rows point along the final hidden
state), so a decoder that did not cut them would pick them at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from model.data.tasks import SyntheticTask
from model.decoding.beam import beam_search
from model.decoding.decoders import decode
from model.decoding.strategy import Strategy
from model.lab.ablation import ablate
from model.lab.lens import logit_lens
from model.network.transformer import Transformer
from model.run.analysis import analyze
from model.store.bundle import Bundle
from tests.cli_run import model_cli
from tests.conftest import tiny_config

PAD_ROWS = 20
STRATEGIES = [Strategy(), Strategy.make("beam", beam=3), Strategy.make("sample", seed=4, temperature=2.0)]


def _prefer_padding(model: Transformer, named: int, hidden: torch.Tensor) -> None:
    """Output rows past ``named`` along the mean final hidden state [n, d_model]: they win every argmax."""
    with torch.no_grad():
        direction = hidden.mean(0)
        model.unembed.weight[named:] = 50.0 * direction / direction.norm()


def _seq2seq_bundle() -> Bundle:
    task = SyntheticTask("reverse")
    named = task.tokenizer.vocab_size
    torch.manual_seed(0)
    model = Transformer(tiny_config(vocab_size=named + PAD_ROWS, tie_embeddings=False)).eval()
    src, tgt = torch.tensor([task.prepare("abcdef", 16).source_ids]), torch.tensor([[1, 9, 10, 11]])
    _, cache = model.run_with_cache(src, tgt)
    _prefer_padding(model, named, cache["decoder.hook_out"][0])
    return Bundle(name="padded", model=model, task=task, directory=Path("."))


def _llama_folder(folder: Path) -> Path:
    transformers = pytest.importorskip("transformers")
    from tests.model.store.test_hf_decoder import VOCAB, _tokenizer_json

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=VOCAB + PAD_ROWS, hidden_size=32, num_attention_heads=4,
                                   num_key_value_heads=2, intermediate_size=48, num_hidden_layers=2,
                                   max_position_embeddings=32, bos_token_id=1, eos_token_id=2,
                                   tie_word_embeddings=False)
    hf = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="eager").eval()
    ids = torch.randint(3, VOCAB, (4, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        hidden = hf.model(ids).last_hidden_state.reshape(-1, 32)
        direction = hidden.mean(0)
        hf.lm_head.weight[VOCAB:] = 50.0 * direction / direction.norm()
    hf.save_pretrained(folder, safe_serialization=True)
    _tokenizer_json(folder)
    return folder


def _check_bundle(bundle: Bundle, text: str) -> None:
    model, named = bundle.model, bundle.tokenizer.vocab_size
    assert model.named_vocab == named < model.cfg.vocab_size
    prepared = bundle.task.prepare(text, model.cfg.max_len)
    with torch.no_grad():  # the model's own logits: every row, and a padding id on top
        inputs = [torch.tensor([prepared.prefix])]
        if not model.cfg.decoder_only:
            inputs.insert(0, torch.tensor([prepared.source_ids]))
        logits = model(*inputs)
    assert logits.shape[-1] == model.cfg.vocab_size and int(logits[0, -1].argmax()) >= named
    for strategy in STRATEGIES:
        ids = decode(model, [prepared.source_ids], [prepared.prefix], bundle.tokenizer.eos_id, strategy,
                     max_new=5)[0]
        assert ids and max(ids) < named, strategy
        result = analyze(bundle, text, strategy=strategy, max_new=5)
        assert all(i < named for s in result.steps for i in [s.token_id, *s.top_ids]), strategy
        assert bundle.tokenizer.decode(ids) == result.output_text
    found = beam_search(model, [prepared.source_ids], [prepared.prefix], bundle.tokenizer.eos_id, 3, 1.0, 4,
                        trace=True)[0]
    assert all(c.token_id < named for step in found.steps for c in step.candidates)
    decoder_ids = tuple(prepared.prefix) + (3, 4)
    lens = logit_lens(bundle, tuple(prepared.source_ids), decoder_ids, len(prepared.prefix))
    assert int(lens.top_ids.max()) < named and int(lens.final_ids.max()) < named
    named_tokens = set(bundle.tokenizer.tokens(list(range(named))))
    change = ablate(bundle, text, heads=[("decoder", 0, 0)], max_new=3)
    shown = {t for s in change.steps for t, _ in (*s.top_intact, *s.top_ablated)}
    assert change.steps and shown <= named_tokens


def test_encoder_decoder_never_picks_a_padding_row():
    _check_bundle(_seq2seq_bundle(), "abcdef")


def test_decoder_only_never_picks_a_padding_row(tmp_path):
    from model.store.formats.hf_decoder import HF_DECODER

    bundle = HF_DECODER.load(_llama_folder(tmp_path))
    _check_bundle(bundle, "w5 w17 w3")


def test_inspect_a_padded_llama_folder(tmp_path):
    folder = _llama_folder(tmp_path / "llama")
    assert json.loads((folder / "config.json").read_text())["vocab_size"] == 96 + PAD_ROWS
    for text in ("the quick brown fox", "w5 w17 w3"):  # the second picked id 96 before: IndexError
        run = model_cli(["inspect", "--model-dir", str(folder), "--text", text, "--max-new-tokens", "1",
                         "--out", str(tmp_path / "out")])
        assert run.returncode == 0 and "Traceback" not in run.stderr, run
