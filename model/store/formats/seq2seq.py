"""What every Hugging Face encoder-decoder folder shares, whatever its family (Marian and BART/mBART here;
T5 can read its folder with the same pieces): the checked config values (token ids, decoder_start_token_id),
tokenizer_config.json, refusing pickles, comparing the safetensors header with a name map before anything
is allocated, reading the tensors (final_logits_bias is one of them: ``unembed.bias``), and the bundle with
its translation task (model/data/seq2seq_task.py).

A family module gives :func:`load_mapped` our ModelConfig, its name map (ours -> theirs, with the shape
each of theirs must have) and its tokenizer and frames; everything it reads is checked here the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open

from ...data.seq2seq_task import Frame, Seq2SeqTask
from ...network.config import ModelConfig
from ...network.transformer import Transformer
from ..budget import check_budget, within_budget
from ..bundle import FLOAT_DTYPES, MAX_JSON_BYTES, Bundle, read_json, safetensors_header
from ..problems import CheckpointError
from .own import all_finite, expected_shapes, model_from_state

WEIGHTS = "model.safetensors"
#: Files that hold pickled weights: never opened (unpickling can run code).
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")


class Seq2SeqFormatError(CheckpointError):
    """An encoder-decoder folder we cannot convert; the message names the file and why."""


def whole(hf: dict, key: str, where: Path, default: int | None = None,
          below: int | None = None) -> int | None:
    """config.json's ``key`` as a whole number >= 0 (``default`` when absent or null), below ``below``."""
    value = hf.get(key)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Seq2SeqFormatError(f"{where}: {key} must be a whole number >= 0 (got {str(value)[:40]!r})")
    if below is not None and value >= below:
        raise Seq2SeqFormatError(f"{where}: {key} {value} is not a token id (vocab_size {below})")
    return value


def decoder_start(hf: dict, where: Path, vocab_size: int, default: int | None) -> int | None:
    """decoder_start_token_id: the id the decoder reads first (Marian: <pad>, BART: </s>)."""
    return whole(hf, "decoder_start_token_id", where, default, vocab_size)


#: Decoding settings that newer transformers write into generation_config.json instead of config.json.
GENERATION_KEYS = ("decoder_start_token_id", "forced_bos_token_id", "forced_eos_token_id", "bad_words_ids")


def read_config(folder: Path) -> dict:
    """config.json, with the decoding settings it lacks taken from generation_config.json."""
    hf = read_json(folder / "config.json")
    if not isinstance(hf, dict):
        raise Seq2SeqFormatError(f"{folder / 'config.json'} must hold a JSON object")
    generation = read_json(folder / "generation_config.json", default={})
    if isinstance(generation, dict):
        for key in GENERATION_KEYS:
            if hf.get(key) is None and generation.get(key) is not None:
                hf[key] = generation[key]
    return hf


def tokenizer_config(folder: Path) -> dict:
    """tokenizer_config.json (source_lang / target_lang, src_lang / tgt_lang, the tokenizer's class),
    or {}."""
    found = read_json(folder / "tokenizer_config.json", default={})
    return found if isinstance(found, dict) else {}


def refuse_pickles(folder: Path) -> Path:
    """The folder's model.safetensors; a folder with only pickled weights is refused without opening them."""
    weights = folder / WEIGHTS
    if weights.is_file():
        return weights
    pickles = sorted(p.name for p in folder.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
    if pickles:
        raise Seq2SeqFormatError(f"{folder / pickles[0]}: pickled weights are never loaded (unpickling can "
                                 "run code); save the model with save_pretrained(folder, "
                                 "safe_serialization=True)")
    raise Seq2SeqFormatError(f"{weights} is missing")


def json_tokenizer_file(folder: Path) -> Path:
    path = folder / "tokenizer.json"
    if not path.is_file():
        raise Seq2SeqFormatError(f"{path} is missing (the model's tokenizer.json is needed)")
    if path.stat().st_size > MAX_JSON_BYTES:
        raise Seq2SeqFormatError(f"{path} is larger than {MAX_JSON_BYTES // 2**20} MiB; not reading it")
    return path


#: A name map entry: their tensor's name and the shape it must have (None: our parameter's own shape).
Mapped = dict[str, tuple[str, tuple[int, ...] | None]]


def check_mapped(weights: Path, cfg: ModelConfig, mapping: Mapped, ignored: Callable[[str, tuple], bool],
                 prefixes: tuple[str, ...] = ()) -> dict[str, str]:
    """Compare the header of ``weights`` with ``mapping`` (ours -> (theirs, shape)), reading no tensor;
    ``ignored(name, shape)`` says which other tensors may be there (tied copies, buffers). Returns
    their short name -> the stored name."""

    raw = safetensors_header(weights, Seq2SeqFormatError)
    stored = {}
    for name in raw:
        short = next((name.removeprefix(p) for p in prefixes if name.startswith(p)), name)
        stored[short] = name
    header = {short: raw[name] for short, name in stored.items()}
    expected = expected_shapes(cfg)
    assert set(expected) <= set(mapping), "the name map must cover every parameter of the network"
    want = {theirs: tuple(shape if shape is not None else expected[ours]) for ours, (theirs, shape) in
            mapping.items() if ours in expected}
    missing = sorted(t for t in want if t not in header)
    wrong = sorted(f"{t} {list(header[t][0])} (expected {list(s)})" for t, s in want.items()
                   if t in header and tuple(header[t][0]) != s)
    unexpected = sorted(k for k in header if k not in want and not ignored(k, tuple(header[k][0])))
    if missing or wrong or unexpected:
        raise Seq2SeqFormatError(f"{weights} does not match config.json: missing {missing[:5]}, wrong shapes "
                                 f"{wrong[:5]}, unexpected {unexpected[:5]}")
    bad = sorted(t for t in want if header[t][1] not in FLOAT_DTYPES)
    if bad:
        raise Seq2SeqFormatError(f"{weights}: tensors {bad[:5]} are not float32/float16/bfloat16")
    return {t: stored[t] for t in want}


def read_mapped(weights: Path, cfg: ModelConfig, mapping: Mapped, stored: dict[str, str],
                reshape: Callable[[str, torch.Tensor], torch.Tensor] = lambda ours, t: t) -> Transformer:
    """Our network with the tensors of ``weights`` (names and shapes already checked by :func:`check_mapped`);
    ``reshape(ours, tensor)`` fits one of theirs to ours (a position table's unread rows, a [1, V] bias)."""

    expected = expected_shapes(cfg)
    state = {}
    try:
        with safe_open(str(weights), framework="pt") as f:
            for ours in expected:
                theirs = mapping[ours][0]
                mapped = f.get_tensor(stored[theirs])  # a view of the file's mapping (safetensors maps it)
                t = mapped.to(torch.float32)
                if not all_finite(t):
                    raise Seq2SeqFormatError(f"{weights}: tensor {theirs} holds NaN or infinite values")
                t = reshape(ours, t).contiguous()
                if t.untyped_storage().data_ptr() == mapped.untyped_storage().data_ptr():
                    t = t.clone()  # the model owns its weights: a file changed or cut later changes nothing
                state[ours] = t
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise Seq2SeqFormatError(f"{weights} is not a readable safetensors file ({e})") from e
    return model_from_state(cfg, state, strict=False)


def seq2seq_bundle(folder: Path, name: str | None, hf: dict, cfg: ModelConfig, model: Transformer, tokenizer,
                   frames: dict[str, Frame], example: str, family: str, notes: list[str],
                   target_encode=None, limit=None, target_tokenizer=None) -> Bundle:
    """The bundle of a converted encoder-decoder with its translation task."""
    info = {"source": f"huggingface-{family}", "notes": notes,
            "hf_config": {k: hf[k] for k in sorted(hf) if isinstance(hf[k], str | int | float | bool)}}
    task = Seq2SeqTask(tokenizer, frames, example, target_encode, family, target_tokenizer)
    bundle = Bundle(name=name or folder.name, model=model, task=task, directory=folder, info=info)
    return within_budget(bundle, limit)


def budget(cfg: ModelConfig, folder: Path):
    return check_budget(cfg, folder / "config.json")
