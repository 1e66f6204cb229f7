"""Models of the user's own in the app: zip uploads and a picker over one configured models folder.

Each session gets its own :class:`model.store.uploads.UserModelSpace` through a session-scoped
``st.cache_resource``: Streamlit releases it when the session disconnects (the tab closes, the
connection drops), and the release deletes the session's uploaded files, forgets its models and
drops their loaded copies from the model cache. Only the session's own models are added to its
model picker; another session cannot open them, even with a link.

The folder picker lists only the folders directly inside one configured folder
(``ATTENTION_LENS_USER_MODELS``, default ``user_models/`` next to ``app.py``): the app never
browses the rest of the file system, and a folder or file that links out of it is refused.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from app_support import gateway as G
from app_support.i18n import text
from model.store.problems import UserModelError
from model.store.registry import REPO_ROOT, UserModel, user_model
from model.store.upload_limits import LIMITS
from model.store.uploads import UserModelSpace
from model.store.user_folders import folder_models

#: Models of their own one session holds at once (each is loaded in memory when used).
MAX_MODELS = 3
#: Unpacked uploads one session holds together, in bytes.
MAX_SESSION_BYTES = 600 * 2**20
#: The largest zip the uploader takes, in MB (Streamlit's own server.maxUploadSize is 200 MB too).
UPLOAD_LIMIT_MB = LIMITS.max_zip_bytes // 2**20


def models_root() -> Path:
    """The one folder the picker lists models from (read at call time: tests point it elsewhere)."""
    configured = os.environ.get("ATTENTION_LENS_USER_MODELS")
    return Path(configured).expanduser() if configured else REPO_ROOT / "user_models"


def _forget(names: list[str]) -> None:
    """Drop the loaded copies of these models from the app's model cache (while still registered)."""
    for name in names:
        try:  # its results would otherwise wait for the byte bound to evict them
            G.unload(name)
        except Exception:  # noqa: BLE001 - releasing a session must never fail half-way
            G.forget(name)


def _release(space: UserModelSpace) -> None:
    _forget(space.names)
    space.close()


@st.cache_resource(scope="session", on_release=_release, show_spinner=False)
def _space() -> UserModelSpace:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    owner = f"session-{ctx.session_id}" if ctx is not None else "session"
    return UserModelSpace(owner, max_models=MAX_MODELS, max_bytes=MAX_SESSION_BYTES)


def space() -> UserModelSpace:
    """This session's models of its own."""
    return _space()


def session_models() -> list[str]:
    """Names of this session's own models, for the model picker (oldest first)."""
    return space().names


#: What the uploader takes: a zipped model folder, or a GGUF model as its one file.
UPLOAD_TYPES = ["zip", "gguf"]


def add_upload(uploaded) -> UserModel:
    """Check and register an uploaded zip (unpacked) or .gguf file (copied), a Streamlit UploadedFile;
    UserModelError if refused. Either counts against the same size limit while it is written."""
    if str(uploaded.name).lower().endswith(".gguf"):
        return space().add_gguf(uploaded, uploaded.name)
    return space().add_zip(uploaded, uploaded.name)


def folder_choices() -> list[str]:
    """Folders the picker offers: directly inside :func:`models_root`, none linking out of it."""
    return folder_models(models_root())


def add_folder(folder_name: str) -> UserModel:
    """Open one of :func:`folder_choices` in place (nothing is copied); UserModelError if refused."""
    root = models_root()
    if folder_name not in folder_choices():
        raise UserModelError("outside_root", file=str(folder_name), root=str(root))
    return space().add_folder(root / folder_name, root=root, label=folder_name)


def remove(name: str) -> None:
    """Forget one of this session's models (and delete its files if it was uploaded)."""
    _forget([name])
    space().remove(name)


def entry(name: str) -> UserModel | None:
    return user_model(name)


def problem_text(error: UserModelError, lang: str) -> str:
    """A refused model's one-line message in the interface language."""
    return text(lang, f"mymodels.problem.{error.code}", **error.params)
