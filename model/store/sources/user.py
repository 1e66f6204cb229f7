"""Models of the user's own: checkpoints a user opened by path or uploaded.

They live in this process only, each under a name made up for it ("user-<random>-<slug>", a plain
name like any other), and belong to an owner (an app session, the command line): only the owner's
picker lists them, and the owner removes them when it ends. ``model/store/uploads.py`` checks and
unpacks them; ``model/store/user_folders.py`` reads them.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from ..bundle import Bundle, read_json
from ..formats import format_kinds, format_named
from ..info import ModelInfo, info_from_config
from ..names import is_model_name
from ..problems import CheckpointError
from ..user_folders import load_user_model


@dataclass(frozen=True)
class UserModel:
    name: str  # the plain name made up for it: "user-" + 6 random hex digits + "-" + a slug of its label
    directory: Path  # the checked folder it is read from (a temporary copy for uploads)
    label: str  # what the user knows it as (the zip's or folder's name), shown in the picker
    fmt: str  # the format it is stored in: "own" (this project's checkpoint), "bert" (BERT-style folder),
    # "hf_decoder" (GPT-2 / Llama / Qwen2 folder), "gguf" (a GGUF file)
    owner: str  # who opened it (an app session's id, "cli"); only the owner lists it
    size: int = 0  # bytes its uploaded files take on disk (0 for a folder read in place)


_USER_MODELS: dict[str, UserModel] = {}
_USER_LOCK = threading.Lock()
# The bundle loaded while checking a user's folder, handed to the first load of its name: an upload
# is read from disk once, not once to check it and again to use it.
_CHECKED: dict[str, Bundle] = {}


def register(directory: Path, label: str, fmt: str, owner: str, taken: set[str], slug: str = "model",
             size: int = 0, checked: Bundle | None = None) -> UserModel:
    """Give a checked user folder a fresh plain name (never one in ``taken``, the names the other
    sources use). ``checked``, the bundle the checks loaded, is what the first :func:`load` returns."""
    with _USER_LOCK:
        while True:
            name = f"user-{secrets.token_hex(3)}-{slug}"[:64]
            if is_model_name(name) and name not in _USER_MODELS and name not in taken:
                break
        entry = UserModel(name=name, directory=Path(directory), label=label, fmt=fmt, owner=owner, size=size)
        _USER_MODELS[name] = entry
        if checked is not None:
            _CHECKED[name] = replace(checked, name=name)
        return entry


def unregister_user_model(name: str) -> None:
    with _USER_LOCK:
        _USER_MODELS.pop(name, None)
        _CHECKED.pop(name, None)


def user_model(name: object) -> UserModel | None:
    """The user's model registered under ``name``, or None."""
    return _USER_MODELS.get(name) if isinstance(name, str) else None


def user_model_names(owner: str) -> list[str]:
    """Names of ``owner``'s models of their own, oldest first."""
    return [n for n, e in list(_USER_MODELS.items()) if e.owner == owner]


def user_model_info(entry: UserModel) -> ModelInfo:
    """What a user's model says about itself (group "user", labelled with the name the user knows)."""
    if entry.fmt == "own":
        info = info_from_config(entry.name, _config(entry.directory), "user", entry.directory)
        # The label is the name the user knows it by (in every language); a description may be translated.
        keep = tuple(tr for tr in info.translations if tr[1] == "description")
        return replace(info, label=entry.label, group="user", listed=True, source="user",
                       directory=entry.directory, translations=keep)
    fmt = format_named(entry.fmt)
    return ModelInfo(
        name=entry.name, label=entry.label, description=f"{fmt.what[0]} ({entry.label})", example=fmt.example,
        task=fmt.task, group="user", listed=True, order=99, kinds=format_kinds(fmt), source="user",
        directory=entry.directory,
        translations=(("zh", "description", f"{fmt.what[1]}（{entry.label}）"),),
    )


def _config(directory: Path) -> dict:
    config_file = directory / "config.json"
    config = read_json(config_file)
    if not isinstance(config, dict):
        raise CheckpointError(f"{config_file} must hold a JSON object")
    return config


def load(entry: UserModel) -> Bundle:
    """The user's model: the bundle its checks loaded the first time, read from its folder after."""
    with _USER_LOCK:
        checked = _CHECKED.pop(entry.name, None)
    if checked is not None:
        return checked
    return load_user_model(entry.directory, name=entry.name, display=entry.label)
