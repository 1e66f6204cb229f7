"""The positional-encoding lab's numbers from the model.

* The position table: the model's own learned one, or the sinusoidal table at the size asked for.
* RoPE, with the model's own functions (``rope_angles``, ``apply_rope``): the rotation angle per
  position step of each pair, and q · k for one q and one k moved to every pair of positions.
* T5's relative position bias, read from each stack's table with the model's own bucketing
  (``relative_bias``): the number each head adds to a score, against the distance key − query.
* The two vectors added at the input for a sentence, read from the real hooks
  ``encoder.embed.hook_embed`` and ``encoder.embed.hook_pos_embed`` (a decoder-only model's input is
  its decoder's: ``decoder.embed.…``).
* The 2017 paper's formulas in float64: the sinusoidal table and the shift matrix M_k with
  PE(pos + k) = M_k · PE(pos), one 2×2 rotation per frequency pair, so the encoding of a position k
  steps later is a fixed linear function of the encoding now (the relative-position property).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..decoding.strategy import Strategy
from ..network.positional import apply_rope, relative_bias, relative_buckets, rope_angles, sinusoidal_table
from ..run.analysis import analyze
from ..store.bundle import Bundle
from . import entry

EMBED_HOOK = "encoder.embed.hook_embed"
POS_HOOK = "encoder.embed.hook_pos_embed"


def _input_stack(bundle: Bundle) -> str:
    """The stack that reads the input: the encoder, or a decoder-only model's decoder."""
    return "decoder" if bundle.cfg.decoder_only else "encoder"


@entry
def position_table(bundle: Bundle, n_pos: int, d_model: int) -> tuple[np.ndarray, bool]:
    """(table [pos, d_model], whether it is the model's own) for the positional-encoding lab.

    The model's own learned table when the model learns its positions and the size asked for is
    the model's; otherwise the sinusoidal table of the 2017 paper at that size.
    """
    cfg = bundle.cfg
    if cfg.pos_encoding == "learned" and (n_pos, d_model) == (cfg.max_len, cfg.d_model):
        positions = getattr(getattr(bundle.model, _input_stack(bundle)).embed, "positions", None)
        if positions is not None and hasattr(positions, "table"):
            return positions.table.detach().float().numpy().copy(), True  # not a view of the weights
    own = cfg.pos_encoding == "sinusoidal" and d_model == cfg.d_model
    return sinusoidal_table(int(n_pos), int(d_model)).numpy().astype(np.float32), own


# --------------------------------------------------------------------------- RoPE


@entry(models=0)
def rope_frequencies(d_head: int, base: float = 10000.0, factor: float = 1.0,
                     pairs: tuple[float, ...] = ()) -> np.ndarray:
    """The model's rotation angle per position step of each pair (radians, ``[d_head/2]``), for RoPE
    base ``base`` (the model's ``rope_theta``: SmolLM2 uses 100,000) and linear scaling ``factor``
    (Gemma 3's global layers); ``pairs``: longrope's factor of each pair (Phi-3), its angle divided by it.
    ``d_head``: the dims that turn (partial rotary: the first part of a head).

    Read from ``rope_angles`` itself: the angle of position 1 (every angle is below π).
    """
    cos, sin = rope_angles(2, d_head, base, factor=factor, pair_factors=tuple(pairs))
    return np.arctan2(sin[1].double().numpy(), cos[1].double().numpy())


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, rotary_dims: int) -> torch.Tensor:
    """x [1, pos, 1, d_head] rotated as an attention module does: its first ``rotary_dims`` only."""
    if rotary_dims >= x.shape[-1]:
        return apply_rope(x, cos, sin)
    return torch.cat([apply_rope(x[..., :rotary_dims], cos, sin), x[..., rotary_dims:]], dim=-1)


@entry(models=0)
def rope_scores(d_head: int, n_pos: int, seed: int = 0, base: float = 10000.0, rotary_dims: int | None = None,
                factor: float = 1.0, pairs: tuple[float, ...] = (), scale: float = 1.0) -> np.ndarray:
    """q · k (float32 ``[m, n]``) for one random q rotated to position m and one random k rotated to n.

    Uses the model's ``rope_angles`` and ``apply_rope``; the result depends on m − n only.
    ``rotary_dims`` (None: all of d_head): only the first dims turn (partial rotary, Pythia and Phi-3),
    the rest add the same q · k at every pair of positions. ``pairs`` and ``scale``: longrope's factors
    and attention factor (Phi-3), as the model's attention applies them.
    """
    turned = d_head if rotary_dims is None else int(rotary_dims)
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, d_head, generator=g)
    cos, sin = rope_angles(n_pos, turned, base, factor=factor, pair_factors=tuple(pairs), scale=scale)
    q_rot = _rotate(q.expand(1, n_pos, 1, d_head), cos, sin, turned)[0, :, 0]  # [pos, d_head]
    k_rot = _rotate(k.expand(1, n_pos, 1, d_head), cos, sin, turned)[0, :, 0]
    return (q_rot @ k_rot.T).numpy()


@dataclass(frozen=True)
class LayerRotation:
    """How one self-attention layer turns q and k, read from its module."""

    layer: int
    rotary_dims: int  # the first dims of each head that turn (all of d_head unless partial rotary)
    base: float  # its RoPE base (Gemma 3: 10,000 on local layers, 1,000,000 on global ones)
    factor: float  # linear RoPE scaling: positions divided by it (1: none)
    window: int  # its sliding window (0: global), which Gemma 3's bases go with


@entry
def layer_rotations(bundle: Bundle) -> list[LayerRotation]:
    """Each self-attention layer's rotation (the decoder's, or an encoder-only model's encoder's); []
    for a model without RoPE."""
    model = bundle.model
    stack = "encoder" if model.decoder is None else "decoder"
    found = []
    for i, block in enumerate(getattr(model, stack).blocks):
        module = block.attn if stack == "encoder" else block.self_attn
        if not module.rotary:
            return []
        found.append(LayerRotation(i, int(module.rotary_dims), float(module.rope_theta),
                                   float(module.rope_factor), int(module.window)))
    return found


# --------------------------------------------------------------------------- relative position bias (T5)


@dataclass(frozen=True)
class PositionBias:
    """One stack's relative position bias: what each head adds to a score at each distance."""

    stack: str  # "encoder" or "decoder"
    distance: np.ndarray  # [n] key position - query position (the decoder's: 0 and below, its past)
    bias: np.ndarray  # [head, n] float32
    buckets: np.ndarray  # [n] the bucket each distance falls in
    bidirectional: bool


@entry
def position_biases(bundle: Bundle, reach: int) -> list[PositionBias]:
    """Each stack's relative position bias over distances -reach .. reach (the decoder's past only, where
    later keys are masked), from the table its first layer holds; [] for a model without one."""
    found = []
    for stack in ("encoder", "decoder"):
        module = getattr(bundle.model, stack, None)
        first = module.blocks[0] if module is not None and len(module.blocks) else None
        attn = None if first is None else (first.attn if stack == "encoder" else first.self_attn)
        table = None if attn is None else attn.position_bias_table()
        if table is None:
            continue
        reach = max(1, int(reach))
        # query at position reach, keys at 0 .. 2 * reach: distances -reach .. reach in one row
        keys = 2 * reach + 1 if table.bidirectional else reach + 1
        with torch.no_grad():
            row = relative_bias(table.weight.detach().float(), 1, keys, reach, table.bidirectional,
                                table.max_distance)[:, 0]  # [head, keys]
        distance = np.arange(keys) - reach

        buckets = relative_buckets(torch.from_numpy(distance), table.bidirectional, table.weight.shape[0],
                                   table.max_distance).numpy()
        found.append(PositionBias(stack, distance, row.numpy().copy(), buckets, table.bidirectional))
    return found


# --------------------------------------------------------------------------- one sentence


@dataclass(frozen=True)
class InputVectors:
    """What the encoder adds at its input for one sentence (batch axis dropped, float32)."""

    tokens: list[str]
    embed: np.ndarray  # [pos, d_model], hook_embed: token embedding × sqrt(d_model)
    pos: np.ndarray | None  # [pos, d_model], hook_pos_embed; None for RoPE / no positional encoding

    @property
    def embed_norm(self) -> np.ndarray:
        return np.linalg.norm(self.embed, axis=-1)

    @property
    def pos_norm(self) -> np.ndarray | None:
        return None if self.pos is None else np.linalg.norm(self.pos, axis=-1)


def input_vectors(activations: dict[str, np.ndarray], tokens: list[str],
                  stack: str = "encoder") -> InputVectors:
    embed_hook, pos_hook = (h.replace("encoder.", f"{stack}.", 1) for h in (EMBED_HOOK, POS_HOOK))
    pos = activations.get(pos_hook)
    return InputVectors(list(tokens), np.asarray(activations[embed_hook][0]),
                        None if pos is None else np.asarray(pos))


@entry
def sentence_input_vectors(bundle: Bundle, text: str, direction: str | None, strategy: Strategy | None = None,
                           max_new: int | None = None) -> InputVectors:
    """The two hooks of the input stack for ``text`` (only they are recorded), decoded as the page's
    analysis was (``strategy``, ``max_new``: the sidebar's); raises ``InputError`` on unusable input."""
    stack = _input_stack(bundle)
    hooks = {h.replace("encoder.", f"{stack}.", 1) for h in (EMBED_HOOK, POS_HOOK)}
    result = analyze(bundle, text, direction, strategy=strategy, max_new=max_new, keep=hooks.__contains__)
    tokens = result.target_tokens if stack == "decoder" else result.source_tokens
    return input_vectors(result.activations, tokens, stack)


# --------------------------------------------------------------------------- the 2017 formulas, float64


def sinusoidal_table64(n_pos: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(...), float64 ``[n_pos, d_model]``."""
    if d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be even and >= 2, got {d_model}")
    pos = np.arange(n_pos, dtype=np.float64)[:, None]
    two_i = np.arange(0, d_model, 2, dtype=np.float64)
    angles = pos / base ** (two_i / d_model)  # [pos, d_model/2]
    table = np.empty((n_pos, d_model), dtype=np.float64)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles)
    return table


def sinusoidal_frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    """ω_i = 1 / base^(2i/d) of each pair (2i, 2i+1), float64 ``[d_model/2]``."""
    return 1.0 / base ** (np.arange(0, d_model, 2, dtype=np.float64) / d_model)


def shift_matrix(d_model: int, k: int, base: float = 10000.0) -> np.ndarray:
    """M_k (float64 ``[d, d]``) with PE(pos + k) = M_k · PE(pos) for every pos.

    Block diagonal: pair (sin, cos) of frequency ω turns by the angle kω,
    sin((p+k)ω) = cos(kω)·sin(pω) + sin(kω)·cos(pω) and cos((p+k)ω) = −sin(kω)·sin(pω) + cos(kω)·cos(pω).
    """
    theta = k * sinusoidal_frequencies(d_model, base)
    c, s = np.cos(theta), np.sin(theta)
    m = np.zeros((d_model, d_model), dtype=np.float64)
    even = np.arange(0, d_model, 2)
    m[even, even] = c
    m[even, even + 1] = s
    m[even + 1, even] = -s
    m[even + 1, even + 1] = c
    return m


def shift_errors(table: np.ndarray, k: int, base: float = 10000.0) -> np.ndarray:
    """max_j |PE(pos + k) − M_k · PE(pos)|_j for pos = 0 … n_pos − k − 1 (float64 ``[n_pos − k]``)."""
    t = np.asarray(table, dtype=np.float64)
    n_pos, d = t.shape
    if not 0 <= k < n_pos:
        raise ValueError(f"k must be in [0, {n_pos - 1}], got {k}")
    shifted = t[: n_pos - k] @ shift_matrix(d, k, base).T  # row p: M_k · PE(p)
    return np.abs(t[k:] - shifted).max(axis=1)


@dataclass(frozen=True)
class Shift:
    """The relative-position property at one offset ``k``, on the sinusoidal table of the size asked for."""

    matrix: np.ndarray  # M_k, float64 [d_model, d_model]
    errors: np.ndarray  # max_j |PE(pos + k) − M_k · PE(pos)|_j, float64 [n_pos − k]


@entry(models=0)
def sinusoid_shift(n_pos: int, d_model: int, k: int) -> Shift:
    """M_k, and how exactly it moves every position of the ``n_pos`` x ``d_model`` sinusoidal table k on."""
    return Shift(shift_matrix(d_model, k), shift_errors(sinusoidal_table64(n_pos, d_model), k))
