"""Glue of the model-vs-model page: which models B may be, B's default, the ``pair`` link parameter,
why two models cannot be compared, and the table of every head's match (words from the string tables)."""

from __future__ import annotations

import pandas as pd

from app_support.i18n import t
from app_support.user_models import session_models
from model.store.registry import model_infos
from viz.versus import head_label

#: Groups of shipped models that are one model trained several ways: (the group's reference, the model B
#: defaults to when A is that reference). The shipped letter-reversal model defaults to the pitfalls'.
REFERENCES = {"pitfall": ("pitfall-correct", "pitfall-no-scaling"),
              "variant": ("variant-base", "variant-rope")}
REFERENCE_OF_TASK = {"reverse": "pitfall-correct"}


def choices(model_a: str) -> list[str]:
    """Every model B may be (hidden pitfall and variant models included), model A left out."""
    names = [i.name for i in model_infos()] + session_models()
    return [n for n in dict.fromkeys(names) if n != model_a]


def default_other(model_a: str, options: list[str]) -> str | None:
    """B's default: the reference of A's group (its second member when A is the reference), else the
    first model of the same task, else the first option."""
    infos = {i.name: i for i in model_infos()}
    info = infos.get(model_a)
    if info is None:
        return options[0] if options else None
    wanted = REFERENCE_OF_TASK.get(info.task)
    if info.group in REFERENCES:
        reference, second = REFERENCES[info.group]
        wanted = second if model_a == reference else reference
    if wanted in options:
        return wanted
    same_task = [n for n in options if n in infos and infos[n].task == info.task]
    return same_task[0] if same_task else (options[0] if options else None)


def parse_pair(value: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """``"1.2-0.3"`` (A's layer.head - B's layer.head) as ((1, 2), (0, 3)); None when malformed."""
    try:
        a, b = value.split("-")
        la, ha = (int(x) for x in a.split("."))
        lb, hb = (int(x) for x in b.split("."))
    except (ValueError, AttributeError):
        return None
    if min(la, ha, lb, hb) < 0 or max(la, ha, lb, hb) > 10_000:
        return None
    return (la, ha), (lb, hb)


def pair_param(a: tuple[int, int], b: tuple[int, int]) -> str:
    return f"{a[0]}.{a[1]}-{b[0]}.{b[1]}"


def refusal_text(match, model_a: str, model_b: str) -> str:
    """One sentence: why the two models' heads cannot be compared (``match``: a TokenizerMatch)."""
    if match.reason == "size":
        return t("versus.refuse.size", a=model_a, b=model_b, n_a=f"{match.size_a:,}", n_b=f"{match.size_b:,}")
    if match.reason == "token":
        return t("versus.refuse.token", a=model_a, b=model_b, id=match.token_id, tok_a=match.token_a,
                 tok_b=match.token_b)
    return t("versus.refuse.special", a=model_a, b=model_b)


def match_table(result) -> pd.DataFrame:
    """One row per head of A: its nearest head of B, the best within the same layer position, and the
    distance to B's head at the same place (when the two shapes agree)."""
    m = result.match
    n_layers, n_heads = m.nearest_distance.shape
    rows = []
    for layer in range(n_layers):
        for head in range(n_heads):
            row = {
                t("versus.col.head_a"): head_label(layer, head),
                t("versus.col.nearest"): head_label(*m.nearest[layer, head]),
                t("versus.col.nearest_distance"): float(m.nearest_distance[layer, head]),
                t("versus.col.same_layer"): head_label(m.same_layer[layer], m.same_layer_head[layer, head]),
                t("versus.col.same_layer_distance"): float(m.same_layer_distance[layer, head]),
            }
            if m.same_position is not None:
                row[t("versus.col.same_position")] = float(m.same_position[layer, head])
            rows.append(row)
    return pd.DataFrame(rows)
