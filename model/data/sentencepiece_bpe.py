"""A SentencePiece BPE tokenizer rebuilt from its pieces and scores, as a GGUF file of Gemma, Phi-3 or
Llama 2 carries it (``tokenizer.ggml.model`` = "llama": tokens, scores and token types; no merges).

SentencePiece's BPE joins, again and again, the adjacent pair of pieces whose joined piece scores
highest. That is a BPE whose merge list ranks every way of cutting a piece into two known pieces by the
whole piece's score: the list is derived here, and Hugging Face ``tokenizers`` runs it. Characters the
vocabulary lacks fall back to their UTF-8 bytes (the ``<0xNN>`` pieces). Spaces are written "▁": Llama
and Phi-3 also put one before the text; Gemma does not (``add_space_prefix`` false), and ranks its merges
by the order of its pieces rather than by their scores. Each choice is the one ``transformers`` makes
when it converts such a file (tests/model/store/test_gguf_families.py compares the two on 20 texts).
"""

from __future__ import annotations

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers

#: llama.cpp's token types.
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
SPACE = "\u2581"


def derived_merges(tokens: list[str], ranks: list[float]) -> list[tuple[str, str]]:
    """Every (left, right) pair of known pieces that joins into a known piece, best first: by the joined
    piece's rank, then longer left and right pieces first, then by the pieces' ids."""
    ids = {t: i for i, t in reversed(list(enumerate(tokens)))}  # a repeated piece keeps its first id
    found = []
    for i, (piece, rank) in enumerate(zip(tokens, ranks, strict=True)):
        if ids.get(piece) != i:
            continue
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in ids and right in ids:
                found.append((-rank, -len(left), -len(right), i, ids[left], ids[right], left, right))
    found.sort(key=lambda m: m[:6])
    return [(m[6], m[7]) for m in found]


def sentencepiece_tokenizer(tokens: list[str], scores: list[float] | None, token_types: list[int],
                            add_space_prefix: bool = True, space_from_normalizer: bool = False,
                            rank_by_position: bool = False) -> Tokenizer:
    """The tokenizer the pieces describe. ``space_from_normalizer`` (Phi-3) puts the leading "▁" in the
    normalizer rather than the pre-tokenizer (it differs on a text that starts with spaces);
    ``rank_by_position`` (Gemma) ranks merges by the pieces' order instead of their scores."""
    if rank_by_position:
        # a piece of only spaces is stored as spaces: the text's spaces are looked up as "▁"
        tokens = [SPACE * len(t) if t and not t.strip(" ") else t for t in tokens]
        ranks = [-float(i) for i in range(len(tokens))]
    else:
        ranks = list(scores) if scores is not None else [0.0] * len(tokens)
    vocab: dict[str, int] = {}
    for i, t in enumerate(tokens):
        vocab.setdefault(t, i)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=derived_merges(tokens, ranks), fuse_unk=True,
                               byte_fallback=True, dropout=None,
                               unk_token=None if not rank_by_position else _unknown(tokens, token_types)))
    steps = [decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse()]
    if rank_by_position:  # Gemma: spaces become "▁" and nothing is put before the text
        tok.normalizer = normalizers.Replace(" ", SPACE)
        tok.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous")
    elif space_from_normalizer:  # Phi-3
        tok.normalizer = normalizers.Sequence([normalizers.Prepend(SPACE), normalizers.Replace(" ", SPACE)])
        steps.append(decoders.Strip(content=" ", left=1))
    else:
        scheme = "first" if add_space_prefix else "never"
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPACE, prepend_scheme=scheme, split=False)
        if add_space_prefix:
            steps.append(decoders.Strip(content=" ", left=1))
    tok.decoder = decoders.Sequence(steps)
    typed = list(zip(tokens, token_types, strict=True))
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t, k in typed if k == CONTROL])
    tok.add_tokens([AddedToken(t, normalized=False, special=False) for t, k in typed if k == USER_DEFINED])
    return tok


def _unknown(tokens: list[str], token_types: list[int]) -> str | None:
    return next((t for t, k in zip(tokens, token_types, strict=True) if k == UNKNOWN), None)
