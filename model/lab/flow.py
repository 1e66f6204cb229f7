"""How much each attention link moves (norm-based attention), and which links carry a prediction
(the information-flow graph).

Norm-based attention (Kobayashi et al. 2020):
A weight α_ij says how much of key j's value vector query i takes, not how large that vector is once the
head's output projection has turned it into a change of the residual stream: f_h(x_j) = (x_j W_V + b_V)_h
W_O,h. Since α ≥ 0, the vector that arrives has the norm α_ij · ‖f_h(x_j)‖; the attention pages can show
it instead of α, each row divided by its sum so that the colour scale reads as the weights' does.

The analysis records each head's ‖f_h(x_j)‖ per key ([batch, head, key_pos] per layer,
:attr:`~model.network.recorded.AttentionInputs.value_norms`), so the weighted pattern is computed from
the same recorded inputs as the weights, a head or a block of rows at a time.

The information-flow graph (Ferrando & Voita 2024, as the LLM Transparency Tool computes it): in a Pre-LN
residual stream each layer adds to position t its attention output, Σ_j Σ_h α_htj f_h(x_j) (+ b_O), then
its MLP output. A part's importance for a whole is max(‖whole‖₁ − ‖whole − part‖₁, ε), divided by the sum
over the whole's parts (the residual among them); parts at or below a threshold are dropped and the rest
renormalised; an attention edge j → t sums its heads. The graph is followed from the chosen position
down through the layers, so only the rows it reaches are computed, one row and a few heads at a time (never an
[L, L, width] tensor: a step's parts are at most PART_BYTES). :func:`flow_problem` says when a model's
residual stream does not add up so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from ..decoding.decoders import greedy_decode
from ..network.attention_stack import AttentionStack
from ..network.kinds import get_kind, hook_name
from ..network.recorded import AttentionInputs, record_attention
from ..run.analysis import Analysis
from ..run.interventions import HookFunction, intervene
from ..store.bundle import Bundle
from . import entry

#: The display options of the attention pages: the softmax's weights, or weight × ‖value‖.
WEIGHTINGS = ("weight", "norm")


class NoValueNorms(ValueError):
    """The analysis holds no value norms (one saved before they were recorded)."""


def reweight_rows(pattern: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """``pattern`` [..., rows, key] times ``norms`` [..., key] (broadcast over rows), each row divided by
    its sum; a row that moves nothing (all masked, or every value zero) stays 0."""
    weighted = np.asarray(pattern, dtype=np.float32) * np.asarray(norms, dtype=np.float32)[..., None, :]
    total = weighted.sum(-1, keepdims=True)
    return np.divide(weighted, total, out=np.zeros_like(weighted), where=total > 0)


def layer_value_norms(result: Analysis, kind: str, batch: int = 0) -> list[np.ndarray]:
    """Each layer's ‖f_h(x_j)‖ [head, key_pos] of one attention kind; NoValueNorms when not recorded."""
    try:
        layers = result.layer_inputs(kind)
    except KeyError as e:
        raise NoValueNorms(str(e)) from None
    if any(rec.value_norms is None for rec in layers):
        raise NoValueNorms(f"the analysis recorded no value norms for {get_kind(kind).name} attention")
    return [rec.value_norms[batch] for rec in layers]


class ValueWeightedStack(AttentionStack):
    """``[layer, head, query_pos, key_pos]`` of α_ij · ‖f_h(x_j)‖, each row summing to 1, computed when
    indexed from the recorded inputs, as :class:`AttentionStack` computes the weights."""

    def __init__(self, layers: Sequence[AttentionInputs], batch: int = 0):
        super().__init__(layers, "pattern", batch)
        if any(rec.value_norms is None for rec in self.layers):
            raise NoValueNorms("the analysis recorded no value norms")

    def layer(self, i: int, heads=slice(None), rows: slice = slice(None)) -> np.ndarray:
        pattern = super().layer(i, heads, rows)  # [head, rows, key]
        index = np.atleast_1d(np.arange(self.shape[1])[heads])
        return reweight_rows(pattern, self.layers[i].value_norms[self.batch, index])


def weighted_attention(result: Analysis, kind: str, pattern, heads: tuple[int, int] | None = None):
    """``pattern`` (a stack, kept arrays [layer, head, q, k], or one head's [1, 1, q, k] with ``heads``)
    as weight × ‖value‖, row-normalised: a stack stays a stack, an array becomes an array."""
    if isinstance(pattern, AttentionStack):
        return ValueWeightedStack(pattern.layers, pattern.batch)
    norms = layer_value_norms(result, kind)
    if heads is not None:
        layer, head = heads
        return reweight_rows(pattern, norms[layer][head][None, None])
    return reweight_rows(pattern, np.stack(norms))  # [layer, head, key] broadcast over rows


def first_key_share(pattern: np.ndarray) -> float:
    """Mean over query rows of the share the first key gets ([query, key])."""
    return float(np.asarray(pattern)[:, 0].mean())


# ----------------------------------------------------------------------------- the information-flow graph

#: The smallest importance a part gets (the LLM Transparency Tool's EPS).
EPSILON = 1e-5
#: The threshold the page starts at (as the LLM Transparency Tool's graph).
DEFAULT_THRESHOLD = 0.04
#: Bytes of part vectors (α_htj f_h(x_j), [heads, key, d_model]) one step of the L1 distances builds at most.
PART_BYTES = 16 * 2**20
#: Inputs up to this many tokens get the knock-out table by default; longer ones on request.
KNOCKOUT_DEFAULT_UP_TO = 512
#: Edges the knock-out table checks.
KNOCKOUT_EDGES = 20
#: Edge kinds: attention from a token, the residual past attention, the MLP, the residual past the MLP; and
#: in an encoder–decoder's decoder, cross-attention from a source token (the encoder's last state) and the
#: residual past cross-attention.
EDGE_KINDS = ("attention", "attention_residual", "mlp", "mlp_residual", "cross_attention", "cross_residual")
#: The stacks an edge lies in (FlowGraph.stack): a cross-attention edge is the decoder's.
STACKS = ("decoder", "encoder")


class FlowNotApplicable(ValueError):
    """The model's residual stream does not add up as the graph assumes; ``reason`` is a key."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def flow_problem(cfg) -> str | None:
    """Why the information-flow graph does not apply to a model of ``cfg`` (None: it does).

    The decomposition is exact only where each block adds its sublayers' outputs to the stream as they are
    (Pre-LN): a Post-LN model normalises the sum (MiniLM, e5, BERT-style encoders, Marian, BART), a
    post-norm branch rescales it (Gemma 3, OLMo 2), a parallel block reads one input for both sublayers
    (Pythia). A Pre-LN encoder–decoder (this project's translation models, mBART) gets its decoder's graph
    with cross-attention edges into the source, and the encoder's graph below them; an encoder alone has
    no prediction to explain."""
    if cfg.encoder_only:
        return "encoder"
    if not cfg.norm_first:
        return "post_ln"
    if not cfg.residual:
        return "no_residual"
    if cfg.branch_norm != "before":
        return "post_norm"
    if cfg.parallel_residual:
        return "parallel"
    return None


@dataclass
class FlowGraph:
    """The graph of one prediction: every kept edge, with what it was computed from."""

    tokens: list[str]
    position: int  # the position whose last residual state the graph explains
    n_layers: int
    threshold: float
    predicted_id: int
    predicted_token: str
    log_prob: float  # the model's log-probability of predicted_id after `position`
    # one row per kept edge: layer, kind (index into EDGE_KINDS), source position, target position,
    # importance (after thresholding and renormalising), head (the strongest, attention edges; else -1)
    layer: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    kind: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    source: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    target: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    importance: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    head: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    rows_computed: int = 0  # attention rows decomposed (summed over layers)
    seconds: float = 0.0
    pass_seconds: float = 0.0  # the recorded forward pass alone (about what one knock-out costs)
    # Encoder–decoder models: the source's tokens, each edge's stack (index into STACKS: an encoder edge's
    # positions are source positions, a cross-attention edge's source is one), the encoder's layers
    source_tokens: list[str] = field(default_factory=list)
    stack: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    n_enc_layers: int = 0

    def __post_init__(self) -> None:
        if len(self.stack) != len(self.layer):
            self.stack = np.zeros(len(self.layer), np.int8)

    def attention_edges(self) -> np.ndarray:
        """Indices of the attention edges (self- and cross-attention, either stack), most important first."""
        idx = np.flatnonzero(
            np.isin(self.kind, (EDGE_KINDS.index("attention"), EDGE_KINDS.index("cross_attention")))
        )
        return idx[np.argsort(-self.importance[idx], kind="stable")]

    def attention_kind(self, i: int) -> str:
        """The attention kind of edge ``i`` (decoder, cross or encoder): where its head lives."""
        if int(self.kind[i]) == EDGE_KINDS.index("cross_attention"):
            return "cross"
        return STACKS[int(self.stack[i])]

    def source_token(self, i: int) -> str:
        source_side = int(self.stack[i]) == 1 or int(self.kind[i]) == EDGE_KINDS.index("cross_attention")
        return (self.source_tokens if source_side else self.tokens)[int(self.source[i])]

    def target_token(self, i: int) -> str:
        return (self.source_tokens if int(self.stack[i]) == 1 else self.tokens)[int(self.target[i])]

    def rows(self) -> list[dict]:
        """One plain dict per edge (the CSV export)."""
        return [
            {
                "layer": int(self.layer[i]),
                "kind": EDGE_KINDS[int(self.kind[i])],
                "source": int(self.source[i]),
                "source_token": self.source_token(i),
                "target": int(self.target[i]),
                "target_token": self.target_token(i),
                **({"stack": STACKS[int(self.stack[i])]} if self.source_tokens else {}),
                "importance": float(self.importance[i]),
                "head": int(self.head[i]),
            }
            for i in range(len(self.layer))
        ]


class _Stream:
    """What one pass left for the graph: the residual stream entering each layer and after the last
    ([pos, d_model] each, all the graph keeps of the pass), and, for the one layer being decomposed, its
    recorded attention inputs and values (:meth:`open_layer`), with its W_O and b_O."""

    def __init__(self, model, ids: torch.Tensor, position: int):
        cfg = model.cfg
        self.n_layers = cfg.n_dec_layers
        last = f"decoder.blocks.{self.n_layers - 1}.hook_resid_post"
        keep = lambda name: name.endswith("hook_resid_pre") or name == last
        with torch.no_grad():
            logits, cache = model.run_with_cache(ids, names_filter=keep, logits_from=position)
        self.log_probs = torch.log_softmax(logits[0, 0].double(), -1)  # [vocab], after `position`
        self.resid = [cache[f"decoder.blocks.{i}.hook_resid_pre"][0] for i in range(self.n_layers)]
        self.resid.append(cache[last][0])  # [pos, d_model] each
        self.blocks = [model.decoder.blocks[i] for i in range(self.n_layers)]
        self.attn = [block.self_attn for block in self.blocks]
        self.inputs: dict[int, AttentionInputs] = {}
        self.values: dict[int, torch.Tensor] = {}

    def open_layer(self, layer: int) -> None:
        """Record one layer's attention inputs and values again from the residual stream entering it (its
        norm, then the module itself: the same code as the pass), dropping the layer opened before: so no
        more than one layer's queries and keys are held at a time."""
        self.inputs.clear()
        self.values.clear()
        block, attn = self.blocks[layer], self.attn[layer]
        with torch.no_grad(), record_attention() as recorded:
            normed = block.norm1(self.resid[layer][None])  # [1, pos, d_model]
            attn(normed, normed)
            v = attn.W_v(normed).view(normed.shape[1], attn.n_kv_heads, attn.d_head)  # [pos, kv_head, d_head]
        self.inputs[layer], self.values[layer] = recorded[attn.path], v

    def head_outputs(self, layer: int, n_keys: int) -> torch.Tensor:
        """f_h(x_j) = v_h(x_j) W_O,h of keys 0..n_keys-1: [head, key, d_model]."""
        attn = self.attn[layer]
        H, dh = attn.n_heads, attn.d_head
        v = self.values[layer][:n_keys].repeat_interleave(H // attn.n_kv_heads, dim=1)  # [key, head, d_head]
        w_o = attn.W_o.weight.detach().view(-1, H, dh)  # [d_model, head, d_head]
        return torch.einsum("khe,dhe->hkd", v.float(), w_o.float())

    def out_bias(self, layer: int) -> torch.Tensor | float:
        bias = self.attn[layer].W_o.bias
        return 0.0 if bias is None else bias.detach().float()

    def pattern_row(self, layer: int, row: int) -> torch.Tensor:
        """[head, key] of one query row, computed from the recorded inputs as the pass computed it."""
        _, pattern = self.inputs[layer].compute(rows=slice(row, row + 1))
        return pattern[:, 0]


def importances(whole: torch.Tensor, parts: torch.Tensor) -> torch.Tensor:
    """max(‖whole‖₁ − ‖whole − part‖₁, ε) of each part: ``whole`` [..., d], ``parts`` [..., n, d]
    -> [..., n]."""
    whole_norm = whole.abs().sum(-1, keepdim=True)  # [..., 1]
    return (whole_norm - (whole.unsqueeze(-2) - parts).abs().sum(-1)).clamp_min(EPSILON)


def threshold_renormalise(parts: torch.Tensor, residual: torch.Tensor, threshold: float):
    """The Transparency Tool's rule: contributions at or below ``threshold`` dropped, the rest renormalised
    (``parts`` [..., n], ``residual`` [...]); returns the pair after it. A whole none of whose parts passes
    the threshold keeps no edge (all 0, where the division would give NaN)."""
    parts = parts * (parts > threshold)
    residual = residual * (residual > threshold)
    total = residual + parts.sum(-1)
    safe = torch.where(total > 0, total, torch.ones_like(total))
    return parts / safe.unsqueeze(-1), residual / safe


def _attention_row(
    stream: _Stream,
    layer: int,
    t: int,
    alpha: torch.Tensor,
    f: torch.Tensor,
    whole: torch.Tensor,
    threshold: float,
) -> tuple[torch.Tensor, torch.Tensor, float]:
    """(edge weight per key [key], strongest head per key [key], residual weight) of query row ``t``:
    ``alpha`` [head, key] its weights over the keys it sees, ``f`` [head, >= key, d_model], ``whole`` the
    state after attention (the residual in + Σ parts + b_O)."""
    # the keys a causal row cannot see are parts too (zero vectors, each ε), as in the full tensor
    hidden = alpha.shape[0] * (stream.resid[layer].shape[0] - alpha.shape[1])
    return _row_parts(stream.resid[layer][t].float(), alpha, f, whole, threshold, hidden)


def _row_parts(
    resid_in: torch.Tensor,
    alpha: torch.Tensor,
    f: torch.Tensor,
    whole: torch.Tensor,
    threshold: float,
    hidden: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, float]:
    """One attention row's decomposition: the whole (state after attention) into the residual in and the
    parts α_htj f_h(x_j) (``alpha`` [head, key], ``f`` [head, >= key, d_model]), plus ``hidden`` zero
    parts (keys the row cannot see, each ε). The parts are built a few heads at a time, within PART_BYTES
    (one head's [key, d_model] at least). Returns (edge weight per key, strongest head per key, residual
    weight), thresholded and renormalised."""
    n_heads, n = alpha.shape
    imp = torch.empty(n_heads, n)
    step = max(1, PART_BYTES // (4 * n * f.shape[-1]))  # heads whose parts one step builds
    for h in range(0, n_heads, step):
        imp[h : h + step] = importances(whole, alpha[h : h + step, :, None] * f[h : h + step, :n])
    imp_res = importances(whole, resid_in[None])[0]
    total = imp.sum() + imp_res + EPSILON * hidden
    c, c_res = threshold_renormalise((imp / total).flatten(), imp_res / total, threshold)
    c = c.view(imp.shape)  # [head, key]
    return c.sum(0), c.argmax(0), float(c_res)


def _mlp_row(mid: torch.Tensor, whole: torch.Tensor, threshold: float) -> list[tuple[int, float]]:
    """The MLP's decomposition of one position: the whole (state after the MLP) into its output and the
    state before it; the kept (kind, weight) pairs (kinds 2, mlp, and 3, its residual)."""
    imp = importances(whole, torch.stack([whole - mid, mid]))  # [mlp, residual]
    c, c_res = threshold_renormalise((imp / imp.sum())[:1], imp[1] / imp.sum(), threshold)
    return [(kind, w) for kind, w in ((2, float(c[0])), (3, float(c_res))) if w > threshold]


def build_flow(
    model,
    ids: list[int],
    tokens: list[str],
    position: int,
    threshold: float,
    token_name: Callable[[int], str] = str,
) -> FlowGraph:
    """The information-flow graph of ``ids`` from ``position``'s last residual state down (a
    decoder-only Pre-LN model; FlowNotApplicable otherwise)."""
    problem = flow_problem(model.cfg)
    if problem is not None:
        raise FlowNotApplicable(problem)
    if not 0 <= position < len(ids):
        raise ValueError(f"position {position} is outside 0..{len(ids) - 1}")
    if not 0.0 < threshold < 0.5:
        raise ValueError(f"the threshold must lie between 0 and 0.5, got {threshold}")
    start = time.perf_counter()
    stream = _Stream(model, torch.tensor([ids[: position + 1]]), position)
    pass_seconds = time.perf_counter() - start
    predicted = int(stream.log_probs.argmax())
    edges: list[tuple[int, int, int, int, float, int]] = []  # layer, kind, source, target, weight, head
    reached = {position}  # positions whose state after layer `layer` the graph reaches
    rows_computed = 0
    for layer in range(stream.n_layers - 1, -1, -1):
        rows = sorted(reached)
        stream.open_layer(layer)
        f = stream.head_outputs(layer, rows[-1] + 1)  # [head, key, d_model]; causal: no row looks further
        resid_pre, resid_post = stream.resid[layer], stream.resid[layer + 1]
        below: set[int] = set()
        for t in rows:
            alpha = stream.pattern_row(layer, t)[:, : t + 1]  # [head, key]
            # the MLP: the whole is the state after it, the parts its output and the state after attention
            mid = (
                resid_pre[t].float()
                + torch.einsum("hk,hkd->d", alpha, f[:, : t + 1])
                + stream.out_bias(layer)
            )
            whole = resid_post[t].float()
            imp = importances(whole, torch.stack([whole - mid, mid]))  # [mlp, residual]
            c, c_res = threshold_renormalise((imp / imp.sum())[:1], imp[1] / imp.sum(), threshold)
            kept = [(kind, w) for kind, w in ((2, float(c[0])), (3, float(c_res))) if w > threshold]
            edges += [(layer, kind, t, t, w, -1) for kind, w in kept]
            if not kept:  # the state after attention is not reached (only with a threshold near 0.5)
                continue
            # attention: the whole is the state after it, the parts the residual and every (key, head)
            weight, head, w_res = _attention_row(stream, layer, t, alpha, f, mid, threshold)
            rows_computed += 1
            merged = weight.clone()
            merged[t] += w_res  # the residual and the token's own attention meet at one node
            for j in torch.nonzero(merged > threshold).flatten().tolist():
                below.add(j)
                if float(weight[j]) > 0:
                    edges.append((layer, 0, j, t, float(weight[j]), int(head[j])))
            if merged[t] > threshold and w_res > 0:
                edges.append((layer, 1, t, t, w_res, -1))
        reached = below
        del f
    arr = np.array(edges, dtype=np.float64).reshape(-1, 6)
    return FlowGraph(
        tokens=list(tokens[: position + 1]),
        position=position,
        n_layers=stream.n_layers,
        threshold=threshold,
        predicted_id=predicted,
        predicted_token=token_name(predicted),
        log_prob=float(stream.log_probs[predicted]),
        layer=arr[:, 0].astype(np.int32),
        kind=arr[:, 1].astype(np.int8),
        source=arr[:, 2].astype(np.int32),
        target=arr[:, 3].astype(np.int32),
        importance=arr[:, 4].astype(np.float32),
        head=arr[:, 5].astype(np.int32),
        rows_computed=rows_computed,
        seconds=time.perf_counter() - start,
        pass_seconds=pass_seconds,
    )


class _Seq2SeqStream:
    """What one encoder–decoder pass left for the graph: each stack's residual states ([pos, d_model]: the
    decoder's entering each layer, after self-attention, after cross-attention and after its last layer;
    the encoder's entering each layer, after attention and after its last layer) and the encoder's output
    (the memory cross-attention reads), and, for the layer being decomposed, its recorded attention."""

    def __init__(self, model, src: torch.Tensor, tgt: torch.Tensor, position: int):
        self.n_layers, self.n_enc = model.cfg.n_dec_layers, model.cfg.n_enc_layers
        dec_last = f"decoder.blocks.{self.n_layers - 1}.hook_resid_post"
        enc_last = f"encoder.blocks.{self.n_enc - 1}.hook_resid_post"
        ends = ("hook_resid_pre", "hook_resid_mid", "hook_resid_mid2")
        keep = lambda name: name.endswith(ends) or name in (dec_last, enc_last, "encoder.hook_out")
        with torch.no_grad():
            logits, cache = model.run_with_cache(src, tgt, names_filter=keep, logits_from=position)
        self.log_probs = torch.log_softmax(logits[0, 0].double(), -1)  # [vocab], after `position`

        def states(stack: str, n: int, what: str) -> list[torch.Tensor]:
            return [cache[f"{stack}.blocks.{i}.hook_{what}"][0] for i in range(n)]

        self.pre, self.mid = (
            states("decoder", self.n_layers, "resid_pre"),
            states("decoder", self.n_layers, "resid_mid"),
        )
        self.mid2 = states("decoder", self.n_layers, "resid_mid2")
        self.post = self.pre[1:] + [cache[dec_last][0]]  # the state after each decoder layer
        self.enc_pre, self.enc_mid = (
            states("encoder", self.n_enc, "resid_pre"),
            states("encoder", self.n_enc, "resid_mid"),
        )
        self.enc_post = self.enc_pre[1:] + [cache[enc_last][0]]
        self.memory = cache["encoder.hook_out"][0]  # [src_pos, d_model]
        self.decoder, self.encoder = model.decoder.blocks, model.encoder.blocks

    @staticmethod
    def _recorded(attn, x_q: torch.Tensor, x_kv: torch.Tensor):
        """(recorded inputs, f_h(x_j) [head, key, d_model]) of one attention module on these inputs."""
        with torch.no_grad(), record_attention() as recorded:
            attn(x_q[None], x_kv[None])
            H, dh = attn.n_heads, attn.d_head
            v = (
                attn.W_v(x_kv)
                .view(x_kv.shape[0], attn.n_kv_heads, dh)
                .repeat_interleave(H // attn.n_kv_heads, 1)
            )
            w_o = attn.W_o.weight.detach().view(-1, H, dh)  # [d_model, head, d_head]
            f = torch.einsum("khe,dhe->hkd", v.float(), w_o.float())
        return recorded[attn.path], f

    def decoder_layer(self, layer: int):
        """((self inputs, f), (cross inputs, f)) of decoder layer ``layer``, from its recorded states."""
        block = self.decoder[layer]
        with torch.no_grad():
            normed = block.norm1(self.pre[layer])
            crossed = block.norm2(self.mid[layer])
        return self._recorded(block.self_attn, normed, normed), self._recorded(
            block.cross_attn, crossed, self.memory
        )

    def encoder_layer(self, layer: int):
        block = self.encoder[layer]
        with torch.no_grad():
            normed = block.norm1(self.enc_pre[layer])
        return self._recorded(block.attn, normed, normed)


def _row(inputs: AttentionInputs, t: int) -> torch.Tensor:
    """[head, key] of query row ``t``, computed from the recorded inputs as the pass computed it."""
    return inputs.compute(rows=slice(t, t + 1))[1][:, 0]


def build_seq2seq_flow(
    model,
    src: list[int],
    ids: list[int],
    tokens: list[str],
    source_tokens: list[str],
    position: int,
    threshold: float,
    token_name: Callable[[int], str] = str,
) -> FlowGraph:
    """The information-flow graph of a Pre-LN encoder–decoder: from decoder position ``position``'s last
    state down through the decoder (self-attention, cross-attention and MLP edges; a cross-attention edge
    j → t: source token j's encoder output carried to t), then from the source positions the
    cross-attention edges reach, down through the encoder (its graph starts at its last layer's state,
    which its final norm turns into the memory). ``ids`` are the decoder's input (prefix and output)."""
    problem = flow_problem(model.cfg)
    if problem is not None:
        raise FlowNotApplicable(problem)
    if not 0 <= position < len(ids):
        raise ValueError(f"position {position} is outside 0..{len(ids) - 1}")
    if not 0.0 < threshold < 0.5:
        raise ValueError(f"the threshold must lie between 0 and 0.5, got {threshold}")
    start = time.perf_counter()
    stream = _Seq2SeqStream(model, torch.tensor([src]), torch.tensor([ids[: position + 1]]), position)
    pass_seconds = time.perf_counter() - start
    predicted = int(stream.log_probs.argmax())
    edges: list[tuple[int, int, int, int, float, int, int]] = []  # layer, kind, src, dst, weight, head, stack
    reached, sources = {position}, set()  # decoder positions reached after a layer; source positions
    rows_computed = 0
    for layer in range(stream.n_layers - 1, -1, -1):
        (self_in, f_self), (cross_in, f_cross) = stream.decoder_layer(layer)
        below: set[int] = set()
        for t in sorted(reached):
            kept = _mlp_row(stream.mid2[layer][t].float(), stream.post[layer][t].float(), threshold)
            edges += [(layer, kind, t, t, w, -1, 0) for kind, w in kept]
            if not kept:
                continue
            # cross-attention: the state after it = the state after self-attention + each (source, head) part
            weight, head, w_res = _row_parts(
                stream.mid[layer][t].float(),
                _row(cross_in, t),
                f_cross,
                stream.mid2[layer][t].float(),
                threshold,
            )
            rows_computed += 1
            for j in torch.nonzero(weight > threshold).flatten().tolist():
                sources.add(j)
                edges.append((layer, 4, j, t, float(weight[j]), int(head[j]), 0))
            if w_res <= threshold:
                continue
            edges.append((layer, 5, t, t, w_res, -1, 0))
            # self-attention, causal: keys 0..t, the later ones zero parts
            alpha = _row(self_in, t)[:, : t + 1]
            weight, head, w_res = _row_parts(
                stream.pre[layer][t].float(),
                alpha,
                f_self,
                stream.mid[layer][t].float(),
                threshold,
                hidden=alpha.shape[0] * (position - t),
            )
            rows_computed += 1
            merged = weight.clone()
            merged[t] += w_res  # the residual and the token's own attention meet at one node
            for j in torch.nonzero(merged > threshold).flatten().tolist():
                below.add(j)
                if float(weight[j]) > 0:
                    edges.append((layer, 0, j, t, float(weight[j]), int(head[j]), 0))
            if merged[t] > threshold and w_res > 0:
                edges.append((layer, 1, t, t, w_res, -1, 0))
        reached = below
    for layer in range(stream.n_enc - 1, -1, -1):  # the encoder, from the source positions reached
        inputs, f = stream.encoder_layer(layer)
        below = set()
        for j in sorted(sources):
            kept = _mlp_row(stream.enc_mid[layer][j].float(), stream.enc_post[layer][j].float(), threshold)
            edges += [(layer, kind, j, j, w, -1, 1) for kind, w in kept]
            if not kept:
                continue
            weight, head, w_res = _row_parts(
                stream.enc_pre[layer][j].float(),
                _row(inputs, j),
                f,
                stream.enc_mid[layer][j].float(),
                threshold,
            )
            rows_computed += 1
            merged = weight.clone()
            merged[j] += w_res
            for i in torch.nonzero(merged > threshold).flatten().tolist():
                below.add(i)
                if float(weight[i]) > 0:
                    edges.append((layer, 0, i, j, float(weight[i]), int(head[i]), 1))
            if merged[j] > threshold and w_res > 0:
                edges.append((layer, 1, j, j, w_res, -1, 1))
        sources = below
    arr = np.array(edges, dtype=np.float64).reshape(-1, 7)
    return FlowGraph(
        tokens=list(tokens[: position + 1]),
        position=position,
        n_layers=stream.n_layers,
        threshold=threshold,
        predicted_id=predicted,
        predicted_token=token_name(predicted),
        log_prob=float(stream.log_probs[predicted]),
        layer=arr[:, 0].astype(np.int32),
        kind=arr[:, 1].astype(np.int8),
        source=arr[:, 2].astype(np.int32),
        target=arr[:, 3].astype(np.int32),
        importance=arr[:, 4].astype(np.float32),
        head=arr[:, 5].astype(np.int32),
        rows_computed=rows_computed,
        seconds=time.perf_counter() - start,
        pass_seconds=pass_seconds,
        source_tokens=list(source_tokens),
        stack=arr[:, 6].astype(np.int8),
        n_enc_layers=stream.n_enc,
    )


def _prompt(bundle: Bundle, text: str) -> tuple[list[int], list[str]]:
    prepared = bundle.task.prepare(text, bundle.cfg.max_len, None)
    return list(prepared.prefix), bundle.tokenizer.tokens(prepared.prefix)


@dataclass(frozen=True)
class _Translation:
    """An encoder–decoder's input for the graph: the source, and the decoder's input (its prefix and the
    greedy translation but its last token, so the last position's state predicts that token)."""

    src: list[int]
    ids: list[int]
    tokens: list[str]
    source_tokens: list[str]


def _translation(bundle: Bundle, text: str, direction: str | None) -> _Translation:
    prepared = bundle.task.prepare(text, bundle.cfg.max_len, direction)
    tok, out_tok = bundle.tokenizer, bundle.target_tokenizer
    output = greedy_decode(bundle.model, [prepared.source_ids], [prepared.prefix], out_tok.eos_id)[0]
    ids = list(prepared.prefix) + list(output[:-1])
    return _Translation(list(prepared.source_ids), ids, out_tok.tokens(ids), tok.tokens(prepared.source_ids))


@entry
def flow_graph(
    bundle: Bundle,
    text: str,
    position: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    direction: str | None = None,
) -> FlowGraph:
    """The information-flow graph of ``text``'s prompt from ``position`` (None: the last prompt token,
    whose state predicts the next token). For a Pre-LN encoder–decoder, ``text`` is the source (in
    ``direction``) and the positions are the decoder's: its prefix and greedy translation, the last
    position predicting the translation's last token. FlowNotApplicable (reason key) for a model it does
    not fit."""
    problem = flow_problem(bundle.cfg)
    if problem is not None:
        raise FlowNotApplicable(problem)
    with bundle.model.lock:
        if bundle.cfg.decoder_only:
            ids, tokens = _prompt(bundle, text)
            position = len(ids) - 1 if position is None else int(position)
            return build_flow(bundle.model, ids, tokens, position, threshold, bundle.tokenizer.id_to_token)
        run = _translation(bundle, text, direction)
        position = len(run.ids) - 1 if position is None else int(position)
        return build_seq2seq_flow(
            bundle.model,
            run.src,
            run.ids,
            run.tokens,
            run.source_tokens,
            position,
            threshold,
            bundle.target_tokenizer.id_to_token,
        )


def _knocked_out(layer: int, source: int, target: int):
    """fn for hook_pattern: the weight from ``target`` to ``source`` set to 0 in every head, the row
    renormalised."""

    def fn(pattern: torch.Tensor) -> torch.Tensor:  # [batch, head, query, key]
        pattern = pattern.clone()
        pattern[:, :, target, source] = 0.0
        total = pattern[:, :, target].sum(-1, keepdim=True)
        pattern[:, :, target] = torch.where(total > 0, pattern[:, :, target] / total.clamp_min(1e-30), 0.0)
        return pattern

    return fn


def knockout_effects(
    model,
    ids: list[int],
    position: int,
    predicted_id: int,
    links: Sequence[tuple],
    src: list[int] | None = None,
) -> list[float]:
    """For each (layer, source, target[, kind]): the change of log p(predicted_id) after ``position`` when
    the attention from target to source is knocked out at that layer (every head; rows renormalised);
    kind (decoder, cross or encoder; default decoder) names the attention. ``src``: an encoder–decoder's
    source (``ids`` are then the decoder's input)."""
    x = torch.tensor([ids[: position + 1]])
    source = None if src is None else torch.tensor([src])

    def log_prob() -> float:
        with torch.no_grad():
            logits = (
                model(x, logits_from=position) if source is None else model(source, x, logits_from=position)
            )
        return float(torch.log_softmax(logits[0, 0].double(), -1)[predicted_id])

    base = log_prob()
    out = []
    for link in links:
        layer, source_pos, target = (int(v) for v in link[:3])
        kind = str(link[3]) if len(link) > 3 else "decoder"
        hook = hook_name(kind, layer, "pattern")
        edit = HookFunction(
            hook,
            _knocked_out(layer, source_pos, target),
            what=f"{kind} attention {target}→{source_pos} knocked out",
        )
        with intervene(model, edit):
            out.append(log_prob() - base)
    return out


@dataclass(frozen=True)
class EdgeCheck:
    """The top attention edges' importance beside what knocking each out does to the prediction."""

    layer: np.ndarray
    source: np.ndarray
    target: np.ndarray
    importance: np.ndarray
    effect: np.ndarray  # change of log p(predicted token); negative: the prediction got less likely
    spearman: float  # rank correlation of importance and -effect (NaN below 3 edges)
    seconds: float
    kinds: tuple[str, ...] = ()  # each edge's attention kind (decoder, cross, encoder)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (average ranks for ties); NaN for fewer than 3 pairs or a constant."""
    if len(a) < 3:
        return float("nan")

    def ranks(x):
        order = np.argsort(x, kind="stable")
        r = np.empty(len(x))
        r[order] = np.arange(len(x))
        values = np.asarray(x)[order]
        for v in np.unique(values):  # ties share their mean rank
            same = np.flatnonzero(np.asarray(x) == v)
            r[same] = r[same].mean()
        return r

    ra, rb = ranks(np.asarray(a, float)), ranks(np.asarray(b, float))
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


@entry
def check_edges(
    bundle: Bundle,
    text: str,
    position: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    top: int = KNOCKOUT_EDGES,
    links: tuple[tuple, ...] | None = None,
    direction: str | None = None,
) -> EdgeCheck:
    """Knock out the ``top`` most important attention edges of the graph one at a time (or ``links``,
    (layer, source, target[, kind]) each) and measure the change of the predicted token's log-probability.
    An encoder–decoder's edges may be self-, cross- or encoder attention."""
    graph = flow_graph(bundle, text, position, threshold, direction)
    if bundle.cfg.decoder_only:
        ids, src = _prompt(bundle, text)[0], None
    else:
        with bundle.model.lock:
            run = _translation(bundle, text, direction)
        ids, src = run.ids, run.src
    idx = graph.attention_edges()
    known = {
        (int(graph.layer[i]), int(graph.source[i]), int(graph.target[i]), graph.attention_kind(i)): float(
            graph.importance[i]
        )
        for i in idx
    }
    if links is None:
        idx = idx[:top]
        links = tuple(
            (int(graph.layer[i]), int(graph.source[i]), int(graph.target[i]), graph.attention_kind(i))
            for i in idx
        )
        importance = graph.importance[idx]
    else:
        links = tuple((*map(int, link[:3]), str(link[3]) if len(link) > 3 else "decoder") for link in links)
        importance = np.array([known.get(link, 0.0) for link in links], np.float32)
    start = time.perf_counter()
    with bundle.model.lock:
        effects = np.array(
            knockout_effects(bundle.model, ids, graph.position, graph.predicted_id, links, src)
        )
    arr = np.array([link[:3] for link in links], dtype=np.int32).reshape(-1, 3)
    return EdgeCheck(
        arr[:, 0],
        arr[:, 1],
        arr[:, 2],
        np.asarray(importance, np.float32),
        effects,
        spearman(np.asarray(importance), -effects),
        time.perf_counter() - start,
        kinds=tuple(link[3] for link in links),
    )
