"""Models already in the local Hugging Face cache, offered under their hub names; never a network call.

The cache (``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``) keeps each
downloaded repository as ``models--ORG--NAME/`` with ``refs/main`` (the revision ``main`` points to),
``snapshots/REV/`` (the files, as links) and ``blobs/`` (their contents). A repository is read from the
snapshot ``refs/main`` names, else from its newest snapshot, through the one user-model loader
(:func:`model.store.user_folders.load_user_model`), which refuses a link out of the repository folder.

The registry knows each one by a plain name, the repository's cache folder name
(``models--Qwen--Qwen3-0.6B``); the picker shows the hub name (``Qwen/Qwen3-0.6B``), and the command
line and ``attention_lens.load`` take the hub name itself (:func:`load_hub_model`). A repository whose
model we would refuse (an architecture we do not read, files missing, pickles only, a link out of
the cache) is not listed: asking for it by hub name says why in one line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..bundle import Bundle, read_json
from ..formats import format_for, format_kinds, format_named
from ..info import ModelInfo, info_from_config
from ..names import UnknownModelError, is_model_name
from ..problems import CheckpointError
from ..user_folders import check_snapshot_links, detect_format, gguf_file, load_user_model

#: A hub repository name: ORG/NAME, each part letters, digits, "_", "-" and "." (not first).
_HUB_NAME = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.-]{0,95})/([A-Za-z0-9][A-Za-z0-9_.-]{0,95})")
#: What refs/main may hold: a commit hash (or another plain revision name), nothing that walks.
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_PREFIX = "models--"


class HubCacheError(CheckpointError):
    """A repository of the Hugging Face cache we cannot open; the message says why in one line."""


def is_hub_name(value: object) -> bool:
    """True for ``ORG/NAME`` as the hub writes it (one slash, plain parts, no "..")."""
    return isinstance(value, str) and _HUB_NAME.fullmatch(value) is not None and ".." not in value


def hub_cache() -> Path:
    """The cache folder, read at call time: ``HF_HUB_CACHE`` (or its old name ``HUGGINGFACE_HUB_CACHE``),
    else ``HF_HOME``/hub, else ``XDG_CACHE_HOME``/huggingface/hub, else ~/.cache/huggingface/hub."""
    for key in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(key):
            return Path(os.environ[key]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser()
    return base / "huggingface" / "hub"


def hub_name_of(folder_name: str) -> str | None:
    """``ORG/NAME`` of a cache folder ``models--ORG--NAME`` (None for any other folder)."""
    if not folder_name.startswith(_PREFIX):
        return None
    parts = folder_name[len(_PREFIX):].split("--")
    name = "/".join(parts) if len(parts) == 2 else None
    return name if is_hub_name(name) else None


def repo_folder(hub_name: str) -> Path:
    return hub_cache() / (_PREFIX + hub_name.replace("/", "--"))


def snapshot(hub_name: str) -> Path | None:
    """The snapshot folder of a cached repository: the revision ``refs/main`` names, else the newest
    snapshot; None when the repository is not in the cache."""
    snapshots = repo_folder(hub_name) / "snapshots"
    if not snapshots.is_dir():
        return None
    ref = repo_folder(hub_name) / "refs" / "main"
    try:
        revision = ref.read_text(encoding="ascii", errors="replace")[:200].strip() if ref.is_file() else ""
    except OSError:
        revision = ""
    if _REVISION.fullmatch(revision) and (snapshots / revision).is_dir():
        return snapshots / revision
    found = [p for p in snapshots.iterdir() if _REVISION.fullmatch(p.name) and p.is_dir()]
    return max(found, key=lambda p: p.stat().st_mtime, default=None)


def not_downloaded(hub_name: str) -> str:
    return (f"{hub_name} is not in the local Hugging Face cache ({hub_cache()}); nothing is downloaded "
            f"here: on a machine with network run `huggingface-cli download {hub_name}` (or `hf download "
            f"{hub_name}`) into this cache (HF_HOME / HF_HUB_CACHE), or open a folder with --model-dir")


def load_hub_model(hub_name: str) -> Bundle:
    """The cached repository ``ORG/NAME`` as a bundle; UnknownModelError (one line, how to get it)
    when it is not in the cache."""
    folder = snapshot(hub_name)
    if folder is None:
        raise UnknownModelError(not_downloaded(hub_name))
    return load_user_model(folder, name=plain_name(hub_name) or hub_name.split("/")[1],
                           display=hub_name)


def plain_name(hub_name: str) -> str | None:
    """The registry's name for a cached repository (its cache folder name), None when it is too long
    to be a plain name (such a repository opens by hub name only)."""
    name = _PREFIX + hub_name.replace("/", "--")
    return name if is_model_name(name) else None


class HubCacheSource:
    """The local Hugging Face cache's repositories that hold a model we read."""

    name = "hf-cache"

    def _cached(self) -> dict[str, str]:
        """Plain name -> hub name of every cached model repository (read at call time)."""
        cache = hub_cache()
        if not cache.is_dir():
            return {}
        found = {}
        for entry in sorted(cache.iterdir()):
            hub_name = hub_name_of(entry.name)
            name = plain_name(hub_name) if hub_name else None
            if name is not None and entry.is_dir():
                found[name] = hub_name
        return found

    def names(self) -> list[str]:
        """Cached repositories whose snapshot we would open (the others are left out, see the module)."""
        return [name for name, hub_name in self._cached().items() if self._kind(hub_name) is not None]

    def folder(self, name: str) -> Path | None:
        hub_name = self._cached().get(name)
        return snapshot(hub_name) if hub_name else None

    def _kind(self, hub_name: str) -> str | None:
        """The format of the repository's snapshot, after the checks that need no weights; None when
        we would refuse it."""
        folder = snapshot(hub_name)
        if folder is None:
            return None
        try:
            check_snapshot_links(folder, repo_folder(hub_name), hub_name)
            fmt = detect_format(folder, hub_name)
            if fmt == "gguf":
                gguf_file(folder, hub_name)
        except CheckpointError:
            return None
        return fmt

    def info(self, name: str) -> ModelInfo:
        hub_name = self._cached()[name]
        folder, fmt = snapshot(hub_name), self._kind(hub_name)
        if folder is None or fmt is None:
            raise HubCacheError(f"{hub_name}: the cached snapshot can no longer be opened")
        if fmt == "own":
            info = info_from_config(name, read_json(folder / "config.json"), self.name, folder)
            kinds, example, task = info.kinds, info.example, info.task
        else:
            kind = format_named(fmt)
            kinds, example, task = format_kinds(kind), kind.example, kind.task
        config = read_json(folder / "config.json", default={}) if fmt != "gguf" else {}
        arch = config.get("model_type") if isinstance(config, dict) else None
        arch = f" ({arch})" if isinstance(arch, str) and format_for(config) is not None else ""
        english, chinese = format_named(fmt).what
        return ModelInfo(
            name=name, label=hub_name, example=example, task=task, group="user", listed=True, order=90,
            description=f"{english}{arch} from the local Hugging Face cache ({folder})",
            kinds=kinds, source=self.name, directory=folder,
            translations=(("zh", "description",
                           f"{chinese}{arch}，来自本机的 Hugging Face 缓存（{folder}）"),),
        )

    def load(self, name: str) -> Bundle:
        return load_hub_model(self._cached()[name])
