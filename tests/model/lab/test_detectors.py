"""Head detector scores equal their definitions computed directly from every head's full pattern, the
copying score adds up to the model's own logit, and the shipped induction model's heads are found."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model.lab import detectors as D
from model.lab.induction import induction_report, scores_of
from model.network.kinds import hook_name
from model.store.registry import load_model


@pytest.fixture(scope="module")
def induction():
    return load_model("induction")


@pytest.fixture(scope="module")
def tiny_gpt():
    return load_model("tiny-gpt")


def full_patterns(bundle, text: str, kind: str) -> tuple[list[int], np.ndarray]:
    """(ids, [layer, head, query, key]) from the model's own pattern hooks, every head at once."""
    ids, args = D._inputs(bundle, text)
    n = bundle.model.attention_layer_counts()[kind]
    _, cache = bundle.model.run_with_cache(*args)
    return ids, np.stack([cache[hook_name(kind, i, "pattern")][0].numpy() for i in range(n)])


def by_definition(ids: list[int], a: np.ndarray) -> dict[str, np.ndarray]:
    """Every weight role of every head, by loops straight from the module's definitions."""
    n = len(ids)
    layers, heads = a.shape[:2]
    out = {r: np.full((layers, heads), np.nan) for r in ("previous", "first", "duplicate", "induction")}
    for layer in range(layers):
        for h in range(heads):
            p = a[layer, h]
            out["previous"][layer, h] = np.mean([p[i, i - 1] for i in range(1, n)])
            out["first"][layer, h] = np.mean([p[i, 0] for i in range(1, n)])
            dup = [sum(p[i, j] for j in range(i) if ids[j] == ids[i]) for i in range(n) if ids[i] in ids[:i]]
            if dup:
                out["duplicate"][layer, h] = np.mean(dup)
            ind = []
            for i in range(n - 1):
                earlier = [j for j in range(i) if ids[j] == ids[i]]
                if earlier and earlier[-1] + 1 < i and ids[earlier[-1] + 1] == ids[i + 1]:
                    ind.append(p[i, earlier[-1] + 1])
            if ind:
                out["induction"][layer, h] = np.mean(ind)
    return out


@pytest.mark.parametrize("name", ["induction", "tiny-gpt", "minilm"])
def test_probe_scores_equal_the_definitions_from_full_patterns(name):
    bundle = load_model(name)
    scores = D.probe_scores(bundle, seed=3, n=2, length=12)
    expected = {r: [] for r in ("previous", "first", "duplicate", "induction")}
    for text in scores.texts:
        ids, a = full_patterns(bundle, text, scores.kind)
        for role, v in by_definition(ids, a).items():
            expected[role].append(v)
    for role, values in expected.items():
        # both probes have the same structure, so the pooled mean is the mean of the two means
        np.testing.assert_allclose(scores.scores[role], np.mean(values, 0), atol=1e-5, err_msg=role)
    assert ("copying" in scores.scores) == (name != "minilm")
    assert scores.copying_note == ("no_unembed" if name == "minilm" else "")


def test_user_text_scores_equal_the_definitions(tiny_gpt):
    text = "the cat sat on the mat and the dog sat on the cat"
    scores = D.text_scores(tiny_gpt, text)
    ids, a = full_patterns(tiny_gpt, text, "decoder")
    expected = by_definition(ids, a)
    assert set(scores.scores) == set(D.ON_ANY_INPUT)
    for role in D.ON_ANY_INPUT:
        np.testing.assert_allclose(scores.scores[role], expected[role], atol=1e-5, err_msg=role)
    assert scores.counts["duplicate"] == sum(ids[i] in ids[:i] for i in range(len(ids)))


def test_no_repeated_token_leaves_duplicate_undefined(tiny_gpt):
    scores = D.text_scores(tiny_gpt, "one two")
    ids = D._inputs(tiny_gpt, "one two")[0]
    assert len(set(ids)) == len(ids)
    assert np.isnan(scores.scores["duplicate"]).all() and scores.counts["duplicate"] == 0


# SmolLM2 in the whole suite only (the quick subset reads the other models)
@pytest.mark.parametrize("name", ["induction", "tiny-gpt", "minilm", "default",
                                  pytest.param("smollm2", marks=pytest.mark.slow)])
def test_probes_read_back_as_a_sequence_written_twice(name):
    """The text a link hands the single-head page is read as exactly the scored tokens: a sequence of
    distinct tokens written twice (with what the task adds: <bos>, [CLS] ... [SEP], a language tag)."""
    bundle = load_model(name)
    for text in D.probe_texts(bundle, seed=1, n=3, length=10):
        ids = D._inputs(bundle, text)[0]
        body = [i for i in ids if not bundle.tokenizer.is_special(i)]
        k = len(body) // 2
        assert k == 10 and body[:k] == body[k:] and len(set(body[:k])) == k
    assert D.probe_texts(bundle, 1, 3, 10) == D.probe_texts(bundle, 1, 3, 10)  # seeded
    assert D.probe_texts(bundle, 1, 3, 10) != D.probe_texts(bundle, 2, 3, 10)


def test_agrees_with_the_induction_report_on_one_probe(induction):
    text = D.probe_texts(induction, seed=0, n=1)[0]
    scores = D._run(induction, [text], D.ROLES)
    ids, a = full_patterns(induction, text, "decoder")
    ind, prev = scores_of(a, (len(ids) - 1) // 2)
    np.testing.assert_allclose(scores.scores["induction"], ind, atol=1e-5)
    np.testing.assert_allclose(scores.scores["previous"], prev, atol=1e-5)


def test_finds_the_induction_models_heads(induction):
    scores = D.probe_scores(induction)
    report = induction_report(induction, 50)
    assert scores.best("induction")[0] == 1 and scores.best("previous")[0] == 0
    assert scores.best("induction") == report.best(report.induction)
    assert scores.best("previous") == report.best(report.previous)
    layer, head = scores.best("induction")
    assert scores.scores["induction"][layer, head] >= D.THRESHOLDS["induction"]
    # the induction head also copies: it raises the logit of the token it attends to, the most of any head
    assert scores.best("copying") == (layer, head) and scores.scores["copying"][layer, head] > 1.0


@pytest.mark.parametrize("name", ["induction", "tiny-gpt"])
@torch.no_grad()
def test_copying_scores_add_up_to_the_logit(name):
    """Summed over a layer's heads, the copying score is that layer's attention output read the same way;
    the same read of the whole final residual gives the model's own (mean-centred) logit."""
    bundle = load_model(name)
    text = D.probe_texts(bundle, seed=0, n=1, length=8)[0]
    ids, args = D._inputs(bundle, text)
    model, cfg = bundle.model, bundle.cfg
    logits, cache = model.run_with_cache(*args)
    pos = D.positions_of(ids)
    last = f"decoder.blocks.{cfg.n_dec_layers - 1}.hook_resid_post"
    z = [cache[hook_name("decoder", i, "z")][0] for i in range(cfg.n_dec_layers)]
    values = D.copying_scores(bundle, z, cache[last][0], pos.induction_q, pos.next_ids)

    def read(vectors: torch.Tensor) -> np.ndarray:  # [query, d_model] -> [query], the definition's map
        x = cache[last][0][pos.induction_q].double()
        v = vectors.double() - vectors.double().mean(-1, keepdim=True)
        norm = model.decoder.final_norm
        w_u = model.unembed.weight.double()
        direction = w_u[torch.as_tensor(pos.next_ids)] - w_u.mean(0)
        std = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + cfg.norm_eps)
        return ((v * norm.weight.double() / std) * direction).sum(-1).numpy()

    for i in range(cfg.n_dec_layers):
        out = cache[hook_name("decoder", i, "out")][0][pos.induction_q]
        bias = model.decoder.blocks[i].self_attn.W_o.bias
        np.testing.assert_allclose(values[i].sum(0), read(out - bias), atol=1e-4)
    centred = logits[0].double() - logits[0].double().mean(-1, keepdim=True)
    own = centred[pos.induction_q, pos.next_ids].numpy()
    w_u = model.unembed.weight.double()
    direction = w_u[torch.as_tensor(pos.next_ids)] - w_u.mean(0)
    bias_part = (model.decoder.final_norm.bias.double() * direction).sum(-1).numpy()
    np.testing.assert_allclose(read(cache[last][0][pos.induction_q]) + bias_part, own, atol=1e-4)


def test_positions_of_a_hand_made_sequence():
    pos = D.positions_of([9, 1, 2, 3, 1, 2, 3])
    assert pos.induction_q.tolist() == [4, 5] and pos.induction_k.tolist() == [2, 3]
    assert pos.next_ids.tolist() == [2, 3]
    assert pos.duplicate[4].tolist() == [False, True, False, False, False, False, False]


def test_top_lists_the_best_heads_first(induction):
    scores = D.probe_scores(induction, n=1)
    top = scores.top("induction", 3)
    assert [(la, h) for la, h, _ in top][0] == scores.best("induction")
    assert [v for *_, v in top] == sorted((v for *_, v in top), reverse=True)
