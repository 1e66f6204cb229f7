"""Is a new model really better? Both models translate the same split, then sacrebleu's paired bootstrap
resampling (1,000 resamples of the sentences, fixed seed) gives each metric's p-value for the difference."""

from __future__ import annotations

from ..decoding.strategy import GREEDY, Strategy
from ..network.transformer import Transformer
from .evaluate import direction_groups, target_language, translate_batch


def paired_bootstrap(
    baseline: list[str], candidate: list[str], references: list[str], target_lang: str | None,
    n_samples: int = 1000,
) -> dict[str, dict[str, float]]:
    """{"chrf"|"bleu": {"baseline", "candidate", "delta", "p_value", "ci95"}} for one direction.

    p_value is sacrebleu's (two-sided, as Moses' script) for "candidate and baseline score the same", 1.0 when
    their scores are equal; ci95 is the half-width of the
    candidate's 95% bootstrap interval.
    """
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    if not (len(baseline) == len(candidate) == len(references)) or not references:
        raise ValueError(
            f"paired test needs equally many hypotheses and references (got {len(baseline)}, "
            f"{len(candidate)}, {len(references)})"
        )
    metrics = {"chrf": CHRF(), "bleu": BLEU(tokenize="zh" if target_lang == "zh" else "13a")}
    test = PairedTest([("baseline", baseline), ("candidate", candidate)], metrics, [references],
                      test_type="bs", n_samples=n_samples)
    _, results = test()
    # sacrebleu keys its results by the metric's own name ("chrF2", "BLEU"), after "System", in our order.
    scored = [v for k, v in results.items() if k != "System"]
    out = {}
    for name, (base, cand) in zip(metrics, scored, strict=True):
        # With equal scores there is no difference to test (sacrebleu would report its smallest p).
        p_value = 1.0 if cand.score == base.score else float(cand.p_value)
        out[name] = {"baseline": round(float(base.score), 2), "candidate": round(float(cand.score), 2),
                     "delta": round(float(cand.score - base.score), 2), "p_value": p_value,
                     "ci95": round(float(cand.ci), 2)}
    return out


def compare_models(
    baseline: Transformer, candidate: Transformer, task, split: str = "test", n: int | None = None,
    strategy: Strategy = GREEDY, n_samples: int = 1000,
) -> dict[str, dict[str, dict[str, float]]]:
    """{direction: paired_bootstrap(...)} with both models decoding ``split`` under ``strategy``.

    Both models must share the task's tokenizer (a run trained on from the other's weights does)."""
    refs = task.references(split, n)
    sources, directions = [s for s, _, _ in refs], [d for _, _, d in refs]
    baseline.eval()
    candidate.eval()
    hyps_a = translate_batch(baseline, task, sources, directions, strategy=strategy)
    hyps_b = translate_batch(candidate, task, sources, directions, strategy=strategy)
    results = {}
    for direction, idx in direction_groups(refs).items():
        pairs = ([hyps_a[i] for i in idx], [hyps_b[i] for i in idx], [refs[i][1] for i in idx])
        results[direction] = paired_bootstrap(*pairs, target_language(direction), n_samples)
    return results
