"""Your own models: a zip upload and a folder picker over the configured models folder; the session's
own models listed, to use or remove. Every refused model says why in one line naming the file."""

import streamlit as st

from app_support import models as M
from app_support import user_models as UM
from app_support.i18n import current_lang, t
from app_support.ui import escape_md, page_header
from app_support.view import current_view, keep_view_across_switch
from model.public import UPLOAD_LIMITS as LIMITS
from model.public import UserModelError

view = current_view()
lang = current_lang()
page_header(t("page.mymodels.title"), t("mymodels.intro"))
MB = 2**20
st.caption(t("mymodels.limits", zip_mb=LIMITS.max_zip_bytes // MB,
             unpacked_mb=LIMITS.max_unpacked_bytes // MB, entries=LIMITS.max_entries, models=UM.MAX_MODELS,
             session_mb=UM.MAX_SESSION_BYTES // MB))

_LAST = "_mymodels_last"  # outcome of the last upload or opened folder, shown after the rerun
_ROUND = "_mymodels_round"  # the uploader's key suffix: a new one empties it after each upload


def _select(name: str) -> None:
    """Open ``name`` in the sidebar (applied at the start of the next run)."""
    keep_view_across_switch(model=name, text=M.model_example(name)[: M.MAX_INPUT_CHARS], dir="auto")


def _settle(outcome: tuple, select: str | None = None) -> None:
    st.session_state[_LAST] = outcome
    st.session_state[_ROUND] = st.session_state.get(_ROUND, 0) + 1
    if select is not None:
        _select(select)
    st.rerun()


def _try(add, *args) -> None:
    with st.spinner(t("mymodels.checking")):
        try:
            entry = add(*args)
        except UserModelError as e:
            _settle(("error", e.code, e.params))
        else:
            _settle(("ok", entry.name, entry.label), select=entry.name)


last = st.session_state.get(_LAST)
if last and last[0] == "ok":
    st.success(t("mymodels.loaded", label=escape_md(last[2]), name=last[1]), icon=":material/check_circle:")
elif last and last[0] == "error":
    problem = UM.problem_text(UserModelError(last[1], **last[2]), lang)
    st.error(t("mymodels.refused", problem=escape_md(problem)), icon=":material/block:")

# --------------------------------------------------------------------------- 1. upload
st.subheader(t("mymodels.upload.header"))
st.markdown(t("mymodels.upload.text"))
uploaded = st.file_uploader(
    t("mymodels.upload.label"),
    type=UM.UPLOAD_TYPES,
    key=f"mymodels_zip_{st.session_state.get(_ROUND, 0)}",
    max_upload_size=UM.UPLOAD_LIMIT_MB,
    help=t("mymodels.upload.help", zip_mb=UM.UPLOAD_LIMIT_MB),
)
if uploaded is not None:
    _try(UM.add_upload, uploaded)

# --------------------------------------------------------------------------- 2. the models folder
st.subheader(t("mymodels.folder.header"))
root = UM.models_root()
shown_root = str(root).replace("`", "")  # shown in a code span
choices = UM.folder_choices()
if not root.is_dir():
    st.info(t("mymodels.folder.missing", root=shown_root), icon=":material/folder_off:")
elif not choices:
    st.info(t("mymodels.folder.empty", root=shown_root), icon=":material/folder_open:")
else:
    st.markdown(t("mymodels.folder.text", root=shown_root))
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    picked = c1.selectbox(t("mymodels.folder.pick"), choices, key="mymodels_folder")
    if c2.button(t("mymodels.folder.open"), icon=":material/folder_open:", key="mymodels_open"):
        _try(UM.add_folder, picked)

# --------------------------------------------------------------------------- 3. this session's models
st.subheader(t("mymodels.list.header"))
names = UM.session_models()
if not names:
    st.caption(t("mymodels.list.none"))
for name in names:
    entry = UM.entry(name)
    if entry is None:
        continue
    size = (t("mymodels.size.upload", mb=f"{entry.size / MB:.1f}") if entry.size
            else t("mymodels.size.folder"))
    row = st.columns([6, 1, 1], vertical_alignment="center")
    row[0].markdown(t("mymodels.list.row", label=escape_md(entry.label), name=name,
                      fmt=t(f"mymodels.fmt.{entry.fmt}"), size=size))
    if name == view.model:
        row[1].caption(t("mymodels.in_use"))
    else:
        row[1].button(t("mymodels.use"), key=f"mymodels_use_{name}", on_click=_select, args=(name,))
    row[2].button(t("mymodels.remove"), key=f"mymodels_remove_{name}", on_click=UM.remove, args=(name,))
