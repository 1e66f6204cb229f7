"""The check every page sweep makes of the link a page leaves: it sets only the URL parameters its
page registry entry declares (each sweep opens every page once and checks this on that run)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from app_support import pages as page_registry


def assert_only_declared_url_parameters(at: AppTest, key: str) -> None:
    from app_support.url_state import UNDECLARED

    assert not at.exception, [e.message for e in at.exception]
    undeclared = at.session_state[UNDECLARED] if UNDECLARED in at.session_state else set()
    assert not undeclared, f"page {key!r} sets URL parameters nobody declared: {sorted(undeclared)}"
    allowed = set(page_registry.params_of(page_registry.page(key).url_path))
    assert set(at.query_params.keys()) <= allowed, (sorted(at.query_params.keys()), sorted(allowed))
