"""Greedy decoding: batched equals one-by-one, and the hooked pass equals step-by-step decoding."""

import torch

from model.analysis import analyze
from model.decoding import greedy_decode, score_batch
from model.registry import load_model
from model.train import collate


def test_batched_greedy_equals_one_sentence_at_a_time():
    bundle = load_model("reverse")
    words = ["attention", "is", "all", "you", "need", "transformer"]
    prepared = [bundle.task.prepare(w, bundle.cfg.max_len) for w in words]
    eos = bundle.tokenizer.eos_id
    batched = greedy_decode(bundle.model, [p.source_ids for p in prepared], [p.prefix for p in prepared], eos)
    single = [greedy_decode(bundle.model, [p.source_ids], [p.prefix], eos)[0] for p in prepared]
    assert batched == single
    assert [bundle.tokenizer.decode(ids) for ids in batched] == [w[::-1] for w in words]


def test_hooked_pass_rows_equal_each_decoding_step():
    """Row t of the teacher-forced pass is what step t computed when decoding one token at a time."""
    bundle = load_model("sort")
    model = bundle.model
    result = analyze(bundle, "banana")
    src = torch.tensor([result.prepared.source_ids])
    ids = result.prepared.prefix[:]
    cross = result.attention("cross")  # [layer, head, tgt_pos, src_pos]
    self_attn = result.attention("decoder")
    for t, step in enumerate(result.steps):
        _, cache = model.run_with_cache(src, torch.tensor([ids]))
        probs = torch.softmax(cache["hook_logits"][0, -1], -1)
        assert int(probs.argmax()) == step.token_id
        assert torch.allclose(probs.topk(len(step.top_probs)).values, torch.tensor(step.top_probs), atol=1e-5)
        step_cross = cache.pattern("cross")[:, :, -1].numpy()  # [layer, head, src_pos]
        assert abs(step_cross - cross[:, :, t]).max() < 1e-5
        step_self = cache.pattern("decoder")[:, :, -1].numpy()  # [layer, head, t+1]
        assert abs(step_self - self_attn[:, :, t, : t + 1]).max() < 1e-5
        ids.append(step.token_id)
    assert result.steps[-1].token == "<eos>"
    assert result.output_text == "aaabnn"


def test_scores_prefer_the_right_answer():
    bundle = load_model("reverse")
    task = bundle.task
    ex = task.examples("test", 4)
    wrong = [(s, t[:1] + t[1:-1][::-1] + t[-1:]) for s, t in ex]  # the copy instead of the reverse
    good = score_batch(bundle.model, *collate(ex, list(range(4)), 0))
    bad = score_batch(bundle.model, *collate(wrong, list(range(4)), 0))
    assert (good > bad).all()
    assert (good <= 0).all()
