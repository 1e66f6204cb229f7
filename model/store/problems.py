"""The one-line problems a model folder, a user's checkpoint or an upload can have: their errors and their
English (no torch: the app's string tables word the same codes in every language, and read the English
from here)."""

from __future__ import annotations

#: English text of every problem code (placeholders are the error's parameters).
ENGLISH: dict[str, str] = {
    "not_found": "{file}: no such file or folder.",
    "not_a_folder": "{file} is not a folder: give the folder that holds config.json, model.safetensors "
    "and tokenizer.json (or a .zip of it).",
    "outside_root": "{file} is not inside the models folder {root}; only folders inside it can be opened.",
    "outside_cache": "{file} links outside its Hugging Face cache folder {root}; the snapshot was not "
    "opened (the cache's files link only into their own blobs/).",
    "missing_file": "{file} is missing: a model folder needs config.json, model.safetensors and "
    "tokenizer.json (a Marian folder: `source.spm`, `target.spm` and `vocab.json`).",
    "pickle": "{file} is a pickle file, which can run code when it is loaded, so it was not opened: this app "
    "reads safetensors only. Convert it where you trust it: python -c \"import torch; "
    "from safetensors.torch import save_file; save_file({{k: v.contiguous() for k, v in "
    "torch.load('{name}', weights_only=True).items()}}, 'model.safetensors')\" (or, for a Hugging Face "
    "model, save_pretrained(folder, safe_serialization=True)).",
    "sharded": "{file}: weights split over several files are not supported; save them as one "
    "model.safetensors.",
    "unknown_format": "{file} is neither this app's checkpoint config (no \"model\" section) nor a "
    "Hugging Face config (no \"model_type\").",
    "unknown_architecture": "{file}: unknown architecture {arch!r}; this app reads its own checkpoints, "
    "BERT-style encoders (model_type \"bert\", \"roberta\", \"xlm-roberta\" or \"distilbert\"), "
    "decoder-only language models (model_type \"gpt2\", \"llama\", \"qwen2\", \"mistral\", \"qwen3\", "
    "\"olmo2\", \"gpt_neox\", \"gemma3_text\" or \"phi3\"), translation models (model_type \"marian\", "
    "\"bart\" or \"mbart\") and .gguf "
    "files of Llama, Qwen2, Qwen3, Gemma 3 or Phi-3 models.",
    "several_gguf": "{file} holds {count} .gguf files; give the one to open (a folder may hold one).",
    "checkpoint": "{detail}",
    "zip_too_big": "{file} is {size_mb} MB; an upload may be at most {limit_mb} MB.",
    "zip_invalid": "{file} is not a readable zip file ({detail}).",
    "zip_too_many": "{file} holds {count} entries; at most {limit} are accepted.",
    "zip_unsafe_path": "{file}: the entry {entry!r} points outside the model's folder (an absolute path or "
    "'..'); nothing was extracted.",
    "zip_symlink": "{file}: the entry {entry!r} is a symbolic link; nothing was extracted.",
    "zip_special": "{file}: the entry {entry!r} is not a plain file; nothing was extracted.",
    "zip_encrypted": "{file}: the entry {entry!r} is encrypted; nothing was extracted.",
    "zip_duplicate": "{file}: the entry {entry!r} appears twice; nothing was extracted.",
    "zip_bomb": "{file} would unpack to {size_mb} MB; at most {limit_mb} MB are accepted.",
    "zip_overrun": "{file}: the entry {entry!r} unpacks to more bytes than its header says; "
    "extraction stopped and everything was deleted.",
    "zip_corrupt_entry": "{file}: the entry {entry!r} is corrupt ({detail}); everything was deleted.",
    "zip_no_config": "{file} has no config.json (nor a .gguf file) at its top level or in its one top "
    "folder.",
    "space_models": "This session already holds {count} models of your own, the most it keeps; "
    "remove one first.",
    "space_bytes": "This model unpacks to {size_mb} MB, but this session has only {left_mb} MB left of "
    "its {limit_mb} MB.",
    "server_bytes": "The server already holds {used_mb} MB of uploaded models (at most {limit_mb} MB); "
    "try again later or remove one of yours.",
}


class CheckpointError(RuntimeError):
    """A model folder that is missing, incomplete or corrupt; the message says which file and why."""


class UserModelError(CheckpointError):
    """A user's checkpoint or upload that cannot be used. ``code``/``params`` word it in any
    language (:data:`ENGLISH` here, the app's tables there); ``str()`` is the English line."""

    def __init__(self, code: str, **params: object):
        if code not in ENGLISH:
            raise KeyError(f"no text for user-model problem {code!r}")
        self.code = code
        self.params = params
        super().__init__(_one_line(ENGLISH[code].format(**params)))


def _one_line(text: str) -> str:
    return " ".join(str(text).split())
