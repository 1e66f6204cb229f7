"""A model folder of the user's own: given by path, picked in the app, or unpacked from an upload.

Every format of ``model/store/formats/`` is read: this project's own checkpoint folder, Hugging
Face BERT-style and decoder-only folders (safetensors only, never pickle), and a ``.gguf`` file
(given itself, or as the one .gguf file of a folder). ``.bin`` / ``.pt`` /
``.ckpt`` files are pickles, which run code when loaded: they are never opened, and a folder that
has only those is refused with a message that says how to convert it.

A Hugging Face cache snapshot (``…/hub/models--ORG--NAME/snapshots/REV``, whose files are links into
the repository's ``blobs/``) is a folder like any other, once every link is found to stay inside its
repository folder.

Every problem is a :class:`UserModelError`: a code with parameters (the app words it in the
interface language), whose English text is one line naming the file at fault.
"""

from __future__ import annotations

import re
from pathlib import Path

from .bundle import Bundle, read_json
from .formats import format_for, format_named
from .problems import CheckpointError, UserModelError, _one_line

#: Files that hold pickles: loading one can run any code, so they are never opened or extracted.
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle", ".joblib", ".npy", ".npz")
#: The only files taken from a zip: configs, tokenizers, vocabularies, safetensors and GGUF weights (.spm:
#: Marian's SentencePiece models; .model: T5's spiece.model).
TAKEN_SUFFIXES = (".json", ".safetensors", ".txt", ".gguf", ".spm", ".model")
#: A file name we write: letters, digits, "_", "-", "." (not first); no separators.
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
WEIGHTS = "model.safetensors"



def _is_pickle(name: str) -> bool:
    return name.lower().endswith(PICKLE_SUFFIXES)


def _shown(path: Path, folder: Path, display: str) -> str:
    """How a file of ``folder`` is named in messages: ``display/name`` (``display`` stands for the folder)."""
    try:
        return f"{display}/{path.relative_to(folder).as_posix()}" if path != folder else display
    except ValueError:
        return str(path)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a loop of symbolic links
        return False


def hub_snapshot_repo(folder: Path) -> Path | None:
    """The repository folder (``models--ORG--NAME``) of a Hugging Face cache snapshot folder
    (``…/models--ORG--NAME/snapshots/REV``), or None for any other folder."""
    folder = Path(folder).absolute()
    if folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--"):
        return folder.parent.parent
    return None


#: Most entries a snapshot folder may hold (a model repository holds tens; a bigger tree is not one).
MAX_SNAPSHOT_ENTRIES = 2000


def check_snapshot_links(folder: Path, repo: Path, display: str) -> None:
    """Refuse a cache snapshot any of whose files resolves outside its repository folder: the cache
    keeps each file as a link into ``blobs/`` of the same repository, so a link anywhere else is not
    the cache's own (a planted link could make us read any file on the machine)."""
    seen = 0
    for path in sorted(Path(folder).rglob("*")):
        seen += 1
        if seen > MAX_SNAPSHOT_ENTRIES:
            raise UserModelError("checkpoint", detail=f"{display} holds more than {MAX_SNAPSHOT_ENTRIES} "
                                 "files; not a model snapshot")
        if not _inside(path, repo):
            raise UserModelError("outside_cache", file=_shown(path, folder, display), root=str(repo))


def detect_format(folder: Path, display: str | None = None, root: Path | None = None) -> str:
    """The name of the format a model folder is stored in ("own", "bert"), after checking it can be
    read safely.

    No weights are opened here: only the file list and config.json. ``root``, if given, is the
    folder every file read must resolve inside (symbolic links out of it are refused).
    """
    folder = Path(folder)
    display = display or str(folder)
    if not folder.exists():
        raise UserModelError("not_found", file=display)
    if not folder.is_dir():
        raise UserModelError("not_a_folder", file=display)
    if root is not None and not _inside(folder, root):
        raise UserModelError("outside_root", file=display, root=str(root))
    names = sorted(p.name for p in folder.iterdir())
    if gguf_file(folder, display) is not None:
        return "gguf"
    weights = folder / WEIGHTS
    if not weights.exists():
        pickles = [n for n in names if _is_pickle(n)]
        if pickles:
            raise UserModelError("pickle", file=_shown(folder / pickles[0], folder, display), name=pickles[0])
        if any(n.endswith(".safetensors") for n in names) or f"{WEIGHTS}.index.json" in names:
            raise UserModelError("sharded", file=_shown(weights, folder, display))
    config_file = folder / "config.json"
    for needed in ("config.json", WEIGHTS, *_tokenizer_files(folder)):
        path = folder / needed
        if not path.is_file():
            raise UserModelError("missing_file", file=_shown(path, folder, display))
        if root is not None and not _inside(path, root):
            raise UserModelError("outside_root", file=_shown(path, folder, display), root=str(root))
    try:
        config = read_json(config_file)
    except CheckpointError as e:
        raise UserModelError("checkpoint", detail=_one_line(str(e).replace(str(folder), display))) from e
    shown = _shown(config_file, folder, display)
    if not isinstance(config, dict):
        raise UserModelError("unknown_format", file=shown)
    fmt = format_for(config)
    if fmt is not None:
        return fmt.name
    model_type = config.get("model_type")
    if model_type is None:
        raise UserModelError("unknown_format", file=shown)
    architectures = config.get("architectures")
    arch = model_type if isinstance(model_type, str) else repr(model_type)
    if isinstance(architectures, list) and architectures and isinstance(architectures[0], str):
        arch = f"{arch} ({architectures[0]})"
    raise UserModelError("unknown_architecture", file=shown, arch=arch[:80])


def _tokenizer_files(folder: Path) -> tuple[str, ...]:
    """The tokenizer files the folder's format reads: tokenizer.json, or its own (Marian's .spm and
    vocab.json)."""
    try:
        config = read_json(folder / "config.json")
    except CheckpointError:
        return ("tokenizer.json",)  # the config's own problem is told below
    fmt = format_for(config) if isinstance(config, dict) else None
    return tuple(getattr(fmt, "tokenizer_files", ("tokenizer.json",)))


def gguf_file(folder: Path, display: str) -> Path | None:
    """The one .gguf file of a folder without config.json (None when it is not such a folder)."""
    if (folder / "config.json").exists():
        return None
    found = sorted(p for p in folder.iterdir() if p.name.lower().endswith(".gguf") and p.is_file())
    if len(found) > 1:
        raise UserModelError("several_gguf", file=display, count=len(found))
    return found[0] if found else None


def load_user_model(folder: Path, name: str | None = None, display: str | None = None,
                    root: Path | None = None) -> Bundle:
    """Load a user's model folder (any format of model/store/formats/), or a .gguf file; every
    problem is a UserModelError whose message names the file, with ``display`` standing for it."""
    folder = Path(folder)
    display = display or str(folder)
    if folder.is_file() and folder.name.lower().endswith(".gguf"):
        if root is not None and not _inside(folder, root):
            raise UserModelError("outside_root", file=display, root=str(root))
        fmt, target, name = "gguf", folder, name or folder.stem
    else:
        repo = hub_snapshot_repo(folder) if folder.is_dir() else None
        if repo is not None:
            check_snapshot_links(folder, repo, display)
        fmt = detect_format(folder, display, root)
        target = gguf_file(folder, display) if fmt == "gguf" else folder
        name = name or folder.name
    try:
        # a BERT folder's config holds no example sentence; the other formats bring their own
        return format_named(fmt).load(target, name=name, example=format_named(fmt).example or None)
    except UserModelError:
        raise
    except CheckpointError as e:
        raise UserModelError("checkpoint", detail=_one_line(str(e).replace(str(folder), display))) from e
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as e:  # from the BERT converter
        detail = f"{display}: {e}".replace(str(folder), display)
        raise UserModelError("checkpoint", detail=_one_line(detail)) from e


def folder_models(root: Path) -> list[str]:
    """Names of the folders directly inside ``root`` that may be opened (no symbolic links out of it)."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = []
    for p in sorted(root.iterdir()):
        if p.name.startswith(".") or not p.is_dir() or not _inside(p, root):
            continue
        found.append(p.name)
    return found
