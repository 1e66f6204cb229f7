"""Turning chart / table selections into a (layer, head)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from viz.grid import GridLayout


def selected_points(selection: Any) -> list[Mapping[str, Any]]:
    """The selected points of an ``st.plotly_chart(on_select=...)`` return value (or [])."""
    if selection is None:
        return []
    sel = (selection.get("selection") if isinstance(selection, Mapping)
           else getattr(selection, "selection", None))
    if sel is None:
        return []
    points = sel.get("points") if isinstance(sel, Mapping) else getattr(sel, "points", None)
    return list(points or [])


def customdata_pair(point: Mapping[str, Any]) -> tuple[int, int] | None:
    """A clicked point's ``customdata = [a, b]`` (e.g. ``[layer, head]``) as two ints, or None. It reaches
    the server as a list, or as ``{"0": a, "1": b}`` when the figure sent it as a typed array (numpy)."""
    cd = point.get("customdata")
    if isinstance(cd, Mapping) and {"0", "1"} <= set(cd):
        return int(cd["0"]), int(cd["1"])
    if isinstance(cd, list | tuple) and len(cd) >= 2:
        return int(cd[0]), int(cd[1])
    return None


def head_from_grid_selection(selection: Any, layout: GridLayout) -> tuple[int, int] | None:
    """``(layer, head)`` of the first selected point of an all-heads grid, or None.

    The point's ``x``/``y`` (a tile's click target, or any cell) are mapped back with
    :meth:`GridLayout.cell_to_head` (the model's layer, on any page of layers); ``customdata =
    [layer, head]`` is the fallback.
    """
    for pt in selected_points(selection):
        x, y = pt.get("x"), pt.get("y")
        if x is not None and y is not None:
            try:
                hit = layout.cell_to_head(float(x), float(y))  # the model's layer, on any page of layers
            except (TypeError, ValueError):
                hit = None
            if hit is not None:
                return hit
        pair = customdata_pair(pt)
        if pair is not None:
            li, hi = pair
            if layout.first_layer <= li < layout.first_layer + layout.n_layers and 0 <= hi < layout.n_heads:
                return li, hi
    return None


def head_from_scatter_selection(selection: Any) -> tuple[int, int] | None:
    """``(layer, head)`` from a point of :func:`viz.head_stats_scatter` (``customdata = [layer, head]``)."""
    for pt in selected_points(selection):
        pair = customdata_pair(pt)
        if pair is not None:
            return pair
    return None


def selected_row(event: Any) -> int | None:
    """First selected row index of an ``st.dataframe(on_select=...)`` event, or None."""
    if event is None:
        return None
    sel = event.get("selection") if isinstance(event, Mapping) else getattr(event, "selection", None)
    if sel is None:
        return None
    rows = sel.get("rows") if isinstance(sel, Mapping) else getattr(sel, "rows", None)
    return int(rows[0]) if rows else None


def clicked_head(event) -> tuple[int, int] | None:
    """(layer, head) of a click on a head matrix (viz.interventions.head_matrix), or None: the click
    target's customdata [layer, head], else its x (the head) and y (the layer)."""
    for point in selected_points(event):
        pair = customdata_pair(point)
        if pair is not None:
            return pair
        if point.get("x") is not None and point.get("y") is not None:
            return int(round(float(point["y"]))), int(round(float(point["x"])))
    return None
