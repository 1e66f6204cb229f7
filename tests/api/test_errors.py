"""Every bad argument gets one ArgumentError that names it and says what was expected."""

from __future__ import annotations

import numpy as np
import pytest

import attention_lens as al
from attention_lens import ArgumentError
from model.store.names import UnknownModelError
from model.store.problems import UserModelError


def uniform(layers=2, heads=3, n=4):
    return np.full((layers, heads, n, n), 1 / n, dtype=np.float32)


def test_an_unknown_model_is_named_with_the_models_there_are():
    with pytest.raises(UnknownModelError, match=r"No model named 'nope'\. Available models: .*reverse"):
        al.load("nope")


def test_a_missing_folder_is_one_line_naming_it(tmp_path):
    with pytest.raises(UserModelError) as e:
        al.load(tmp_path / "absent")
    assert str(tmp_path / "absent") in str(e.value) and "\n" not in str(e.value)


def test_a_folder_without_weights_is_one_line_as_on_the_command_line(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(UserModelError, match="model.safetensors"):
        al.load(tmp_path)


def test_a_name_of_the_wrong_type_or_empty():
    with pytest.raises(ArgumentError, match="name_or_path"):
        al.load(3)
    with pytest.raises(ArgumentError, match="name_or_path"):
        al.load(" ")


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda r: r.pattern("cross", 2, 0), r"layer=2 is out of range: expected 0 to 1"),
        (lambda r: r.pattern("cross", 0, 4), r"head=4 is out of range: expected 0 to 3"),
        (lambda r: r.pattern("cross", -1, 0), r"layer=-1 is out of range"),
        (lambda r: r.scores("cross", 0, 1.5), r"head must be a whole number"),
        (lambda r: r.pattern("crossed", 0, 0), r"kind must be one of 'encoder', 'decoder', 'cross'"),
        (lambda r: r.attention("cross", "weights"), r"what must be one of"),
        (lambda r: r.hook("encoder.blocks.0.hook_resid_post"), r"run with keep='all'"),
        (lambda r: al.head_view(r, kind="cross", layer=5), r"layer=5 is out of range"),
        (lambda r: al.attention_heads(r, page=1), r"page=1 is out of range: expected 0 to 0"),
        (lambda r: al.token_focus(r, 99), r"token=99 is out of range"),
        (lambda r: al.token_focus(r, "z"), r"token 'z' is not among the tokens"),
        (lambda r: al.token_focus(r, 0, side="up"), r"side must be one of 'from', 'to'"),
        (lambda r: al.head_view(r, query_range=(3, 2)), r"query_range=\(3, 2\) must satisfy"),
        (lambda r: al.head_view(r, list("abc")), r"tokens: a Run or an Attention brings its own tokens"),
        (lambda r: al.compare(r, r, layer=3), r"layer=3 is out of range"),
        (lambda r: al.logit_lens(r, value="logits"), r"value must be one of"),
        (lambda r: al.logit_lens(r.model), r"run must be a Run"),
        (lambda r: al.head_detectors(r.model, "sinks"), r"role must be one of"),
        (lambda r: al.head_detectors("reverse"), r"model must be an attention_lens Model"),
        (
            lambda r: al.save_figure(al.head_view(r), "head.pdf"),
            r"path's suffix must be one of 'html', 'png', 'svg'",
        ),
        (lambda r: al.save_figure("not a figure", "head.html"), r"fig must be a plotly Figure"),
    ],
)
def test_bad_arguments_on_a_run(reverse_run, call, match):
    with pytest.raises(ArgumentError, match=match):
        call(reverse_run)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"keep": "some"}, r"keep must be one of 'attention', 'all'"),
        ({"strategy": "beam99"}, r"strategy: unknown decoding strategy"),
        ({"strategy": 4}, r"strategy must be a Strategy"),
        ({"max_new_tokens": 0}, r"max_new_tokens must be a whole number of at least 1"),
        ({"direction": "zh->en"}, r"direction must be None or one of this model's directions"),
    ],
)
def test_bad_arguments_to_run(reverse, kwargs, match):
    with pytest.raises(ArgumentError, match=match):
        reverse.run("abc", **kwargs)


def test_bad_heads_and_sites_for_the_interventions(reverse):
    with pytest.raises(ArgumentError, match=r"heads: \('cross', 2, 0\) is no head of reverse"):
        al.ablate(reverse, "abc", heads=[("cross", 2, 0)])
    with pytest.raises(ArgumentError, match=r"heads must be \(kind, layer, head\) triples"):
        al.head_edits(reverse, [("cross", 1)])
    with pytest.raises(ArgumentError, match=r"mode: ablation mode must be one of"):
        al.head_edits(reverse, [("cross", 1, 0)], mode="half")
    with pytest.raises(ArgumentError, match=r"site must be an attention_lens.Site"):
        al.patch(reverse, "abc", "abd", ("resid", "encoder", 1))
    with pytest.raises(ArgumentError, match=r"model must be an attention_lens Model or a model name"):
        al.ablate(object(), "abc")


# -- attention of one's own ------------------------------------------------------------------------


def test_arrays_of_the_wrong_rank():
    with pytest.raises(
        ArgumentError,
        match=r"attentions must be \[layer, heads, query, key\].*3-D array of shape \(3, 4, 4\)",
    ):
        al.as_attention(uniform()[0], list("abcd"))
    with pytest.raises(
        ArgumentError, match=r"attentions\[1\] must be \[batch, heads, query, key\] or \[heads, query, key\]"
    ):
        al.as_attention([uniform()[0], uniform()[0, 0]], list("abcd"))


def test_ragged_layers():
    layers = [uniform(1, 3, 4)[0][None], uniform(1, 2, 4)[0][None]]
    with pytest.raises(
        ArgumentError, match=r"attentions: layer 1 is \[heads, query, key\] = \(2, 4, 4\) but layer 0"
    ):
        al.as_attention(layers, list("abcd"))
    with pytest.raises(ArgumentError, match=r"could not be read as an array"):
        al.as_attention([[[0.5, 0.5], [1.0]]], list("ab"))


def test_rows_that_do_not_sum_to_one():
    a = uniform()
    a[1, 2, 3] *= 1.01  # 1.01: past the tolerance of 1e-3
    with pytest.raises(ArgumentError, match=r"the row of layer 1, head 2, query 3 sums to 1\.01; each row"):
        al.as_attention(a, list("abcd"))
    a = uniform()
    a[0, 0, 0, :2] += [5e-4, -5e-4]  # within the tolerance, rows still sum to 1
    a[0, 0, 1, 0] += 5e-4  # 1.0005: within it too
    assert al.as_attention(a, list("abcd")).kinds == ("encoder",)


def test_nan_and_infinite_weights():
    a = uniform()
    a[0, 1, 2, 3] = np.nan
    with pytest.raises(ArgumentError, match=r"NaN or infinite weights \(layer 0, head 1, query 2, key 3\)"):
        al.as_attention(a, list("abcd"))


def test_tokens_of_another_length_or_type():
    with pytest.raises(ArgumentError, match=r"tokens has 3 entries but the attention has 4 positions"):
        al.attention_heads(uniform(), list("abc"))
    with pytest.raises(ArgumentError, match=r"tokens must be a list of strings, got str"):
        al.head_view(uniform(), "abcd")
    with pytest.raises(ArgumentError, match=r"tokens must all be strings, found int 1"):
        al.head_view(uniform(), [1, 2, 3, 4])
    with pytest.raises(ArgumentError, match=r"tokens is missing"):
        al.head_view(uniform())


def test_more_than_the_figure_draws():
    n = al.figures.MAX_HEAD_POSITIONS + 1
    big = np.full((1, 1, n, n), 1 / n, dtype=np.float32)
    tokens = [f"t{i}" for i in range(n)]
    with pytest.raises(
        ArgumentError, match=r"query_range is needed: 513 positions is more than head_view draws"
    ):
        al.head_view(big, tokens)
    with pytest.raises(ArgumentError, match=r"key_range=\(0, 513\) spans 513 positions"):
        al.head_view(big, tokens, query_range=(0, 10), key_range=(0, n))
    fig = al.head_view(big, tokens, query_range=(500, 513), key_range=(0, 64))  # a window is drawn
    assert fig.data[-1].z.shape == (13, 64)


def test_bertviz_keywords_checked_on_their_own_axes():
    enc, dec = [uniform(1, 2, 3)[0][None]], [uniform(1, 2, 2)[0][None]]
    cross = [np.full((1, 2, 2, 3), 1 / 3, dtype=np.float32)]
    with pytest.raises(ArgumentError, match=r"decoder_tokens is missing"):
        al.as_attention(encoder_attention=enc, cross_attention=cross, encoder_tokens=list("abc"))
    with pytest.raises(
        ArgumentError, match=r"encoder_tokens has 2 entries but the attention has 3 cross-attention key"
    ):
        al.as_attention(cross_attention=cross, encoder_tokens=list("ab"), decoder_tokens=list("xy"))
    with pytest.raises(ArgumentError, match=r"not both"):
        al.as_attention(uniform(), list("abcd"), encoder_attention=enc)
    with pytest.raises(ArgumentError, match=r"attentions is missing"):
        al.as_attention()
    with pytest.raises(ArgumentError, match=r"every kind must have the same number of heads"):
        al.as_attention(
            encoder_attention=[uniform(1, 3, 3)[0][None]],
            decoder_attention=dec,
            encoder_tokens=list("abc"),
            decoder_tokens=list("xy"),
        )
    with pytest.raises(ArgumentError, match=r"batch=1 is out of range"):
        al.as_attention(enc, list("abc"), batch=1)


def test_a_mapping_without_pattern_hooks_or_with_a_gap():
    with pytest.raises(ArgumentError, match=r"has no key 'blocks.\{layer\}.attn.hook_pattern'"):
        al.as_attention({"blocks.0.hook_resid_post": uniform()[0]}, list("abcd"))
    with pytest.raises(ArgumentError, match=r"has no pattern for layer 1"):
        al.as_attention(
            {
                "blocks.0.attn.hook_pattern": uniform()[0][None],
                "blocks.2.attn.hook_pattern": uniform()[0][None],
            },
            list("abcd"),
        )
