"""Greedy decoding: batched equals one-by-one, and the hooked pass equals step-by-step decoding."""

import pytest
import torch

from model.decoding.decoders import greedy_decode, score_batch
from model.network.transformer import Transformer
from model.run.analysis import analyze
from model.store.registry import load_model
from model.training.train import collate
from tests.conftest import tiny_config


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


def reference_greedy(model, source, prefix, eos_id):
    """Greedy decoding the slow, obvious way: the whole model on the whole prefix at every step."""
    ids = list(prefix)
    while len(ids) <= model.cfg.max_len:
        with torch.no_grad():
            logits = model(torch.tensor([source]), torch.tensor([ids]))
        tok = int(logits[0, -1].argmax())
        if tok == eos_id or len(ids) == model.cfg.max_len:
            break
        ids.append(tok)
    return ids[len(prefix):]


@pytest.mark.parametrize(
    "variant",
    [dict(), dict(pos_encoding="rope", n_kv_heads=2), dict(pos_encoding="learned", norm_first=False)],
)
def test_cached_incremental_decoding_equals_full_recompute(variant):
    """Random models never emit eos early, so every row runs to max_len: the cache is exercised fully."""
    torch.manual_seed(3)
    model = Transformer(tiny_config(**variant)).eval()
    g = torch.Generator().manual_seed(0)
    sources = [torch.randint(4, 40, (n,), generator=g).tolist() + [2] for n in (3, 7, 11, 5)]
    got = greedy_decode(model, sources, [[1]] * 4, eos_id=2)
    want = [reference_greedy(model, s, [1], 2) for s in sources]
    assert got == want
    assert max(len(w) for w in want) == model.cfg.max_len - 1


def test_cached_decoding_matches_on_the_shipped_models():
    for name, text in (
        ("reverse", "attention"),
        ("default", "我吃了一个苹果"),
        ("default", "I ate an apple."),
    ):
        bundle = load_model(name)
        p = bundle.task.prepare(text, bundle.cfg.max_len)
        eos = bundle.tokenizer.eos_id
        assert greedy_decode(bundle.model, [p.source_ids], [p.prefix], eos)[0] == reference_greedy(
            bundle.model, p.source_ids, p.prefix, eos
        )


def test_prefixes_of_different_lengths_are_refused():
    bundle = load_model("reverse")
    with pytest.raises(ValueError, match="one length"):
        greedy_decode(bundle.model, [[5, 2], [6, 2]], [[1], [1, 5]], 2)


def test_each_step_knows_the_probability_of_its_token():
    import torch

    bundle = load_model("reverse")
    from model.run.analysis import analyze

    forced = analyze(bundle, "attention", target="zzzz")  # teacher-forced: tokens the model would not pick
    free = analyze(bundle, "attention")
    for result in (forced, free):
        src = torch.tensor([result.prepared.source_ids])
        ids = [bundle.tokenizer.bos_id] + bundle.tokenizer.encode(result.output_text)
        with torch.no_grad():
            probs = torch.softmax(bundle.model(src, torch.tensor([ids]))[0], dim=-1)
        for step in result.steps:
            assert abs(step.prob - float(probs[step.position, step.token_id])) < 1e-5
            if step.token_id in step.top_ids:
                assert abs(step.prob - step.top_probs[step.top_ids.index(step.token_id)]) < 1e-6
    assert any(s.token_id not in s.top_ids for s in forced.steps)  # the case top-k alone could not answer
    assert all(s.prob == max(s.top_probs) for s in free.steps)  # greedy picks the most likely token
