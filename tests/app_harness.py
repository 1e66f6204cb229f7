"""What driving the app through Streamlit's ``AppTest`` needs, for the tests and the benches timing pages."""

from __future__ import annotations

import functools


def scan_installed_components_once() -> None:
    """Every new ``AppTest`` scans the metadata of every installed package for Streamlit components
    (about 0.5 s each time, a third of a short page test). The app's server scans once, when it starts,
    and the installed packages do not change while tests or benches run: the first scan's answer serves
    every later one in this process, so a timed first view does not count the harness's own scan."""
    from streamlit.components.v2 import manifest_scanner

    if not hasattr(manifest_scanner.scan_component_manifests, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)
