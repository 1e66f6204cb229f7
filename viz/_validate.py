"""Input checks shared by the figure functions; every failure is a clear ``ValueError``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_DIM_NAMES = {
    2: "[query, key]",
    3: "[head, query, key]",
    4: "[layer, head, query, key]",
}


def as_array(
    x: object, ndim: int | tuple[int, ...], name: str, *, dims: str | None = None, dtype: type = np.float32
) -> np.ndarray:
    """``np.asarray(x)`` as ``dtype`` (float32 by default), checking the number of dimensions.

    ``dims`` describes the expected layout for the error message, e.g. ``"[head, key]"``.
    """
    try:
        arr = np.asarray(x)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise ValueError(f"{name} could not be converted to an array: {exc}") from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if arr.ndim not in allowed:
        want = " or ".join(f"{d}-D {dims or _DIM_NAMES.get(d, '')}".strip() for d in allowed)
        raise ValueError(f"{name} must be {want}, got a {arr.ndim}-D array of shape {tuple(arr.shape)}")
    if any(s == 0 for s in arr.shape):
        raise ValueError(f"{name} must not be empty, got shape {tuple(arr.shape)}")
    return arr.astype(dtype, copy=False)


def check_tokens(
    tokens: Sequence[str], n: int, *, array_name: str, axis_name: str, token_name: str
) -> list[str]:
    """Check ``tokens`` is a list of ``n`` strings; return it as a list.

    Error example: ``pattern has 7 query rows but 6 query tokens were given``.
    """
    if tokens is None or isinstance(tokens, str | bytes):
        raise ValueError(f"{token_name} must be a list of strings, got {type(tokens).__name__}")
    tokens = list(tokens)
    bad = [t for t in tokens if not isinstance(t, str)]
    if bad:
        raise ValueError(f"{token_name} must all be strings, found {type(bad[0]).__name__}: {bad[0]!r}")
    if len(tokens) != n:
        raise ValueError(f"{array_name} has {n} {axis_name} but {len(tokens)} {token_name} were given")
    return tokens


def check_mask(mask: object, shape: tuple[int, ...], name: str = "mask") -> np.ndarray:
    """A boolean mask broadcast to ``shape`` (True = masked / not attendable)."""
    m = np.asarray(mask)
    if m.dtype != bool:
        raise ValueError(f"{name} must be a boolean array (True = masked), got dtype {m.dtype}")
    try:
        return np.broadcast_to(m, shape)
    except ValueError as exc:
        raise ValueError(f"{name} of shape {tuple(m.shape)} does not fit the pattern shape {shape}") from exc


def check_index(index: int, n: int, name: str) -> int:
    """An integer index in ``[0, n)`` (negative indices are not accepted)."""
    if isinstance(index, bool) or not isinstance(index, int | np.integer):
        raise ValueError(f"{name} must be an integer, got {type(index).__name__}")
    if not 0 <= int(index) < n:
        raise ValueError(f"{name}={index} is out of range for {n} tokens (valid: 0..{n - 1})")
    return int(index)
