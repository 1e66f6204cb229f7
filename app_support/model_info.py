"""Glue for the model page: shape-trace rows in the form viz expects, training history as a table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

#: What each shape symbol stands for.
SYMBOLS = {
    "B": "batch: sentences run together (1 here)",
    "L_src": "source positions (encoder tokens)",
    "L_tgt": "target positions (decoder tokens)",
    "d_model": "width of the residual stream",
    "h": "query heads per attention layer",
    "h_kv": "key/value heads (fewer than h = grouped-query attention)",
    "d_head": "width of one head = d_model / h",
    "d_ff": "hidden width of the feed-forward network",
    "V": "vocabulary size",
}

#: One line per ModelConfig field, for learners.
CONFIG_HELP = {
    "vocab_size": "tokens in the shared source/target vocabulary (special tokens included)",
    "d_model": "width of every token vector in the residual stream",
    "n_heads": "attention heads per attention layer",
    "n_kv_heads": "key/value heads (empty = one per query head)",
    "d_ff": "hidden width of the feed-forward network in each block",
    "n_enc_layers": "encoder blocks",
    "n_dec_layers": "decoder blocks",
    "dropout": "dropout rate used in training (off when you run it here)",
    "norm_first": "Pre-LN (normalise before each sublayer) if true; Post-LN as in the 2017 paper if false",
    "norm": "normalisation layer",
    "activation": "feed-forward non-linearity",
    "pos_encoding": "how token positions are encoded",
    "max_len": "longest sequence the model accepts, special tokens included",
    "tie_embeddings": "one matrix for source and target embeddings and the output projection",
    "pad_id": "token id of padding",
    "norm_eps": "epsilon of the normalisation layers",
}


def history_long(history: Sequence[Mapping[str, object]], columns: Sequence[str]) -> pd.DataFrame:
    """``step, series, value`` rows for the given history columns, skipping missing values."""
    if not history:
        return pd.DataFrame(columns=["step", "series", "value"])
    df = pd.DataFrame(list(history))
    if "step" not in df:
        df["step"] = np.arange(len(df))
    cols = [c for c in columns if c in df]
    if not cols:
        return pd.DataFrame(columns=["step", "series", "value"])
    long = df[["step", *cols]].melt(id_vars="step", var_name="series", value_name="value")
    long = long.dropna(subset=["value"])
    long["value"] = pd.to_numeric(long["value"], errors="coerce")
    return long.dropna(subset=["value"]).reset_index(drop=True)


def metric_columns(history: Sequence[Mapping[str, object]]) -> tuple[list[str], list[str]]:
    """(loss-like columns, score columns such as ``zh->en_chrf``) present in a history."""
    keys: list[str] = []
    for rec in history:
        for k in rec:
            if k not in keys:
                keys.append(k)
    losses = [k for k in keys if "loss" in k]
    scores = [k for k in keys if k.endswith(("_chrf", "_bleu", "exact_match", "_accuracy"))]
    return losses, scores


def evaluation_rows(metrics: object) -> list[tuple[str, list[tuple[str, str]], int | None]]:
    """What the model page shows of stored evaluation results.

    One row per evaluated direction (or task): ``(name, [(figure name, formatted value)], n)``
    where ``n`` is the number of test sentences (None if not stored). Anything malformed in a
    hand-edited metrics.json is skipped rather than shown wrongly.
    """
    results = metrics.get("results") if isinstance(metrics, Mapping) else None
    if not isinstance(results, Mapping):
        return []
    rows = []
    for name, res in results.items():
        if not isinstance(res, Mapping):
            continue
        shown = [(k, f"{v:.3g}" if isinstance(v, float) else str(v))
                 for k, v in res.items() if isinstance(v, int | float) and not isinstance(v, bool) and k != "n"]
        n = res.get("n")
        rows.append((str(name), shown, n if isinstance(n, int) and not isinstance(n, bool) else None))
    return rows
