"""The one exception a bad argument gets, and the checks every public function shares.

Each check names the argument and says what was expected, so a mistake surfaces here as one line
rather than as a NumPy broadcasting error from deep inside a figure.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["ArgumentError", "check_choice", "check_index", "check_tokens"]


class ArgumentError(ValueError):
    """A public function's argument is not what it expects; the message names it.

    >>> from attention_lens import ArgumentError
    >>> issubclass(ArgumentError, ValueError)
    True
    """


def check_index(value: object, n: int, name: str, what: str = "") -> int:
    """``value`` as an index in ``0..n-1`` (no negative indices: they hide off-by-one mistakes).

    >>> check_index(1, 2, "layer")
    1
    >>> check_index(2, 2, "layer", "of the cross attention")
    Traceback (most recent call last):
    ...
    attention_lens.checks.ArgumentError: layer=2 is out of range: expected 0 to 1 (2 layers ...)
    """
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ArgumentError(f"{name} must be a whole number, got {type(value).__name__} {value!r}")
    if not 0 <= int(value) < n:
        where = f" ({n} {name}s{' ' + what if what else ''})"
        raise ArgumentError(f"{name}={value} is out of range: expected 0 to {n - 1}{where}")
    return int(value)


def check_choice(value: object, choices: Sequence[str], name: str) -> str:
    """``value`` if it is one of ``choices``.

    >>> check_choice("from", ("from", "to"), "side")
    'from'
    """
    if value not in choices:
        raise ArgumentError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return str(value)


def check_tokens(tokens: object, n: int, name: str, axis: str) -> list[str]:
    """``tokens`` as a list of ``n`` strings (``axis`` says what they label, for the message).

    >>> check_tokens(["a", "b"], 2, "tokens", "query rows")
    ['a', 'b']
    >>> check_tokens(["a"], 2, "tokens", "query rows")
    Traceback (most recent call last):
    ...
    attention_lens.checks.ArgumentError: tokens has 1 entries but the attention has 2 query rows
    """
    if tokens is None or isinstance(tokens, str | bytes):
        raise ArgumentError(f"{name} must be a list of strings, got {type(tokens).__name__}")
    try:
        out = list(tokens)  # type: ignore[call-overload]
    except TypeError:
        raise ArgumentError(f"{name} must be a list of strings, got {type(tokens).__name__}") from None
    bad = [t for t in out if not isinstance(t, str)]
    if bad:
        raise ArgumentError(f"{name} must all be strings, found {type(bad[0]).__name__} {bad[0]!r}")
    if len(out) != n:
        raise ArgumentError(f"{name} has {len(out)} entries but the attention has {n} {axis}")
    return out
