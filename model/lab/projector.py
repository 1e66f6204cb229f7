"""The representation projector: one word's hidden state at every layer, over many sentences, in 2-D.

Each sentence is read by the model's self-attention stack (an encoder-only model's encoder, the
translation model's encoder, a decoder-only model's decoder); the word's vector at a row is its state in
the residual stream there: row 0 = ``{stack}.embed.hook_resid_in`` (the embeddings the first block
receives), row r = ``{stack}.blocks.{r-1}.hook_resid_post`` (after block r). A word the tokenizer cuts
into several tokens (on SmolLM2 苹果 is four byte tokens) is the **mean** of those tokens' states. The
word is found in the model's own tokens (each token's characters in the decoded ids); where it occurs
more than once the first occurrence is used. A sentence whose tokens do not hold the word is skipped,
with the reason.

Sentences run as right-padded batches: padding is masked out of every key and a causal row never reaches
the padding after it, so each sentence's states are those of the sentence run alone (float32 rounding).
A decoder-only model reads each sentence only up to the word's last token: a causal state does not depend
on what comes later, and the rest would cost time for nothing.

Per row, :func:`project` fits a PCA on the word vectors (centred, two components) and measures how
far the senses lie apart: the mean **cosine distance** (1 - cos) between sentences of different senses
over the mean between sentences of the same sense. Cosine is scale-free, and the residual stream's norm
grows by orders of magnitude through a decoder's layers, so Euclidean ratios of two rows would not compare.

    states = word_states(bundle, "bank", sentences)       # torch: the forward passes
    view = project(states, labels)                       # numpy: PCA and the ratio per row
    view.coords[r]        # [sentence, 2] at row r;  view.ratio[r]  # between / within
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..data.batches import pad_batch
from ..data.tasks import InputError
from ..data.zh_script import is_cjk_ideograph
from ..store.bundle import Bundle
from . import entry
from .families import token_spans

__all__ = ["BATCH_TOKENS", "MAX_SENTENCES", "PRESETS", "ZERO_DISTANCE", "Preset", "Projection", "Skipped",
           "WordStates",
           "cosine_distances", "find_word", "pca_2d", "project", "row_hooks", "sense_ratio", "word_states"]

#: Sentences read at most (the page says so): 50 on SmolLM2 take ~2 s on one thread.
MAX_SENTENCES = 64
#: Mean cosine distances at or below this are rounding (the same float32 vectors): nothing is divided by it.
ZERO_DISTANCE = 1e-9
#: Padded tokens per batch (rows x longest; sentences run sorted by length, so little is padding). Measured on
#: SmolLM2, one thread, 50 sentences read up to "bank" (~330 tokens): CPU 6.9 s one by one, 2.4 s in
#: batches of 32 tokens, 1.7 s at 96-160, 2.3-2.5 s in one batch of them all (its activations outgrow the
#: cache).
BATCH_TOKENS = 128


@dataclass(frozen=True)
class Preset:
    word: str
    senses: tuple[str, str]  # label keys (strings ``projector.sense.<key>``), in the order of ``sentences``
    sentences: tuple[tuple[str, str], ...]  # (sense key, sentence)


def _preset(word: str, first: str, second: str, a: Sequence[str], b: Sequence[str]) -> Preset:
    return Preset(word, (first, second), tuple((first, s) for s in a) + tuple((second, s) for s in b))


#: The seeds' flagship case (苹果 the company and the fruit) and its English counterpart ("bank" of money
#: and of a river): 12 sentences of each sense, the word once in each, never first, and at about the same
#: places in both senses (mean token position within 1.1 of each other on every model), so that where the
#: word stands does not separate the senses by itself: MiniLM and the translation model add a position to
#: each embedding, and a first list with every river bank at the end of its sentence gave MiniLM a ratio of
#: 1.68 at the embeddings (position, not meaning; 1.03 now). A decoder-only model has read nothing before
#: a first word (the same vector in every sentence, and SmolLM2, read without <bos>, holds its attention
#: sink there), so "苹果公司发布新品" is read as "今天苹果公司发布新品。".
PRESETS: dict[str, Preset] = {
    "apple": _preset("苹果", "company", "fruit", (
        "今天苹果公司发布新品。", "昨天苹果发布了新款手机。", "他在苹果公司做工程师。",
        "我买了一台苹果电脑。", "这家供应商给苹果生产芯片。", "很多人排队买苹果的新手机。",
        "投资者都在关注苹果的财报。", "我哥哥在苹果公司上班。", "上个月苹果在上海开了一家新店。",
        "三星和苹果在法庭上打官司。", "去年苹果的市值超过了两万亿美元。", "她想去苹果公司实习。",
    ), (
        "我吃了一个苹果", "这个苹果很甜。", "妈妈买了一袋苹果。", "树上的苹果已经熟了。",
        "她把苹果切成了小块。", "每天吃一个苹果对身体好。", "这些红苹果是从山东运来的。",
        "他削了一个苹果给奶奶。", "这些苹果放久了会变软。", "我们秋天去果园摘苹果。",
        "桌子上有三个青苹果。", "她用苹果做了一个蛋糕。",
    )),
    "bank": _preset("bank", "money", "river", (
        "The bank raised interest rates.", "The bank approved our loan.", "My bank sent me a new card.",
        "The bank charged me a fee for the transfer.", "She opened an account at the bank.",
        "I need to deposit this check at the bank.", "He works at a bank in the city.",
        "You can withdraw cash at any bank.", "The robbers broke into the bank at night.",
        "The central bank cut rates again.", "Our bank offers loans to small firms.",
        "Interest rates at the bank went up.",
    ), (
        "The bank was covered in wet mud.", "The bank of the river was steep.",
        "The bank was slippery after the rain.", "The bank of the lake was full of reeds.",
        "We sat on the river bank.", "Ducks rested on the grassy bank.", "He climbed up the steep bank.",
        "The boat drifted toward the bank.", "Fish were jumping near the muddy bank.",
        "The river overflowed its bank after the storm.", "They had a picnic on the bank of the lake.",
        "The fisherman stood on the bank all morning.",
    )),
}


@dataclass(frozen=True)
class Skipped:
    """A sentence left out: ``index`` in the input, ``reason`` one of "absent" (the word is not in the
    sentence), "lost" (it is, but not in the model's tokens: e.g. [UNK]), "cut" (past the tokens the
    model reads), "unreadable" (the model refuses the text)."""

    index: int
    reason: str


@dataclass(frozen=True)
class WordStates:
    """The word's vector at every row in each sentence that holds it (numpy only)."""

    word: str
    stack: str  # "encoder" or "decoder": the stack read
    n_inputs: int  # sentences given
    kept: list[int]  # input index of each sentence read
    texts: list[str]  # each kept sentence as the model reads it
    pieces: list[list[str]]  # the tokens averaged in each kept sentence
    positions: list[list[int]]  # their positions
    repeated: list[int]  # input indices whose sentence holds the word more than once (the first is used)
    # input indices whose sentence begins with the word: a causal model has read nothing before it there
    # (the same vector in each such sentence), and without <bos> it is the first position, where the
    # model's attention sink sits (a vector unlike every other)
    at_start: list[int]
    skipped: list[Skipped]
    states: np.ndarray  # [row, kept sentence, d_model] float32; row 0 = embeddings, row r = after block r
    batches: int  # forward passes run
    seconds: float

    @property
    def n_rows(self) -> int:
        return int(self.states.shape[0])


@dataclass(frozen=True)
class Projection:
    """What the page draws from :class:`WordStates` and one label per kept sentence."""

    labels: list[str]  # per kept sentence ("" = unlabelled: drawn, not in the ratio)
    senses: list[str]  # distinct labels in first-seen order ("" left out)
    coords: np.ndarray  # [row, sentence, 2] float32, PCA coordinates per row
    explained: np.ndarray  # [row, 2] share of the row's variance each component holds
    between: np.ndarray  # [row] mean cosine distance between sentences of different senses (NaN: none)
    within: np.ndarray  # [row] mean cosine distance between sentences of one sense (NaN: none)
    ratio: np.ndarray  # [row] between / within (NaN where either is missing)

    def peak(self) -> int | None:
        """The row where the senses lie farthest apart (None: no ratio)."""
        finite = np.isfinite(self.ratio)
        return int(np.argmax(np.where(finite, self.ratio, -np.inf))) if finite.any() else None


# --------------------------------------------------------------------------- finding the word


def word_pattern(word: str) -> re.Pattern:
    """The word in a text, case-insensitive. A word of letters must not be part of a longer one
    ("bank" is not in "banking"); Chinese has no spaces, so a Chinese word may sit anywhere. Between
    characters a tokenizer's decoding may add spaces (WordPiece writes 苹果 back as "苹 果")."""
    word = unicodedata.normalize("NFC", word.strip())
    parts = []
    for i, ch in enumerate(word):
        if ch.isspace():
            if parts and parts[-1] != r"\s+":
                parts.append(r"\s+")
            continue
        before = word[i - 1] if i else " "
        if not before.isspace() and (is_cjk_ideograph(ch) or is_cjk_ideograph(before) or not ch.isalnum()
                                     or not before.isalnum()):
            parts.append(r"\s*")
        parts.append(re.escape(ch))
    body = "".join(parts)
    if word[:1].isalnum() and not is_cjk_ideograph(word[0]):
        body = r"(?<!\w)" + body
    if word[-1:].isalnum() and not is_cjk_ideograph(word[-1]):
        body += r"(?!\w)"
    return re.compile(body, re.IGNORECASE)


def find_word(tok, ids: Sequence[int], word: str, start: int = 0) -> tuple[list[int], int, bool]:
    """(positions of the tokens that hold the word's first occurrence, how many occurrences the tokens
    hold, whether that occurrence begins the text). A token that holds part of the word counts (a byte
    token of 苹, a piece "##bank"). Tokens before ``start`` (a start token and a fixed prefix the model
    reads first, e5's "query: ") are not the user's text and are not searched."""
    decoded, spans = token_spans(tok, list(ids)[start:])
    found = list(word_pattern(word).finditer(decoded))
    if not found:
        return [], 0, False
    a, b = found[0].span()
    at_start = not decoded[:a].strip()
    return [start + i for i, (s, e) in enumerate(spans) if e > s and s < b and e > a], len(found), at_start


def row_hooks(stack: str, n_layers: int) -> list[str]:
    """Hook names of the rows, in order: the embeddings, then after each block."""
    return [f"{stack}.embed.hook_resid_in"] + [f"{stack}.blocks.{i}.hook_resid_post" for i in range(n_layers)]


def read_stack(bundle: Bundle) -> str:
    """The self-attention stack whose states are read: a decoder-only model's decoder, else the encoder
    (the translation model's encoder reads the sentence; its decoder reads the translation)."""
    return "decoder" if bundle.cfg.decoder_only else "encoder"


# --------------------------------------------------------------------------- the forward passes


def _batches(lengths: list[int], budget: int | None = None) -> list[list[int]]:
    """Sentence indices sorted by length, cut into batches of at most ``budget`` padded tokens
    (:data:`BATCH_TOKENS` when None)."""
    budget = BATCH_TOKENS if budget is None else budget
    out: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lambda k: lengths[k]):
        if out and (len(out[-1]) + 1) * lengths[i] <= budget:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def _run_batch(bundle: Bundle, seqs: list[list[int]], positions: list[list[int]], stack: str) -> torch.Tensor:
    """[row, batch, d_model]: the mean state of each sequence's ``positions`` at every row."""
    model, cfg = bundle.model, bundle.cfg
    ids = pad_batch(seqs, cfg.pad_id)  # [batch, pos], right-padded
    weights = torch.zeros(ids.shape, dtype=torch.float32)  # [batch, pos]: 1/n on the word's tokens
    for b, pos in enumerate(positions):
        weights[b, pos] = 1.0 / len(pos)
    names = row_hooks(stack, cfg.n_dec_layers if stack == "decoder" else cfg.n_enc_layers)
    rows: dict[str, torch.Tensor] = {}

    def keep(name: str):
        def fn(x: torch.Tensor, _point) -> None:
            # only the word's mean is kept: [batch, d_model], not every position's state
            rows[name] = torch.einsum("bp,bpd->bd", weights, x.float())
        return fn

    with model.lock, torch.no_grad(), model.hooks([(n, keep(n)) for n in names]):
        if stack == "decoder":
            # the decoder stack alone: no row reads the output embedding's logits
            model.decoder(ids, None, model.attention_padding(ids), None)
        else:
            model.encode(ids)
    return torch.stack([rows[n] for n in names])


@entry
def word_states(bundle: Bundle, word: str, sentences: tuple[str, ...]) -> WordStates:
    """The word's state at every row in each of ``sentences`` (at most :data:`MAX_SENTENCES`; more is a
    ValueError, as is an empty word). Sentences that do not hold it are listed in ``skipped``."""
    word = word.strip()
    if not word:
        raise ValueError("no word to look for")
    if len(sentences) > MAX_SENTENCES:
        raise ValueError(f"{len(sentences)} sentences; at most {MAX_SENTENCES} are read")
    start = time.perf_counter()
    cfg, tok = bundle.cfg, bundle.tokenizer
    stack = read_stack(bundle)
    pattern = word_pattern(word)
    kept, texts, seqs, positions, pieces, repeated, at_start, skipped = [], [], [], [], [], [], [], []
    for i, sentence in enumerate(sentences):
        try:
            prepared = bundle.task.prepare(sentence, cfg.max_len)
        except InputError:
            skipped.append(Skipped(i, "unreadable"))
            continue
        ids = list(prepared.prefix if cfg.decoder_only else prepared.source_ids)
        # e5 reads the user's text after <s> and its prefix ("query: "): the word is looked for after them
        skip = prepared.source_prefix_start + prepared.source_prefix if prepared.source_prefix else 0
        pos, count, first = find_word(tok, ids, word, skip)
        if not pos:
            users_text = prepared.text.removeprefix(getattr(bundle.task, "prefix", ""))
            in_text = pattern.search(users_text) is not None
            reason = "absent" if not in_text else "cut" if prepared.truncated_from else "lost"
            skipped.append(Skipped(i, reason))
            continue
        if count > 1:
            repeated.append(i)
        if first:
            at_start.append(i)
        if stack == "decoder":
            # A causal state never depends on later tokens: the tokens after the word need not run.
            ids = ids[: max(pos) + 1]
        kept.append(i)
        texts.append(prepared.text)
        seqs.append(ids)
        positions.append(pos)
        pieces.append(tok.tokens([ids[p] for p in pos]))
    n_layers = cfg.n_dec_layers if stack == "decoder" else cfg.n_enc_layers
    states = np.zeros((n_layers + 1, len(kept), cfg.d_model), np.float32)
    batches = _batches([len(s) for s in seqs])
    for batch in batches:
        out = _run_batch(bundle, [seqs[k] for k in batch], [positions[k] for k in batch], stack)
        states[:, batch] = out.numpy()
    return WordStates(word=word, stack=stack, n_inputs=len(sentences), kept=kept, texts=texts, pieces=pieces,
                      positions=positions, repeated=repeated, at_start=at_start, skipped=skipped,
                      states=states, batches=len(batches), seconds=time.perf_counter() - start)


# --------------------------------------------------------------------------- the projection (numpy)


def pca_2d(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(coordinates [n, 2], explained-variance shares [2]) of the rows of ``x`` [n, d] on their first
    two principal components (centred). Computed from the n x n Gram matrix of the centred rows (its
    eigenvectors are the left singular vectors): with a few dozen sentences and hundreds of dimensions
    that is ~1 ms, where LAPACK's SVD of the wide matrix took 20-60 ms a row on a busy two-core machine.
    Each component's sign is fixed so that its loading of largest magnitude is positive (the same points
    give the same picture on every call); fewer than two components (one point, or all alike) leave
    zeros."""
    x = np.asarray(x, np.float64)
    centred = x - x.mean(0, keepdims=True)
    values, vectors = np.linalg.eigh(centred @ centred.T)  # ascending
    total = float(np.clip(values, 0.0, None).sum())
    coords = np.zeros((x.shape[0], 2))
    explained = np.zeros(2)
    for c in range(min(2, x.shape[0])):
        value = float(values[-1 - c])
        if total <= 0 or value <= total * 1e-12:  # rounding, not a direction of the data
            break
        scale = np.sqrt(value)
        loading = centred.T @ vectors[:, -1 - c] / scale  # unit vector in the d dimensions
        sign = 1.0 if loading[np.argmax(np.abs(loading))] >= 0 else -1.0
        coords[:, c] = sign * vectors[:, -1 - c] * scale
        explained[c] = value / total
    return coords, explained


def cosine_distances(x: np.ndarray) -> np.ndarray:
    """[n, n] 1 - cos between the rows of ``x`` (a zero row is at distance 1 from every other)."""
    x = np.asarray(x, np.float64)
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    unit = np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)
    d = np.clip(1.0 - unit @ unit.T, 0.0, 2.0)
    np.fill_diagonal(d, 0.0)
    return d


def sense_ratio(x: np.ndarray, labels: Sequence[str]) -> tuple[float, float, float]:
    """(between, within, between / within): mean cosine distance over the pairs of labelled points with
    different labels, over the pairs with one label; unlabelled ("") points take no part. NaN where a
    kind of pair is missing or the within distance is 0 (at most :data:`ZERO_DISTANCE`: rounding)."""
    lab = np.asarray(list(labels), dtype=object)
    use = np.flatnonzero(lab != "")
    d = cosine_distances(np.asarray(x)[use])
    same = lab[use][:, None] == lab[use][None, :]
    upper = np.triu(np.ones(d.shape, bool), 1)
    pairs_between, pairs_within = upper & ~same, upper & same
    between = float(d[pairs_between].mean()) if pairs_between.any() else float("nan")
    within = float(d[pairs_within].mean()) if pairs_within.any() else float("nan")
    usable = np.isfinite(between) and np.isfinite(within) and within > ZERO_DISTANCE
    ratio = between / within if usable else float("nan")
    return between, within, ratio


def project(states: WordStates, labels: Sequence[str]) -> Projection:
    """PCA and the sense ratio at every row; ``labels`` has one label per input sentence (the skipped
    ones' are dropped)."""
    if len(labels) != states.n_inputs:
        raise ValueError(f"{len(labels)} labels for {states.n_inputs} sentences")
    kept_labels = [str(labels[i]).strip() for i in states.kept]
    n_rows, n = states.states.shape[:2]
    coords = np.zeros((n_rows, n, 2), np.float32)
    explained = np.zeros((n_rows, 2), np.float32)
    between, within, ratio = (np.full(n_rows, np.nan, np.float32) for _ in range(3))
    for r in range(n_rows):
        if n:
            c, e = pca_2d(states.states[r])
            coords[r], explained[r] = c, e
            between[r], within[r], ratio[r] = sense_ratio(states.states[r], kept_labels)
    senses = list(dict.fromkeys(label for label in kept_labels if label))
    return Projection(labels=kept_labels, senses=senses, coords=coords, explained=explained, between=between,
                      within=within, ratio=ratio)
