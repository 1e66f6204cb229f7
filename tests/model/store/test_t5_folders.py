"""T5 folders (v1.0: ReLU, tied output with the d_model^-0.5 rescaling; v1.1 / Flan-T5: gated GELU, an output
projection of its own), opened through the user-model loader and held to ``transformers``.

Each is a tiny random model built from a ``transformers`` config (seeded, no hub; heads 6 wide on a width
of 32, so the head width is its own) with a SentencePiece model trained here
(tests/model/store/seq2seq_folders.py).
On teacher-forced pairs every encoder, decoder and cross-attention pattern is within 1e-5 of ``transformers``'
eager pass and the logits within 1e-4; greedy decoding equals ``generate(num_beams=1)``; the tokenizer gives
``transformers``' ids, from tokenizer.json and from spiece.model alone.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from model.decoding.decoders import greedy_decode
from model.network.kinds import hook_name
from model.network.positional import relative_buckets
from model.network.recorded import record_attention
from model.store.user_folders import load_user_model

from .seq2seq_folders import EN, TOKENIZER_SENTENCES, ZH, assert_refused_in_one_line, t5_folder

pytest.importorskip("transformers")
pytest.importorskip("sentencepiece")

VERSIONS = ("1.0", "1.1")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """version -> (folder, transformers tokenizer, transformers model, our bundle)."""
    root = tmp_path_factory.mktemp("t5")
    out = {}
    for version in VERSIONS:
        folder, tok, hf = t5_folder(root, version)
        out[version] = (folder, tok, hf, load_user_model(folder))
    return out


@pytest.mark.parametrize("bidirectional", [True, False])
def test_buckets_are_t5s(bidirectional):
    from transformers.models.t5.modeling_t5 import T5Attention

    distance = torch.arange(-300, 300)[None, :]
    for buckets, far in ((32, 128), (8, 20), (6, 7)):
        theirs = T5Attention._relative_position_bucket(distance, bidirectional, buckets, far)
        assert torch.equal(relative_buckets(distance, bidirectional, buckets, far), theirs)


def test_config_reads_each_version(built):
    v10, v11 = (built[v][3].model.cfg for v in VERSIONS)
    for cfg in (v10, v11):
        assert cfg.pos_encoding == "relative" and cfg.d_head == 6 and cfg.n_heads * cfg.d_head != cfg.d_model
        assert cfg.norm == "rmsnorm" and cfg.score_divisor == 1.0 and not cfg.scale_embeddings
    assert v10.tie_embeddings and v10.output_scale == pytest.approx(32**-0.5) and not v10.gated_ffn
    assert not v11.tie_embeddings and v11.output_scale == 1.0
    assert v11.gated_ffn and v11.activation == "gelu_tanh"
    model = built["1.0"][3].model
    first = model.encoder.blocks[0].attn.rel_bias
    assert all(b.attn.position_bias_table() is first for b in model.encoder.blocks)
    decoder = model.decoder.blocks
    assert decoder[1].self_attn.position_bias_table() is decoder[0].self_attn.rel_bias
    assert model.decoder.blocks[0].cross_attn.position_bias_table() is None


def _pairs():
    german = ["Das Haus ist gut.", "Ich esse.", "Er liest.", "Wir gehen.", "Die Katze."]
    return list(zip(EN[:5], german, strict=True))


@pytest.mark.parametrize("version", VERSIONS)
def test_patterns_and_logits_match_transformers(built, version):
    _, _, hf, bundle = built[version]
    model, task = bundle.model, bundle.task
    worst = {"encoder": 0.0, "decoder": 0.0, "cross": 0.0, "logits": 0.0, "recomputed": 0.0}
    for text, reference in _pairs():
        prepared = task.prepare(text, model.cfg.max_len, "en->de")
        target, _ = task.target_ids(reference, prepared.direction)
        src, tgt = torch.tensor([prepared.source_ids]), torch.tensor([prepared.prefix + target])
        with torch.no_grad(), record_attention() as recorded:
            out = hf(input_ids=src, decoder_input_ids=tgt, output_attentions=True)
            logits, cache = model.run_with_cache(src, tgt)
        worst["logits"] = max(worst["logits"], (out.logits - logits).abs().max().item())
        for kind, theirs in (("encoder", out.encoder_attentions), ("decoder", out.decoder_attentions),
                             ("cross", out.cross_attentions)):
            for i, pattern in enumerate(theirs):
                name = hook_name(kind, i, "pattern")
                worst[kind] = max(worst[kind], (pattern - cache[name]).abs().max().item())
                # what an analysis keeps gives the same pattern back, the position bias included
                _, again = recorded[name.rsplit(".", 1)[0]].compute()
                worst["recomputed"] = max(worst["recomputed"], (again - cache[name][0]).abs().max().item())
    assert worst["logits"] <= 1e-4, worst
    assert max(worst[k] for k in ("encoder", "decoder", "cross", "recomputed")) <= 1e-5, worst


def test_position_bias_hook_is_added_to_the_scores(built):
    model, task = built["1.1"][3].model, built["1.1"][3].task
    p = task.prepare(EN[0], 64, "en->de")
    src, tgt = torch.tensor([p.source_ids]), torch.tensor([p.prefix + [5, 6, 7]])
    with torch.no_grad():
        _, cache = model.run_with_cache(src, tgt)
    for kind, i in (("encoder", 1), ("decoder", 0)):
        bias = cache[hook_name(kind, i, "position_bias")]
        raw, scores = cache[hook_name(kind, i, "raw_scores")], cache[hook_name(kind, i, "scores")]
        seen = torch.isfinite(scores)
        assert bias.shape[0] == 1 and bias.shape[1:] == raw.shape[1:]
        assert torch.allclose((raw + bias)[seen], scores[seen])  # no 1/sqrt(d_head): raw + bias
        assert bias.abs().max() > 0.1


def _generate(hf, src: list[int], prefix: list[int], new: int) -> list[int]:
    out = hf.generate(torch.tensor([src]), decoder_input_ids=torch.tensor([prefix]), num_beams=1,
                      do_sample=False, max_new_tokens=new, min_length=0, eos_token_id=hf.config.eos_token_id)
    ids = out[0, len(prefix):].tolist()
    eos = hf.config.eos_token_id
    return ids[: ids.index(eos)] if eos in ids else ids


@pytest.mark.parametrize("version", VERSIONS)
def test_greedy_decoding_equals_generate(built, version):
    _, _, hf, bundle = built[version]
    model, task = bundle.model, bundle.task
    new, lengths = 12, []
    for text in EN[:5]:
        prepared = task.prepare(text, model.cfg.max_len, "en->fr")
        assert prepared.prefix == [0]  # decoder_start_token_id = <pad>
        ours = greedy_decode(model, [prepared.source_ids], [prepared.prefix], task.tokenizer.eos_id, new)[0]
        assert ours == _generate(hf, prepared.source_ids, prepared.prefix, new), text
        lengths.append(len(ours))
    assert max(lengths) >= 6  # the comparison covers decoding steps past the first few


@pytest.mark.parametrize("version", VERSIONS)
def test_beam_search_invariants(built, version):
    """Width 1 is greedy decoding; a finished hypothesis' logp is its teacher-forced log-probability;
    hypotheses come best first; a wider beam never scores below the greedy one (ours lets finished
    hypotheses leave the beam, generate refills it: their outputs may differ)."""
    from model.decoding.beam import beam_search

    model, task = built[version][3].model, built[version][3].task
    eos = task.tokenizer.eos_id
    for text in EN[:2]:
        p = task.prepare(text, model.cfg.max_len, "en->de")
        greedy = greedy_decode(model, [p.source_ids], [p.prefix], eos, 8)[0]
        assert beam_search(model, [p.source_ids], [p.prefix], eos, width=1, max_new=8)[0].best.ids == greedy
        result = beam_search(model, [p.source_ids], [p.prefix], eos, width=4, max_new=8,
                             length_penalty=0.0)[0]
        scores = [h.score for h in result.finished]
        assert scores == sorted(scores, reverse=True)
        for hyp in result.finished[:4]:
            ids = p.prefix + hyp.ids + ([eos] if hyp.ended else [])
            with torch.no_grad():
                logits = model(torch.tensor([p.source_ids]), torch.tensor([ids[:-1]]))
            logp = torch.log_softmax(model.named_logits(logits[0]), -1)
            start = len(p.prefix) - 1
            forced = sum(logp[start + j, t].item() for j, t in enumerate(ids[len(p.prefix):]))
            assert forced == pytest.approx(hyp.logp, abs=1e-4)
        greedy_logp = beam_search(model, [p.source_ids], [p.prefix], eos, width=1, max_new=8,
                                  length_penalty=0.0)[0].best.score
        # the same ids can come out of a batch of 4 and of 1 a few float32 roundings apart (2.9e-6 seen)
        assert result.best.score >= greedy_logp - 1e-5


@pytest.mark.parametrize("source", ["json", "spm"])
def test_tokenizer_ids_equal_transformers(tmp_path, source):
    import transformers

    folder, tok, _ = t5_folder(tmp_path, "1.0", source)
    assert (folder / "tokenizer.json").is_file() == (source == "json")
    bundle = load_user_model(folder)
    reference = transformers.T5Tokenizer.from_pretrained(str(folder), extra_ids=4) if source == "spm" else tok
    task = bundle.task
    assert len(TOKENIZER_SENTENCES) == 20
    unknown = 0
    for text in TOKENIZER_SENTENCES:
        prepared = task.prepare(text, 128, "en->de")
        assert prepared.source_ids == reference("translate English to German: " + text).input_ids, text
        assert task.tokenizer.encode(text) + [1] == reference(text).input_ids, text
        unknown += bool(task.tokenizer.unknown_characters(text))
    assert unknown >= 4
    assert task.tokenizer.tokens([len(reference) - 1]) == ["<extra_id_0>"]


def test_task_prefix_is_the_first_tokens(built):
    task = built["1.1"][3].task
    assert task.directions == ["en->de", "en->fr"]  # summarize: is no translation
    p = task.prepare(EN[2], 64, "en->fr")
    assert p.source_prefix_start == 0 and p.source_prefix > 0  # the pages mark these pieces as e5's prefix
    prefix = "".join(p.source_tokens[: p.source_prefix]).replace("\u2581", " ").strip()
    assert prefix == "translate English to French:"
    assert p.text == EN[2] and p.source_ids[-1] == task.tokenizer.eos_id


def _copy(built, version: str, tmp_path):
    target = tmp_path / version
    shutil.copytree(built[version][0], target)
    return target


def _edit_config(folder, **changes):
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))


def _drop_head(folder):
    from safetensors.torch import load_file, save_file

    state = load_file(str(folder / "model.safetensors"))
    del state["lm_head.weight"]
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})


HOSTILE = {
    "unknown feed-forward": ("1.0", lambda f: _edit_config(f, feed_forward_proj="gated-tanh"),
                             "feed_forward_proj"),
    "wrong head width": ("1.0", lambda f: _edit_config(f, d_kv=8), "does not match"),
    "no tokenizer": ("1.0", lambda f: [(f / n).unlink() for n in ("tokenizer.json", "spiece.model")],
                     "spiece.model"),
    "garbage spiece": ("1.0", lambda f: ((f / "tokenizer.json").unlink(),
                                         (f / "spiece.model").write_bytes(b"\x00nope" * 9)), "spiece.model"),
    "untied without its head": ("1.1", _drop_head, "lm_head.weight"),
    "huge buckets": ("1.0", lambda f: _edit_config(f, relative_attention_num_buckets=10**7),
                     "relative_buckets"),
    "pad not the tokenizer's": ("1.0", lambda f: _edit_config(f, pad_token_id=3), "pad_token_id"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_folders_are_refused_in_one_line(built, tmp_path, case):
    version, spoil, named = HOSTILE[case]
    folder = _copy(built, version, tmp_path)
    spoil(folder)
    assert_refused_in_one_line(folder, named)


def test_chinese_source_is_read(built):
    """A T5 reads any text; characters its vocabulary lacks are said, not dropped."""
    task = built["1.0"][3].task
    p = task.prepare(ZH[0], 64)
    assert p.direction == "en->de" and p.source_ids[-1] == 1


def test_worked_example_adds_the_bias_and_matches_the_recorded_weights(built):
    """The worked example's hand computation (viz.work_row in float64) with the '+ position bias' column
    gives hook_scores and hook_pattern back, in the encoder and the decoder."""
    import viz
    from model.lab.worked import layer_tensors_for

    bundle = built["1.1"][3]
    for kind, layer in (("encoder", 1), ("decoder", 0)):
        data = layer_tensors_for(bundle, EN[1], "en->de", kind, layer)
        assert data.position_bias is not None and data.divisor == 1.0
        for head in range(data.n_heads):
            for query in range(data.q.shape[0]):
                row = viz.work_row(data.q, data.k, data.v, head, query, causal=data.causal,
                                   scale=data.divisor, bias=data.position_bias[head, query])
                seen = ~row.mask
                assert abs(row.masked[seen] - data.scores[head, query][seen]).max() < 1e-5
                assert abs(row.weights - data.pattern[head, query]).max() < 1e-5
        table = viz.steps_table(row, [str(i) for i in range(data.k.shape[0])])
        assert table.attrs["columns"]["bias"] == "+ position bias"
        without = viz.work_row(data.q, data.k, data.v, 0, query, causal=data.causal, scale=data.divisor)
        assert abs(without.weights - data.pattern[0, query]).max() > 1e-3  # the bias matters
    cross = layer_tensors_for(bundle, EN[1], "en->de", "cross", 0)
    assert cross.position_bias is None


def test_positional_lab_reads_each_stacks_bias(built):
    from model.lab.positional import position_biases

    bundle = built["1.0"][3]
    found = {b.stack: b for b in position_biases(bundle, 30)}
    assert set(found) == {"encoder", "decoder"}
    enc, dec = found["encoder"], found["decoder"]
    assert enc.distance[0] == -30 and enc.distance[-1] == 30 and dec.distance[-1] == 0
    table = bundle.model.encoder.blocks[0].attn.rel_bias.weight.detach().numpy()
    assert abs(enc.bias - table[enc.buckets].T).max() == 0  # each distance reads its bucket's row
    # bidirectional: bucket 4 (a later key at distance 0) is never reached, as in T5; causal: all 8
    assert set(enc.buckets.tolist()) == set(range(8)) - {4} and set(dec.buckets.tolist()) == set(range(8))
    p = bundle.task.prepare(EN[0], 64, "en->de")
    with torch.no_grad():
        src, tgt = torch.tensor([p.source_ids]), torch.tensor([p.prefix + [5, 6]])
        _, cache = bundle.model.run_with_cache(src, tgt)
    hooked = cache[hook_name("decoder", 1, "position_bias")][0]  # [head, query, key]
    for q in range(hooked.shape[1]):
        assert torch.allclose(hooked[:, q, : q + 1], torch.from_numpy(dec.bias[:, -q - 1:]))


def test_no_positional_encoding_removes_the_bias(built):
    """The ablation "no positional encoding" on a T5 sets its relative position bias to 0 (its only position
    signal): hook_position_bias is 0 and hook_scores is the raw q·k; the intact pass is back afterwards."""
    from model.run.interventions import NoPositionalEncoding, intervene

    model, task = built["1.0"][3].model, built["1.0"][3].task
    p = task.prepare(EN[3], 64, "en->de")
    src, tgt = torch.tensor([p.source_ids]), torch.tensor([p.prefix + [5, 6, 7]])
    with torch.no_grad():
        before, _ = model.run_with_cache(src, tgt)
        with intervene(model, NoPositionalEncoding()), record_attention() as recorded:
            edited, cache = model.run_with_cache(src, tgt)
        after, _ = model.run_with_cache(src, tgt)
    for kind, i in (("encoder", 0), ("decoder", 1)):
        assert cache[hook_name(kind, i, "position_bias")].abs().max() == 0
        scores, raw = cache[hook_name(kind, i, "scores")], cache[hook_name(kind, i, "raw_scores")]
        seen = torch.isfinite(scores)
        assert torch.equal(scores[seen], raw[seen])
        name = hook_name(kind, i, "pattern")
        _, again = recorded[name.rsplit(".", 1)[0]].compute()
        assert (again - cache[name][0]).abs().max() < 1e-6
    assert (edited - before).abs().max() > 1e-3 and torch.equal(before, after)


def test_a_zipped_folder_with_spiece_model_only_opens(tmp_path):
    """An upload keeps spiece.model (the .model suffix), so a T5 zip without tokenizer.json opens."""
    import io
    import zipfile

    from model.store.upload_files import extract_zip

    folder, _, _ = t5_folder(tmp_path, "1.1", "spm")
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        for p in sorted(folder.iterdir()):
            z.writestr(f"{folder.name}/{p.name}", p.read_bytes())
    data.seek(0)
    dest = tmp_path / "unpacked"  # extract_zip makes it
    extract_zip(data, dest, "t5.zip")
    assert (dest / "spiece.model").is_file() and not (dest / "tokenizer.json").exists()
    task = load_user_model(dest).task
    assert task.directions == ["en->de", "en->fr"] and task.prepare(EN[0], 64).source_ids[-1] == 1


def test_the_command_line_translates_as_generate(tmp_path):
    """``python -m model translate --model-dir`` on a v1.1 folder with spiece.model alone prints, for each
    text, what ``transformers``' greedy ``generate`` writes from the same input: the config's first task
    prefix put before the text (as the app does), the decoder started from <pad>, up to max_len."""
    import transformers

    from tests.cli_run import model_cli

    folder, _, hf = t5_folder(tmp_path, "1.1", "spm")
    reference = transformers.T5Tokenizer.from_pretrained(str(folder), extra_ids=4)
    texts = EN[:4]
    run = model_cli(["translate", "--model-dir", str(folder), *texts])
    assert run.returncode == 0 and "Traceback" not in run.stderr, run
    lines = run.stdout.split("\n")
    assert lines[-1] == "" and len(lines) == len(texts) + 1, run
    tokenizer = load_user_model(folder).task.tokenizer
    start = hf.config.decoder_start_token_id
    room = json.loads((folder / "config.json").read_text())["n_positions"] - 1  # the decoder's positions
    lengths = []
    for text, line in zip(texts, lines, strict=False):
        src = reference("translate English to German: " + text).input_ids
        ids = _generate(hf, src, [start], room)
        assert line == tokenizer.decode(ids), (text, run)
        assert line == reference.decode(ids, skip_special_tokens=True), text
        lengths.append(len(ids))
    assert max(lengths) >= 6, lengths  # the comparison covers decoding steps past the first few


@pytest.mark.parametrize("how", ["double", "zero in place"])
def test_recomputed_patterns_see_a_hook_function_on_the_position_bias(built, how):
    """A hook function on hook_position_bias (doubling the bias, or zeroing it in place) changes what the
    pages draw: every head's pattern computed from what the analysis recorded equals the pattern the
    forward pass used (kept whole by an analysis of every hook), within 1e-5; the layers without the
    function keep their table, and the intact model is bit-identical afterwards."""
    from model.network.recorded import EditedBias, RelativeBias
    from model.run.analysis import analyze, attention_only
    from model.run.interventions import HookFunction

    bundle = built["1.1"][3]
    model = bundle.model
    fn = (lambda b: b * 2.0) if how == "double" else (lambda b: b.zero_())
    edited = (("encoder", 1), ("decoder", 0))
    edits = tuple(HookFunction(hook_name(kind, i, "position_bias"), fn, what=how) for kind, i in edited)
    p = bundle.task.prepare(EN[1], model.cfg.max_len, "en->de")
    src, tgt = torch.tensor([p.source_ids]), torch.tensor([p.prefix + [5, 6, 7]])
    with torch.no_grad():
        before = model(src, tgt)
    intact = analyze(bundle, EN[1], "en->de", keep=attention_only, max_new=8)
    recomputed = analyze(bundle, EN[1], "en->de", edits=edits, keep=attention_only, max_new=8)
    whole = analyze(bundle, EN[1], "en->de", edits=edits, max_new=8)
    with torch.no_grad():
        after = model(src, tgt)
    assert torch.equal(before, after)
    assert recomputed.output_text == whole.output_text and recomputed.target_tokens == whole.target_tokens
    inputs = recomputed.attention_inputs
    for kind, i in edited:
        assert isinstance(inputs[hook_name(kind, i, "pattern").rsplit(".", 1)[0]].relative, EditedBias)
    assert isinstance(inputs[hook_name("encoder", 0, "pattern").rsplit(".", 1)[0]].relative, RelativeBias)
    worst, moved = 0.0, 0.0
    for kind in ("encoder", "decoder", "cross"):
        for layer in range(recomputed.n_layers(kind)):
            for head in range(model.cfg.n_heads):
                _, pattern = recomputed.head_attention(kind, layer, head)
                used = whole.activations[hook_name(kind, layer, "pattern")][0, head]
                worst = max(worst, float(abs(pattern - used).max()))
                if (kind, layer) == ("encoder", 1):  # same input, same encoder: the edit shows here
                    before_edit = intact.head_attention(kind, layer, head)[1]
                    moved = max(moved, float(abs(pattern - before_edit).max()))
    assert worst <= 1e-5, worst
    assert moved > 1e-2, moved  # the edit does move the pattern: the comparison above can fail


def test_a_hook_function_that_only_looks_keeps_the_table(built):
    from model.network.recorded import RelativeBias
    from model.run.analysis import analyze, attention_only
    from model.run.interventions import HookFunction

    bundle = built["1.1"][3]
    seen = []
    look = HookFunction(hook_name("encoder", 1, "position_bias"), lambda b: seen.append(b.shape), what="look")
    result = analyze(bundle, EN[1], "en->de", edits=(look,), keep=attention_only, max_new=4)
    assert seen and isinstance(result.attention_inputs["encoder.blocks.1.attn"].relative, RelativeBias)
