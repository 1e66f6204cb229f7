"""What a session keeps between runs: only what its current page draws, and nothing once it has gone.

The gateway's store (``app_support/gateway.py``) is bounded in bytes for the whole server, but a
session could keep results alive beyond it. Streamlit keeps each widget's metadata (its
``format_func``, its callbacks) until that widget is drawn again, and a page's lambdas hold the
page's module globals, hence its analysis (~140 MB for MiniLM at 500 tokens) and its figures: every
page a session had visited pinned the analysis it last drew (~330 MB more per session, measured by
``bench/bench_sessions.py``). When a tab closes, Streamlit keeps the session two minutes for a
reconnect and then drops it without shutting it down, so its download callables (which also hold
the page's analysis) were never collected.

* :func:`after_run` (``app.py``, at the end of every complete run) drops the metadata of the widgets
  that run did not draw: Streamlit has already dropped their values, and treats a widget without
  metadata as the stale widget it is.
* :func:`watch_session` (``app.py``, every run) registers the session with a session-scoped
  ``st.cache_resource`` whose release (the tab closes, the connection drops) drops all its widget
  metadata and download callables. A session that reconnects draws them again on its next run.
"""

from __future__ import annotations

import contextlib
import gc
import weakref
from collections.abc import Collection

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

__all__ = ["after_run", "drop_widget_metadata", "release", "watch_session", "widget_metadata"]


def _widgets(state: object) -> object | None:
    """The widget states of a session (Streamlit's ``SessionState``, or the ``SafeSessionState`` a run
    sees), or None when this Streamlit keeps them elsewhere (then nothing is dropped, and
    tests/app/test_session_memory.py fails)."""
    inner = getattr(state, "_state", state)
    widgets = getattr(inner, "_new_widget_state", None)
    return widgets if isinstance(getattr(widgets, "widget_metadata", None), dict) else None


def widget_metadata(state: object) -> dict:
    """Widget id -> metadata of a session (empty when unknown)."""
    widgets = _widgets(state)
    return widgets.widget_metadata if widgets is not None else {}


def drop_widget_metadata(state: object, keep: Collection[str] = ()) -> int:
    """Drop the metadata of every widget not in ``keep``; returns how many were dropped. The map is
    replaced, not changed in place: a thread still reading the old one is not disturbed."""
    widgets = _widgets(state)
    if widgets is None:
        return 0
    with getattr(state, "_lock", None) or contextlib.nullcontext():
        old = widgets.widget_metadata
        widgets.widget_metadata = {wid: meta for wid, meta in old.items() if wid in keep}
    return len(old) - len(widgets.widget_metadata)


def after_run() -> int:
    """End of a complete run (not one stopped for a rerun): forget the widgets it did not draw.
    Not after a fragment's run, which draws only the fragment's widgets."""
    ctx = get_script_run_ctx()
    if ctx is None or ctx.fragment_ids_this_run:
        return 0
    return drop_widget_metadata(ctx.session_state, ctx.shared.widget_ids_this_run.snapshot())


class SessionWatch:
    """One session's state, for :func:`release` (held by the session's own cache, which Streamlit
    releases when the session disconnects: it keeps nothing alive beyond the session)."""

    def __init__(self, session_id: str, safe_state: object):
        self.session_id = session_id
        # the session's own state: the wrapper a run sees is made again for every script runner
        self.state = getattr(safe_state, "_state", safe_state)
        self.released = False


#: session id -> its watch, while the session is connected (weakly: the session cache owns them).
WATCHED: weakref.WeakValueDictionary[str, SessionWatch] = weakref.WeakValueDictionary()


def release(watch: SessionWatch) -> None:
    """The session disconnected: drop its widget metadata and its download callables."""
    watch.released = True
    state = watch.state
    if state is not None:
        drop_widget_metadata(state)
    if runtime.exists():
        files = runtime.get_instance().media_file_mgr
        files.clear_session_refs(watch.session_id)
        files.remove_orphaned_files()
    gc.collect()  # a page's globals and its functions are a reference cycle: freed by the collector only


@st.cache_resource(scope="session", on_release=release, show_spinner=False)
def _watch(session_id: str) -> SessionWatch:
    ctx = get_script_run_ctx()
    watch = SessionWatch(session_id, ctx.session_state)
    WATCHED[session_id] = watch
    return watch


def watch_session() -> SessionWatch | None:
    """This session's watch (registered on its first run), None outside a script run."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return None
    return _watch(ctx.session_id)
