"""How numbers are printed inside figure cells: a fixed count of significant digits, so an effect of
0.004 reads "0.004" instead of a row of "0.00", and a large one does not grow a tail of decimals.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["cell_texts", "significant"]

#: Significant digits a cell label shows.
CELL_DIGITS = 2
#: Below this magnitude a label switches to scientific notation (0.0000123 -> "1.2e-05").
SCIENTIFIC_BELOW = 1e-4


def significant(x: float, digits: int = CELL_DIGITS) -> str:
    """``x`` with ``digits`` significant digits, in plain decimals: 0.00432 -> "0.0043", 0.5 -> "0.5",
    12.3 -> "12", 1234.6 -> "1235" (whole numbers keep every integer digit); "" for NaN, "∞" / "−∞"
    for infinities; exactly 0 prints "0"."""
    if digits < 1:
        raise ValueError(f"digits must be at least 1, not {digits}")
    x = float(x)
    if math.isnan(x):
        return ""
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0:
        return "0"
    # round first so 0.0999 (-> 0.10) is placed by the digits it prints, not by the digits it had
    magnitude = math.floor(math.log10(abs(float(f"{x:.{digits - 1}e}"))))
    if abs(x) < SCIENTIFIC_BELOW:
        return f"{x:.{digits - 1}e}"
    decimals = max(0, digits - 1 - magnitude)
    text = f"{x:.{decimals}f}"
    if decimals and "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def cell_texts(values: np.ndarray, digits: int = CELL_DIGITS, *,
               blank: np.ndarray | None = None) -> np.ndarray:
    """One label per cell of ``values`` (any shape), :func:`significant` each; cells where ``blank``
    is true (and NaN cells) print nothing."""
    v = np.asarray(values, dtype=np.float64)
    out = np.array([significant(x, digits) for x in v.ravel()], dtype=object).reshape(v.shape)
    if blank is not None:
        out = np.where(np.asarray(blank, dtype=bool), "", out)
    return out
