"""The representation projector (model/lab/projector.py): each word vector equals the word's hidden state
taken from a run of that sentence alone (the batches are padded), a word of several tokens is their mean,
the PCA equals a reference computed another way, and the ratio follows its definition pair by pair."""

import itertools

import numpy as np
import pytest
import torch

from model.lab import projector as PJ
from model.store.registry import load_model

BANK = ("The bank raised interest rates.", "We sat on the river bank after a long walk in the hills.",
        "My bank sent me a new card.", "Ducks rested on the grassy bank.")


@pytest.fixture(scope="module")
def bundles():
    return {}


def _bundle(bundles, name):
    if name not in bundles:
        bundles[name] = load_model(name)
    return bundles[name]


def _alone(bundle, sentence: str, positions: list[int]) -> np.ndarray:
    """[row, d_model] the mean state of ``positions`` at every row, from a hooked run of the sentence alone
    (no padding; hook names written out here, not taken from the module under test)."""
    model, cfg = bundle.model, bundle.cfg
    prepared = bundle.task.prepare(sentence, cfg.max_len)
    if cfg.decoder_only:
        stack, n, inputs = "decoder", cfg.n_dec_layers, [torch.tensor([prepared.prefix])]
    elif cfg.encoder_only:
        stack, n, inputs = "encoder", cfg.n_enc_layers, [torch.tensor([prepared.source_ids])]
    else:  # the translation model: run whole, its encoder's hooks read
        stack, n = "encoder", cfg.n_enc_layers
        inputs = [torch.tensor([prepared.source_ids]), torch.tensor([prepared.prefix])]
    names = [f"{stack}.embed.hook_resid_in"] + [f"{stack}.blocks.{i}.hook_resid_post" for i in range(n)]
    with torch.no_grad():
        _, cache = model.run_with_cache(*inputs, names_filter=set(names).__contains__)
    return np.stack([cache[name][0, positions].double().mean(0).numpy() for name in names])


# SmolLM2 in the whole suite only (the quick subset reads the other models)
@pytest.mark.parametrize("name", ["minilm", "default", pytest.param("smollm2", marks=pytest.mark.slow),
                                  "tiny-gpt"])
def test_each_vector_is_the_words_state_in_its_sentence_run_alone(bundles, name, monkeypatch):
    bundle = _bundle(bundles, name)
    monkeypatch.setattr(PJ, "BATCH_TOKENS", 10_000)
    states = PJ.word_states(bundle, "bank", BANK)
    assert states.kept == [0, 1, 2, 3] and not states.skipped
    assert states.batches == 1  # one padded batch: the sentences differ in length
    assert len({max(p) for p in states.positions}) > 1
    assert states.stack == ("decoder" if bundle.cfg.decoder_only else "encoder")
    n_layers = bundle.cfg.n_dec_layers if bundle.cfg.decoder_only else bundle.cfg.n_enc_layers
    assert states.states.shape == (n_layers + 1, 4, bundle.cfg.d_model)
    for k, sentence in enumerate(BANK):
        direct = _alone(bundle, sentence, states.positions[k])
        scale = np.abs(direct).max(axis=1, keepdims=True)  # SmolLM2's late rows reach hundreds
        assert np.all(np.abs(states.states[:, k] - direct) <= 1e-5 * np.maximum(scale, 1.0)), (name, k)
        assert [p.strip("▁ #Ġ").lower() for p in states.pieces[k]] == ["bank"]


def test_a_word_of_several_tokens_is_the_mean_of_their_states(bundles):
    bundle = _bundle(bundles, "smollm2")
    sentences = ("今天苹果公司发布新品。", "我吃了一个苹果")
    states = PJ.word_states(bundle, "苹果", sentences)
    for k, sentence in enumerate(sentences):
        ids = bundle.task.prepare(sentence, bundle.cfg.max_len).prefix
        assert len(states.positions[k]) == 4  # 苹 is three byte tokens, 果 one
        assert bundle.tokenizer.decode([ids[p] for p in states.positions[k]]) == "苹果"
        direct = _alone(bundle, sentence, states.positions[k])
        assert np.abs(states.states[:, k] - direct).max() <= 1e-5 * max(1.0, np.abs(direct).max())
    # the same four tokens in both, only their left context differs: the embeddings' mean is one vector
    np.testing.assert_array_equal(states.states[0, 0], states.states[0, 1])


def test_batches_follow_the_token_budget_and_give_the_same_states(bundles, monkeypatch):
    bundle = _bundle(bundles, "minilm")
    together = PJ.word_states(bundle, "bank", BANK)
    monkeypatch.setattr(PJ, "BATCH_TOKENS", 1)  # one sentence a batch
    alone = PJ.word_states(bundle, "bank", BANK)
    assert together.batches < alone.batches
    assert alone.batches == 4
    np.testing.assert_allclose(alone.states, together.states, atol=1e-5)
    # sorted by length; a batch grows while rows x its longest fits: 3 x 5 > 10 starts a new one
    assert PJ._batches([5, 3, 9, 3], budget=10) == [[1, 3], [0], [2]]
    assert PJ._batches([5, 3, 9, 3], budget=20) == [[1, 3, 0], [2]]


def test_sentences_without_the_word_are_skipped_with_the_reason(bundles):
    minilm = _bundle(bundles, "minilm")
    states = PJ.word_states(minilm, "bank", ("Banking is fun.", "The bank is open.", "No word here.",
                                             "The bank of the bank."))
    assert states.kept == [1, 3]
    assert [(s.index, s.reason) for s in states.skipped] == [(0, "absent"), (2, "absent")]
    assert states.repeated == [3]
    assert states.positions[1] == [2]  # [CLS] the bank: the first occurrence
    # MiniLM's vocabulary has neither 苹 nor 果: the sentence holds the word, the model's tokens do not
    lost = PJ.word_states(minilm, "苹果", ("我吃了一个苹果", "no apple"))
    assert [(s.index, s.reason) for s in lost.skipped] == [(0, "lost"), (1, "absent")]
    assert lost.states.shape[1] == 0
    translation = _bundle(bundles, "default")
    long = " ".join(["the cat sat on the mat"] * 20) + " by the bank"
    cut = PJ.word_states(translation, "bank", (long, "the bank"))
    assert [(s.index, s.reason) for s in cut.skipped] == [(0, "cut")]


def test_a_word_at_the_start_is_reported(bundles):
    states = PJ.word_states(_bundle(bundles, "smollm2"), "bank", ("Bank rates rose.", "The bank is open."))
    assert states.at_start == [0] and states.kept == [0, 1]


def test_bad_requests_raise(bundles):
    bundle = _bundle(bundles, "minilm")
    with pytest.raises(ValueError, match="no word"):
        PJ.word_states(bundle, "  ", BANK)
    with pytest.raises(ValueError, match="at most"):
        PJ.word_states(bundle, "bank", ("the bank",) * (PJ.MAX_SENTENCES + 1))


def test_the_word_pattern():
    assert PJ.word_pattern("bank").search("The BANK opened")
    assert not PJ.word_pattern("bank").search("banking")
    assert not PJ.word_pattern("bank").search("riverbank")
    assert PJ.word_pattern("苹果").search("我 吃 了 苹 果")  # WordPiece decodes Chinese with spaces
    assert PJ.word_pattern("苹果").search("苹果公司")  # Chinese words need no boundary
    assert PJ.word_pattern("river bank").search("the river  bank.")
    assert PJ.word_pattern("a+b").search("x a+b y")  # regex characters are literal


# --------------------------------------------------------------------------- PCA and the ratio


def _pca_reference(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Projection on the top two eigenvectors of the covariance matrix (eigh, not SVD)."""
    centred = x - x.mean(0)
    values, vectors = np.linalg.eigh(centred.T @ centred)
    order = np.argsort(values)[::-1]
    values, vectors = values[order], vectors[:, order]
    return centred @ vectors[:, :2], values[:2] / values.sum()


def test_pca_equals_the_covariance_eigenvectors_with_a_fixed_sign():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(12, 6)) @ np.diag([5, 3, 1, 0.5, 0.2, 0.1]) + 7.0
    coords, explained = PJ.pca_2d(x)
    ref, share = _pca_reference(x)
    for c in range(2):
        sign = np.sign(coords[:, c] @ ref[:, c])
        np.testing.assert_allclose(coords[:, c], sign * ref[:, c], atol=1e-9)
    np.testing.assert_allclose(explained, share, atol=1e-12)
    # the loading of largest magnitude is positive: a flipped input gives the same picture mirrored back
    again, _ = PJ.pca_2d(-x)
    np.testing.assert_allclose(np.abs(again), np.abs(coords), atol=1e-9)
    assert PJ.pca_2d(np.ones((3, 4)))[0].tolist() == [[0.0, 0.0]] * 3  # all alike: nothing to show


def _ratio_by_definition(x, labels):
    between, within = [], []
    for i, j in itertools.combinations(range(len(x)), 2):
        if not labels[i] or not labels[j]:
            continue
        cos = float(x[i] @ x[j] / (np.linalg.norm(x[i]) * np.linalg.norm(x[j])))
        (within if labels[i] == labels[j] else between).append(1.0 - cos)
    return np.mean(between), np.mean(within)


def test_the_ratio_is_mean_cosine_distance_between_over_within():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(9, 5))
    labels = ["a", "a", "b", "b", "b", "", "c", "a", "c"]
    between, within, ratio = PJ.sense_ratio(x, labels)
    ref_between, ref_within = _ratio_by_definition(x, labels)
    assert between == pytest.approx(ref_between, abs=1e-12)
    assert within == pytest.approx(ref_within, abs=1e-12)
    assert ratio == pytest.approx(ref_between / ref_within, rel=1e-12)
    assert np.isnan(PJ.sense_ratio(x, ["a"] * 9)[2])  # one sense: no pair between
    assert np.isnan(PJ.sense_ratio(x, list("abcdefghi"))[2])  # no sense holds two: no pair within
    same = np.ones((4, 3))
    assert np.isnan(PJ.sense_ratio(same, ["a", "a", "b", "b"])[2])  # every vector alike: 0 / 0


def test_project_is_the_pca_and_ratio_of_every_row(bundles):
    bundle = _bundle(bundles, "default")
    sentences = BANK + ("no word",)
    states = PJ.word_states(bundle, "bank", sentences)
    labels = ["money", "river", "money", "river", "ignored"]
    view = PJ.project(states, labels)
    assert view.labels == ["money", "river", "money", "river"] and view.senses == ["money", "river"]
    for r in range(states.n_rows):
        coords, explained = PJ.pca_2d(states.states[r])
        np.testing.assert_allclose(view.coords[r], coords, atol=1e-5)
        np.testing.assert_allclose(view.explained[r], explained, atol=1e-6)
        between, within = _ratio_by_definition(states.states[r].astype(np.float64), view.labels)
        assert view.ratio[r] == pytest.approx(between / within, rel=1e-5)
    assert view.peak() == int(np.nanargmax(view.ratio))
    with pytest.raises(ValueError, match="labels"):
        PJ.project(states, labels[:-1])
    unlabelled = PJ.project(states, [""] * 5)
    assert unlabelled.peak() is None and unlabelled.senses == []


def test_on_e5_the_word_is_looked_for_after_the_prefix(bundles):
    """e5 reads "query: " before every sentence: the word "query" is the sentence's, never the prefix's."""
    e5 = _bundle(bundles, "e5")
    sentences = ("My query was answered.", "No question here.")
    states = PJ.word_states(e5, "query", sentences)
    prepared = e5.task.prepare(sentences[0], e5.cfg.max_len)
    first_text_token = 1 + prepared.source_prefix
    assert prepared.source_prefix > 0 and states.kept == [0]
    assert min(states.positions[0]) > first_text_token  # after "My", not the prefix's ▁que ry
    assert [s.reason for s in states.skipped] == ["absent"]  # the prefix's "query" does not count
