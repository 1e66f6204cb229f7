"""Model names: plain folder names, never paths, so a name can only ever mean one folder directly
inside a models folder."""

from __future__ import annotations

import re

#: A model name is a plain folder name: letters, digits, "_", "-" and "." (not first), at most 64.
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class UnknownModelError(LookupError):
    """A model name no source holds; the message lists what exists."""


def is_model_name(name: object) -> bool:
    """True for a plain name that can only ever mean a folder directly inside the models folder."""
    return isinstance(name, str) and _NAME_RE.fullmatch(name) is not None and ".." not in name


def check_model_name(name: object) -> str:
    """``name`` if it is a plain model name; else UnknownModelError saying what a name may hold."""
    if not is_model_name(name):
        raise UnknownModelError(
            f"{name!r} is not a model name: use letters, digits, '_', '-' or '.' (not first, no '..'), "
            "at most 64 characters, no path separators"
        )
    return name
