"""The pitfall lab: the loaded model run with one fault switched on (through ``model.run.interventions``,
never by touching weights), a fully masked row through a real softmax, the word-order test with and
without the positional encoding, what the model drops past ``max_len``, the dimensions lab on a tiny
random model, and the models trained with a fault.

Every number comes from a real run; every error shown is the real exception, caught.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import torch

from ..data.char_tokenizer import CharTokenizer
from ..decoding.decoders import greedy_decode
from ..network.attention import masked_softmax
from ..network.config import ConfigError, ModelConfig
from ..network.kinds import hook_name
from ..network.trace import trace_shapes
from ..network.transformer import Transformer
from ..run.analysis import Analysis, Step, analyze, attention_only
from ..run.interventions import (
    CausalMask,
    NoPositionalEncoding,
    NoScaling,
    SoftmaxOverQueries,
    edit_problems,
    intervene,
)
from ..store.bundle import Bundle
from ..training.train import step_series
from . import entry


def fault_edits(fault: str, causal_mode: str = "reversed") -> tuple:
    """The interventions a fault switches on (empty for faults that are not interventions)."""
    if fault == "scaling":
        return (NoScaling(),)
    if fault == "axis":
        return (SoftmaxOverQueries(),)
    if fault == "causal":
        return (CausalMask(causal_mode),)
    if fault == "position":
        return (NoPositionalEncoding(),)
    return ()


@entry
def fault_problems(bundle: Bundle, fault: str, causal_mode: str = "reversed") -> list[str]:
    """Why a fault cannot be shown on this model (empty: it can)."""
    edits = fault_edits(fault, causal_mode)
    return edit_problems(bundle.model, *edits) if edits else []


# --------------------------------------------------------------------------- 1. a fault on the real model


@dataclass
class LayerRun:
    """One layer of one attention kind of a run, with the run's tokens, output and steps: what a page
    draws of a run (every layer of SmolLM2 at 256 tokens would be ~140 MB a run, thrashing the cache)."""

    query_tokens: list[str]
    key_tokens: list[str]
    output_text: str  # the output written, or the given target when teacher-forced
    steps: list[Step]
    edits: tuple[str, ...]  # labels of the interventions it ran under
    pattern: np.ndarray  # [head, query_pos, key_pos] float32
    masked: np.ndarray  # same shape, bool: True where the scores are -inf


@entry
def layer_run(bundle: Bundle, text: str, direction: str | None, target: str | None, edits: tuple,
              kind: str, layer: int) -> LayerRun:
    """``analyze(...)`` (greedy, or teacher-forced over ``target``) under ``edits``, keeping one layer's
    patterns and scores of ``kind`` only: the pass is the same, only what is recorded differs."""
    pattern_hook, scores_hook = hook_name(kind, layer, "pattern"), hook_name(kind, layer, "scores")
    run = analyze(bundle, text, direction, target, edits=edits, keep={pattern_hook, scores_hook}.__contains__)
    queries, keys = run.tokens_for(kind)
    return LayerRun(queries, keys, run.output_text, run.steps, run.edits,
                    run.activations[pattern_hook][0], ~np.isfinite(run.activations[scores_hook][0]))


@dataclass
class FaultRun:
    """The same input, intact and with the fault, at one layer. ``intact`` and ``broken`` are
    teacher-forced over the intact model's own output (so both maps have the same rows);
    ``broken_output`` is what the broken model itself writes."""

    intact: LayerRun  # teacher-forced over the intact output
    broken: LayerRun  # same pass, with the fault
    intact_output: str
    broken_output: str
    edits: tuple[str, ...]


def compose_fault_run(run: Callable[[str | None, tuple], LayerRun], edits: tuple) -> FaultRun:
    """The four runs of a fault from ``run(target, edits)``: the greedy output; the intact and the
    broken model both reading it (teacher forcing); the broken model's own greedy output. With no
    output (or no decoder) the broken teacher-forced run is its greedy run: computed once."""
    greedy = run(None, ())
    target = greedy.output_text if greedy.output_text.strip() else None
    intact = run(target, ()) if target else greedy
    broken = run(target, edits)
    broken_greedy = run(None, edits) if target else broken
    return FaultRun(intact, broken, greedy.output_text, broken_greedy.output_text, broken.edits)


# --------------------------------------------------------------------------- a fully masked row


@dataclass
class MaskedRow:
    scores: list[list[float]]  # two rows: one partly masked, one fully masked (-inf)
    torch_softmax: list[list[float]]  # torch.softmax(scores, -1): the fully masked row is NaN
    model_softmax: list[list[float]]  # model.network.attention.masked_softmax: that row is all 0
    nan_after_values: list[list[float]]  # torch.softmax(...) @ V: the NaN spreads to the output


@entry(models=0)
def masked_row_demo() -> MaskedRow:
    """Run a real softmax on a row that is masked everywhere (computed, not written down)."""
    scores = torch.tensor([[1.0, 2.0, 0.5, 1.5], [1.0, 2.0, 0.5, 1.5]])
    mask = torch.tensor([[False, True, False, True], [True, True, True, True]])
    masked = scores.masked_fill(mask, float("-inf"))
    plain = torch.softmax(masked, dim=-1)
    safe = masked_softmax(masked, mask, dim=-1)
    values = torch.arange(8, dtype=torch.float32).view(4, 2)  # [key, d_head]
    return MaskedRow(masked.tolist(), plain.tolist(), safe.tolist(), (plain @ values).tolist())


# --------------------------------------------------------------------------- word order without positions


def word_groups(tokens: list[str]) -> list[list[int]]:
    """Source positions (the final <eos> excluded) grouped into words: a word starts at a token with
    the word marker "▁" when the tokenizer uses one; otherwise every token (a character) is its own."""
    body = list(range(len(tokens) - 1))
    if not any(tok.startswith("▁") for tok in tokens):
        return [[i] for i in body]
    groups: list[list[int]] = []
    for i in body:
        if tokens[i].startswith("▁") or not groups:
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


def shuffle_order(tokens: list[str], seed: int) -> list[int]:
    """A seeded shuffle of the words (or characters): new position -> old position, <eos> kept last.
    Re-drawn (up to 20 times) while it equals the original order, when the words are not all equal."""
    groups = word_groups(tokens)
    rng = random.Random(seed)
    order = list(range(len(groups)))
    distinct = len({tuple(tokens[i] for i in g) for g in groups}) > 1
    for _ in range(20):
        rng.shuffle(order)
        if not distinct or [tuple(tokens[i] for i in groups[j]) for j in order] != \
                [tuple(tokens[i] for i in g) for g in groups]:
            break
    return [i for j in order for i in groups[j]] + [len(tokens) - 1]


@dataclass
class OrderRun:
    source_tokens: list[str]
    shuffled_tokens: list[str]
    order: list[int]  # shuffled position -> original position
    shuffled_text: str
    outputs: dict[str, str]  # "original/with", "original/without", "shuffled/with", "shuffled/without"
    # "with"/"without" -> [source position]: cos(original row, the same token's row in the shuffled run)
    cosine: dict[str, np.ndarray]


def _cosine_rows(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
    a64, b64 = a.double(), b.double()
    return (torch.nn.functional.cosine_similarity(a64, b64, dim=-1)).numpy()


@entry
def order_run(bundle: Bundle, text: str, direction: str | None, seed: int) -> OrderRun:
    """The sentence and a shuffled copy, each through the model with and without the positional encoding.

    The shuffle permutes the source token ids (whole words together), so each original token has a
    known place in the shuffled sentence; the cosine compares its encoder output there and here.
    """
    model, tok, task = bundle.model, bundle.tokenizer, bundle.task
    prepared = task.prepare(text, model.cfg.max_len, direction)
    ids = list(prepared.source_ids)
    tokens = tok.tokens(ids)
    order = shuffle_order(tokens, seed)
    shuffled = [ids[i] for i in order]
    outputs, memories = {}, {}
    for pos in ("with", "without"):
        edits = () if pos == "with" else (NoPositionalEncoding(),)
        with model.lock, torch.no_grad(), intervene(model, *edits):
            model.eval()
            for name, src in (("original", ids), ("shuffled", shuffled)):
                out_tok = bundle.target_tokenizer  # the translations are the decoder's ids
                generated = greedy_decode(model, [src], [prepared.prefix], out_tok.eos_id)[0]
                outputs[f"{name}/{pos}"] = out_tok.decode(generated)
                memory, _ = model.encode(torch.tensor([src]))
                memories[f"{name}/{pos}"] = memory[0]
    inverse = torch.tensor(order)
    cosine = {}
    for pos in ("with", "without"):
        # row r of the shuffled memory belongs to original position order[r]
        moved = torch.empty_like(memories[f"shuffled/{pos}"])
        moved[inverse] = memories[f"shuffled/{pos}"]
        cosine[pos] = _cosine_rows(memories[f"original/{pos}"], moved)
    return OrderRun(tokens, tok.tokens(shuffled), order, tok.decode(shuffled[:-1]), outputs, cosine)


# --------------------------------------------------------------------------- input past max_len


@dataclass
class Truncation:
    text: str  # the long input
    max_len: int
    all_tokens: list[str]  # every token of the input (no <eos>)
    kept: list[str]  # what the model reads (with its <eos>)
    dropped: list[str]
    notes: list  # the app's own messages (model.core.messages.Message)
    output: str


def long_input(bundle: Bundle, text: str, direction: str | None) -> str:
    """The sentence repeated until it is longer than the model reads (unchanged if it already is)."""
    separator = " " if any(c.isascii() and c.isalpha() for c in text) and getattr(
        bundle.task, "directions", None) else ""
    longer = text
    for _ in range(64):
        prepared = bundle.task.prepare(longer, bundle.cfg.max_len, direction)
        if prepared.truncated_from:
            break
        longer = longer + separator + text
    return longer


@entry
def truncation_run(bundle: Bundle, text: str, direction: str | None) -> Truncation:
    long = long_input(bundle, text, direction)
    result = analyze(bundle, long, direction, keep=attention_only)
    prepared = result.prepared
    all_ids = bundle.tokenizer.encode(prepared.text)
    kept = len(prepared.source_ids) - 1
    return Truncation(long, bundle.cfg.max_len, bundle.tokenizer.tokens(all_ids), list(result.source_tokens),
                      bundle.tokenizer.tokens(all_ids[kept:]), list(prepared.notes), result.output_text)


# --------------------------------------------------------------------------- 2. dimensions


@dataclass
class DimensionRun:
    d_model: int
    n_heads: int
    order: str
    error: str | None = None  # the real exception, as "Type: message"
    steps: list[dict] = field(default_factory=list)  # the shape trace of what ran
    sizes: dict[str, int] = field(default_factory=dict)
    input_shape: tuple[int, ...] = ()
    logits_gap: float | None = None  # seq-first: max |logits - correct logits| (transposed back)
    merge_error: str | None = None  # transpose then view, without .contiguous()
    merge_gap: float | None = None  # view without transpose: max |wrong - right| of the merged heads
    out_gap: float | None = None  # ... and after W_o
    merge_shape: tuple[int, ...] = ()


BATCH, LENGTH, VOCAB = 2, 4, 10


def _err(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def tiny_config(d_model: int, n_heads: int) -> ModelConfig:
    """The seeds' minimal case: a one-layer model, tiny vocabulary; raises ConfigError when invalid."""
    return ModelConfig(vocab_size=VOCAB, d_model=d_model, n_heads=n_heads, d_ff=2 * d_model, n_enc_layers=1,
                       n_dec_layers=1, dropout=0.0, max_len=8)


@entry(models=0)
def dimension_run(d_model: int, n_heads: int, order: str) -> DimensionRun:
    """Build the tiny random model and run batch 2 x length 4 through it in the chosen order."""
    run = DimensionRun(d_model, n_heads, order)
    try:
        cfg = tiny_config(d_model, n_heads)
    except ConfigError as e:
        run.error = _err(e)
        return run
    torch.manual_seed(0)
    model = Transformer(cfg).eval()
    gen = torch.Generator().manual_seed(0)
    src = torch.randint(1, VOCAB, (BATCH, LENGTH), generator=gen)  # [batch, pos]
    tgt = torch.randint(1, VOCAB, (BATCH, LENGTH), generator=gen)
    with torch.no_grad():
        correct, cache = model.run_with_cache(src, tgt)
        feed_src, feed_tgt = (src.T.contiguous(), tgt.T.contiguous()) if order == "seq_first" else (src, tgt)
        run.input_shape = tuple(feed_src.shape)
        try:
            with trace_shapes() as trace:
                logits = model(feed_src, feed_tgt)
        except Exception as e:  # noqa: BLE001 - every error is shown as it is
            run.error = _err(e)
            return run
        run.steps, run.sizes = trace.to_dicts(), dict(trace.sizes)
        if order == "seq_first":
            run.logits_gap = float((logits.transpose(0, 1) - correct).abs().max())
        if order == "merge_wrong":
            attn = model.encoder.blocks[0].attn
            pattern = torch.as_tensor(cache[hook_name("encoder", 0, "pattern")])  # [batch, head, q, k]
            v = torch.as_tensor(cache[hook_name("encoder", 0, "v")])  # [batch, key, head, d_head]
            zt = pattern @ v.transpose(1, 2)  # [batch, head, query, d_head]
            B, H, L, dh = zt.shape
            right = zt.transpose(1, 2).contiguous().view(B, L, H * dh)  # [batch, query, d_model]
            try:
                zt.transpose(1, 2).view(B, L, H * dh)
            except RuntimeError as e:
                run.merge_error = _err(e)
            wrong = zt.reshape(B, L, H * dh)  # no transpose: heads and positions mixed
            run.merge_shape = tuple(wrong.shape)
            run.merge_gap = float((wrong - right).abs().max())
            run.out_gap = float((attn.W_o(wrong) - attn.W_o(right)).abs().max())
    return run


def intact_check(bundle: Bundle) -> torch.Tensor:
    """Logits of a fixed input (for tests: the model must be bit-identical after the page ran)."""
    model = bundle.model
    src = torch.tensor([[min(3, model.cfg.vocab_size - 1)] * 4])
    with model.lock, torch.no_grad():
        model.eval()
        return model(src, src).clone()


# --------------------------------------------------------------------------- 0. models trained with the bug

#: The word both models read when the sidebar's model is not a letter model.
TRAINED_WORD = "attention"
#: The cross-attention head shown (clamped to what the model has).
TRAINED_LAYER, TRAINED_HEAD = 1, 0


def test_exact_match(metrics: object) -> float | None:
    """The stored test exact match (the first evaluated row that has one, read as
    ``app_pages.glue.model.evaluation_rows`` reads metrics.json); None if not stored."""
    results = metrics.get("results") if isinstance(metrics, Mapping) else None
    if not isinstance(results, Mapping):
        return None
    for res in results.values():
        value = res.get("exact_match") if isinstance(res, Mapping) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


@entry(models=2)
def trained_word(sidebar: Bundle, reference: Bundle, text: str) -> str:
    """The sidebar's text when the sidebar's model is a letter model and the ``reference`` model knows
    every letter of it (and it fits its max_len), else :data:`TRAINED_WORD`."""
    tok = reference.tokenizer
    word = text.strip()
    if not isinstance(sidebar.tokenizer, CharTokenizer) or not isinstance(tok, CharTokenizer) or not word:
        return TRAINED_WORD
    if tok.unknown_characters(word) or len(word) >= reference.cfg.max_len:
        return TRAINED_WORD
    return word


def trained_head(bundle: Bundle, layer: int = TRAINED_LAYER, head: int = TRAINED_HEAD) -> tuple[int, int]:
    cfg = bundle.cfg
    return min(layer, cfg.n_dec_layers - 1), min(head, cfg.n_heads - 1)


@dataclass
class TrainedRun:
    """One trained model as the section shows it."""

    name: str
    fault_line: str  # the one line of code the bug changes ("" for the correct model)
    exact_match: float | None  # test exact match from metrics.json
    series: dict[str, list]  # step_series(history): per optimiser step loss and gradient norm
    analysis: Analysis  # the word through the model (attention patterns only)
    layer: int
    head: int


@entry
def trained_run(bundle: Bundle, word: str) -> TrainedRun:
    layer, head = trained_head(bundle)
    fault_line = str(bundle.info.get("fault_line", "") or "")
    return TrainedRun(bundle.name, fault_line, test_exact_match(bundle.metrics), step_series(bundle.history),
                      analyze(bundle, word, keep=attention_only), layer, head)
