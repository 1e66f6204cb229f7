"""Reading back arrays from plotly JSON (``{"dtype", "bdata", "shape"}`` typed-array specs).

Plotly >= 6 serialises numpy arrays as base64 typed arrays; this turns such a spec (or a
plain list) back into numpy, for tests and for checking what a figure really sends.
"""

from __future__ import annotations

import base64

import numpy as np

_DTYPES = {
    "f4": "<f4",
    "f8": "<f8",
    "i1": "i1",
    "u1": "u1",
    "i2": "<i2",
    "u2": "<u2",
    "i4": "<i4",
    "u4": "<u4",
}


def is_typed_array_spec(value: object) -> bool:
    """True when ``value`` is a plotly typed-array spec (a dict with ``dtype`` and ``bdata``)."""
    return isinstance(value, dict) and "dtype" in value and "bdata" in value


def decode_plotly_array(value: object) -> np.ndarray:
    """A plotly JSON array value (typed-array spec or nested list) as a numpy array."""
    if not is_typed_array_spec(value):
        return np.asarray(value)
    spec: dict = value  # type: ignore[assignment]
    dtype = _DTYPES.get(spec["dtype"])
    if dtype is None:
        raise ValueError(f"unsupported plotly typed-array dtype {spec['dtype']!r}")
    raw = spec["bdata"]
    data = base64.b64decode(raw) if isinstance(raw, str) else bytes(raw)
    arr = np.frombuffer(data, dtype=dtype)
    shape = spec.get("shape")
    if shape is not None:
        dims = [int(s) for s in str(shape).split(",")]
        arr = arr.reshape(dims)
    return arr
