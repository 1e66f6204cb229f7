"""The models the app and the command line offer, and what each says about itself.

A model is a checkpoint folder found in one of the model sources (today the shipped
``assets/models/``; a package or a user's folder can be added as another :class:`ModelSource`), or a
pretrained model whose Python package is installed (``model.pretrained.PRETRAINED``: ``minilm``),
converted into our network when it loads; its weights live in the package, never in git.
Everything the app shows about a model before loading it (label, description, example input,
task, group, attention kinds, whether the picker lists it) is read from the ``config.json`` the
model was shipped with: :class:`ModelInfo`. Names are plain names, never paths.
"""

from __future__ import annotations

import os
import re
import secrets
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace

from .pretrained import PRETRAINED, PretrainedModel, load_bert_folder, pretrained_folder
from .training.checkpoint import Bundle, CheckpointError, load_checkpoint, read_json

REPO_ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = Path(os.environ.get("ATTENTION_LENS_MODELS", REPO_ROOT / "assets" / "models"))
DEFAULT_MODEL = "default"

#: Model groups, in menu order: what kind of model it is, for the picker and the pages.
GROUPS = ("main", "didactic", "pitfall", "variant", "user")


#: A model name is a plain folder name: letters, digits, "_", "-" and "." (not first), at most 64.
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class UnknownModelError(LookupError):
    """A model name with no folder under assets/models/; the message lists what exists."""


def is_model_name(name: object) -> bool:
    """True for a plain name that can only ever mean a folder directly inside the models folder."""
    return isinstance(name, str) and _NAME_RE.fullmatch(name) is not None and ".." not in name


def check_model_name(name: object) -> str:
    """``name`` if it is a plain model name; else UnknownModelError saying what a name may hold."""
    if not is_model_name(name):
        raise UnknownModelError(
            f"{name!r} is not a model name: use letters, digits, '_', '-' or '.' (not first, no '..'), "
            "at most 64 characters, no path separators"
        )
    return name


@dataclass(frozen=True)
class ModelSource:
    name: str  # where models come from, e.g. "assets"
    directory: Path  # each model is a folder directly inside


def model_sources() -> list[ModelSource]:
    """Where models are looked up, first match wins (read at call time: tests point it elsewhere)."""
    return [ModelSource("assets", MODELS_DIR)]


@dataclass(frozen=True)
class ModelInfo:
    name: str  # plain name (the folder's), used in links and on the command line
    label: str  # short menu label
    description: str  # one line: what the model does
    example: str  # an input worth trying
    task: str  # "translation", or the didactic task ("reverse", "copy", "sort")
    group: str  # one of GROUPS
    listed: bool  # shown in the picker by default (variants may be hidden until asked for)
    order: int  # position in menus within its group
    kinds: tuple[str, ...]  # attention kinds the network has (a model without decoder has no decoder kinds)
    source: str  # the ModelSource it came from
    directory: Path
    # (language, field, text): the label/description in other interface languages (config "i18n")
    translations: tuple[tuple[str, str, str], ...] = ()

    def text(self, field: str, lang: str = "en") -> str:
        """``label`` or ``description`` in ``lang``, falling back to the config's own (English) text."""
        for lang_, field_, value in self.translations:
            if (lang_, field_) == (lang, field):
                return value
        return getattr(self, field)


def _text(value: object, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _info_from_config(name: str, config: dict, source: ModelSource) -> ModelInfo:
    from .network.kinds import kinds_present

    task = config.get("task") if isinstance(config.get("task"), dict) else {}
    task_name = (
        _text(task.get("kind")) if task.get("type") == "synthetic" else _text(task.get("type"), "unknown")
    )
    group = _text(config.get("group"), "user")
    layers = config.get("model") if isinstance(config.get("model"), dict) else {}
    sizes = SimpleNamespace(
        n_enc_layers=layers.get("n_enc_layers", 0), n_dec_layers=layers.get("n_dec_layers", 0)
    )
    try:
        kinds = tuple(kinds_present(sizes))
    except TypeError:  # sizes that are not numbers: loading will say what is wrong
        kinds = ()
    order = config.get("order")
    i18n = config.get("i18n") if isinstance(config.get("i18n"), dict) else {}
    translations = tuple(
        (lang, field, value)
        for lang, fields in sorted(i18n.items())
        if isinstance(fields, dict)
        for field, value in sorted(fields.items())
        if field in ("label", "description") and isinstance(value, str)
    )
    return ModelInfo(
        name=name,
        label=_text(config.get("label"), name),
        description=_text(config.get("description")),
        example=_text(config.get("example")),
        task=task_name,
        group=group if group in GROUPS else "user",
        listed=config.get("listed", True) is not False,
        order=order if isinstance(order, int) and not isinstance(order, bool) else 99,
        kinds=kinds,
        source=source.name,
        directory=source.directory / name,
        translations=translations,
    )


_INFO_CACHE: dict[Path, tuple[int, ModelInfo]] = {}


def _pretrained_entry(name: str, directory: Path) -> PretrainedModel | None:
    """The PRETRAINED entry that ``name`` resolved to (None for a checkpoint folder)."""
    for entry, folder in pretrained_models():
        if entry.name == name and folder == directory:
            return entry
    return None


def _pretrained_info(entry: PretrainedModel, directory: Path) -> ModelInfo:
    return ModelInfo(
        name=entry.name,
        label=entry.label,
        description=entry.description,
        example=entry.example,
        task="encode",
        group="main",
        listed=True,
        order=entry.order,
        kinds=("encoder",),
        source=f"package {entry.package}",
        directory=directory,
        translations=(("zh", "description", entry.description_zh), ("zh", "label", entry.label_zh)),
    )


def model_info(name: str) -> ModelInfo:
    """What model ``name`` says about itself (its config.json, read without loading weights).

    Raises UnknownModelError for a name no source holds, CheckpointError for a broken config.
    """
    entry = user_model(name)
    if entry is not None:
        from .user_models import user_model_info

        return user_model_info(entry)
    directory = model_dir(name)
    pretrained = _pretrained_entry(name, directory)
    if pretrained is not None:
        return _pretrained_info(pretrained, directory)
    source = next(s for s in model_sources() if s.directory / name == directory)
    config_file = directory / "config.json"
    try:
        stamp = config_file.stat().st_mtime_ns
    except OSError as e:
        raise CheckpointError(f"cannot read {config_file} ({e.strerror or e})") from e
    cached = _INFO_CACHE.get(config_file)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    config = read_json(config_file)
    if not isinstance(config, dict):
        raise CheckpointError(f"{config_file} must hold a JSON object")
    info = _info_from_config(name, config, source)
    _INFO_CACHE[config_file] = (stamp, info)
    return info


def _folders() -> dict[str, Path]:
    """Model name -> folder, over every source (an earlier source hides a later one's same name)."""
    found: dict[str, Path] = {}
    for source in model_sources():
        if not source.directory.is_dir():
            continue
        for p in sorted(source.directory.iterdir()):
            if is_model_name(p.name) and p.name not in found and (p / "config.json").is_file():
                found[p.name] = p
    for entry, folder in pretrained_models():  # after the folders
        if entry.name not in found:
            found[entry.name] = folder
    return found


def pretrained_models() -> list[tuple[PretrainedModel, Path]]:
    """(entry, folder) of each pretrained model whose package is installed (read at call time:
    tests that point the registry at their own folders leave these out)."""
    found = []
    for entry in PRETRAINED:
        folder = pretrained_folder(entry)
        if folder is not None:
            found.append((entry, folder))
    return found


def model_infos(broken: list[tuple[str, str]] | None = None) -> list[ModelInfo]:
    """Every readable model, in menu order (group, then order, then name).

    A folder whose config cannot be read is left out; pass a list as ``broken`` to receive
    ``(name, reason)`` for each, so a caller can name it.
    """
    infos = []
    for name in _folders():
        try:
            infos.append(model_info(name))
        except CheckpointError as e:
            if broken is not None:
                broken.append((name, str(e)))
    return sorted(infos, key=lambda i: (GROUPS.index(i.group), i.order, i.name))


def available_models() -> list[str]:
    """Names of every model with a config.json, in menu order (broken ones last, so they can be named)."""
    broken: list[tuple[str, str]] = []
    names = [i.name for i in model_infos(broken)]
    return names + sorted(name for name, _ in broken)


def model_dir(name: str) -> Path:
    check_model_name(name)
    entry = user_model(name)
    if entry is not None:
        return entry.directory
    path = _folders().get(name)
    if path is None:
        have = ", ".join(available_models()) or "none"
        if name == DEFAULT_MODEL:
            raise UnknownModelError(
                "The default Chinese<->English model is not in assets/models/default yet. "
                "Train it with `python -m model train --preset default --ship` "
                f"or pick another model (available: {have})."
            )
        raise UnknownModelError(f"No model named {name!r}. Available models: {have}.")
    return path


def load_model(name: str) -> Bundle:
    entry = user_model(name)
    if entry is not None:
        from .user_models import load_user_model

        with _USER_LOCK:
            checked = _CHECKED.pop(name, None)
        if checked is not None:
            return checked
        return load_user_model(entry.directory, name=name, display=entry.label)
    directory = model_dir(name)
    pretrained = _pretrained_entry(name, directory)
    if pretrained is not None:
        return load_bert_folder(directory, name=name, example=pretrained.example)
    return load_checkpoint(directory, name=name)


def example_input(name: str) -> str:
    """An input worth trying on this model, read from its config without loading the weights."""
    return model_info(name).example


# --------------------------------------------------------------------------- models of the user's own
#
# Checkpoints a user opened by path or uploaded (model/user_models.py checks and loads them). They
# live in this process only, each under a name made up for it ("user-<random>-<slug>", a plain
# name like any other), and belong to an owner (an app session, the command line): only the
# owner's picker lists them, and the owner removes them when it ends.


@dataclass(frozen=True)
class UserModel:
    name: str  # the plain name made up for it: "user-" + 6 random hex digits + "-" + a slug of its label
    directory: Path  # the checked folder it is read from (a temporary copy for uploads)
    label: str  # what the user knows it as (the zip's or folder's name), shown in the picker
    fmt: str  # "own" (this project's checkpoint) or "bert" (a Hugging Face BERT-style folder)
    owner: str  # who opened it (an app session's id, "cli"); only the owner lists it
    size: int = 0  # bytes its uploaded files take on disk (0 for a folder read in place)


_USER_MODELS: dict[str, UserModel] = {}
_USER_LOCK = threading.Lock()
# The bundle loaded while checking a user's folder, handed to the first load_model of its name: an
# upload is read from disk once, not once to check it and again to use it.
_CHECKED: dict[str, Bundle] = {}


def register_user_model(directory: Path, label: str, fmt: str, owner: str, slug: str = "model",
                        size: int = 0, checked: Bundle | None = None) -> UserModel:
    """Give a checked user folder a fresh plain name (never one a model source already uses).
    ``checked``, the bundle the checks loaded, is what the first :func:`load_model` of it returns."""
    with _USER_LOCK:
        taken = set(_folders())
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
