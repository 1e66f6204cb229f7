"""A session keeps alive only what its current page draws, and nothing once it ends (issue 32).

Streamlit keeps a widget's metadata (its ``format_func``) until the widget is drawn again, and a
page's lambdas hold the page's globals: every page a session had visited kept its last analysis
alive outside the gateway's byte-bounded store (bench/bench_sessions.py: +~330 MB per session).
"""

from __future__ import annotations

import gc
import threading
import time

import pytest
from streamlit.runtime.caching import clear_session_resource_cache
from streamlit.runtime.state.common import TESTING_KEY
from streamlit.testing.v1 import AppTest

from app_support import gateway as G
from app_support import session_memory as SM
from model.run.analysis import Analysis
from tests.app.test_app_pages import APP, PAGES, TIMEOUT

MODEL = "reverse"
FIRST = "zebra"  # a word no other test types: its analysis is found by its tokens


@pytest.fixture(autouse=True)
def _fresh_session():
    """Every AppTest has the same session id: end the previous test's session first."""
    for session_id in list(SM.WATCHED):
        clear_session_resource_cache(session_id)


def _alive_analyses_of(word: str) -> list[Analysis]:
    gc.collect()
    return [o for o in gc.get_objects() if isinstance(o, Analysis) and word in "".join(o.source_tokens)]


def _single_head_then_all_heads() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": MODEL, "text": FIRST})
    at.run()  # the single-head page, whose radio's format_func is a lambda of the page
    assert not at.exception, [e.message for e in at.exception]
    assert _alive_analyses_of(FIRST), "the test must see the page's analysis while it is shown"
    at.switch_page(PAGES["heads"])
    at.session_state["text"] = "other words"
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    # AppTest's own map of every widget's format_func (for at.selectbox(...).select) is no part of a
    # server: keep only the widgets the last run drew, as a server does
    testing = at._session_state._state._old_state[TESTING_KEY]
    drawn = set(SM.widget_metadata(at._session_state))
    for wid in [w for w in testing if w not in drawn]:
        del testing[wid]
    return at


def _watch_of(at: AppTest) -> SM.SessionWatch:
    inner = at._session_state._state
    watches = [w for w in SM.WATCHED.values() if w.state is inner]
    assert len(watches) == 1, "app.py registers every session once"
    return watches[0]


def test_a_page_left_keeps_no_analysis_alive():
    at = _single_head_then_all_heads()
    G.RESULTS.clear()  # evicted from the shared store: nothing else may keep it
    assert _alive_analyses_of(FIRST) == []
    drawn = set(SM.widget_metadata(at._session_state))
    assert drawn and not any("single" in wid for wid in drawn), sorted(drawn)


def test_the_session_ending_drops_its_widgets():
    at = _single_head_then_all_heads()
    watch = _watch_of(at)
    assert SM.widget_metadata(at._session_state)
    clear_session_resource_cache(watch.session_id)  # what Streamlit does when the session disconnects
    assert watch.released
    assert SM.widget_metadata(at._session_state) == {}


def test_drop_widget_metadata_keeps_the_drawn_ones_only():
    class Widgets:
        widget_metadata = {"a": 1, "b": 2, "c": 3}

    class State:
        _new_widget_state = Widgets()

    state = State()
    seen = state._new_widget_state.widget_metadata
    assert SM.drop_widget_metadata(state, keep={"b"}) == 2
    assert SM.widget_metadata(state) == {"b": 2}
    assert seen == {"a": 1, "b": 2, "c": 3}, "a reader of the old map is not disturbed"
    assert SM.drop_widget_metadata(object()) == 0  # another Streamlit's state: left alone


def test_large_results_are_computed_one_at_a_time_and_once():
    active, most, calls = [0], [0], []
    lock = threading.Lock()

    def slow(x: int) -> int:
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
            calls.append(x)
        time.sleep(0.2)
        with lock:
            active[0] -= 1
        return x

    run = G.cached(slow, models=0, frees_memory=True)
    threads = [threading.Thread(target=run, args=(x,)) for x in (101, 102, 101, 101)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert G.LARGE_AT_ONCE == 1 and most[0] == 1
    assert sorted(calls) == [101, 102], "a session that waited for the same input gets the stored one"
