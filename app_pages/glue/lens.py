"""What the logit-lens page needs beyond the gateway's lens of its view: the window of positions the
grid draws, the colour choices, and which position a click names."""

from __future__ import annotations

from app_support.selection import customdata_pair, selected_points

#: Positions the grid draws at once: the window holding the chosen position. At a laptop's width a cell
#: then keeps ~46 px, room for its top token's six characters (34 positions squeezed them to one or two).
GRID_POSITIONS = 16
#: What the grid's colour shows (URL ``lens_view``): the top token's probability, the final
#: choice's probability, the entropy.
VIEWS = ("top", "final", "entropy")
DEFAULT_VIEW = "top"


def grid_window(n_positions: int, column: int, per: int = GRID_POSITIONS) -> tuple[int, int]:
    """``(start, stop)`` of the columns the grid draws: the page of ``per`` columns holding ``column``, the
    last page ending at the last column so that it is full too (every column when they fit)."""
    if n_positions <= per:
        return 0, n_positions
    start = min(min(max(column, 0), n_positions - 1) // per * per, n_positions - per)  # the last one full
    return start, start + per


def parse_view(value: object) -> str | None:
    return value if value in VIEWS else None


def clicked_position(event) -> int | None:
    """The position of a click on the grid (its click targets carry ``[row, position]``), or None."""
    for point in selected_points(event):
        pair = customdata_pair(point)
        if pair is not None:
            return pair[1]
        if point.get("x") is not None:
            return int(round(float(point["x"])))
    return None


def last_row_difference(lens, steps) -> float | None:
    """Largest |p| difference between the lens's top row and the analysis's own top-k at the decoded
    positions both hold (None when they share none): the page's live check that the top row is the
    model's output."""
    first = int(lens.positions[0])
    worst = None
    for step in steps:
        column = step.position - first
        if not 0 <= column < len(lens.positions):
            continue
        k = min(len(step.top_probs), lens.top_probs.shape[-1])
        if list(step.top_ids[:k]) != [int(i) for i in lens.top_ids[-1, column, :k]]:
            return float("inf")  # not the same distribution at all
        ours = lens.top_probs[-1, column, :k]
        diff = max(abs(float(a) - float(b)) for a, b in zip(step.top_probs[:k], ours, strict=True))
        worst = diff if worst is None else max(worst, diff)
    return worst
