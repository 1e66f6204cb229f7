"""The atlas and the detectors over your own corpus (model/lab/atlas_corpus.py, model/lab/atlas_shards.py):
the three file forms and their bounds, the seeded sample, shards that reduce to each prompt's own figures,
one atlas from 1 worker, 2 pool workers and Ray, a worker killed mid-run, a job killed and run again, a bad
prompt failing its shard alone, and the command line."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from model.__main__ import main
from model.lab import atlas_corpus as C
from model.lab import atlas_shards as S
from model.lab import detectors as D
from model.lab.atlas import STATS, AtlasError, held_out_dataset
from model.network.kinds import hook_name
from model.run.analysis import analyze, attention_only
from model.store.registry import load_model
from tests.paths import REPO_ROOT

MODEL = "induction"  # a language model small enough to run every engine in seconds


@pytest.fixture(autouse=True)
def _atlas_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LENS_ATLAS_DIR", str(tmp_path / "atlas"))


@functools.cache
def bundle():
    return load_model(MODEL)


@functools.cache
def prompts(n: int = 24) -> tuple[str, ...]:
    return tuple(held_out_dataset(bundle(), n).texts)


def write_corpus(folder: Path, texts, name: str = "corpus.txt") -> Path:
    path = folder / name
    path.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    return path


def run(tmp_path, n=None, **kw) -> S.CorpusRun:
    corpus = C.read_corpus(write_corpus(tmp_path, prompts()))
    kw.setdefault("shard_size", 4)
    return S.run_corpus(bundle(), S.ModelSpec(name=MODEL), corpus, n, **kw)


def assert_same_atlas(a: S.CorpusRun, b: S.CorpusRun, exact: bool = False) -> None:
    """Equal figures within float tolerance (bit for bit when ``exact``), identical role labels, top
    examples and outputs, equal detector scores."""
    close = functools.partial(np.testing.assert_allclose, atol=1e-6)
    check = np.testing.assert_array_equal if exact else close
    for kind in a.atlas.kinds:
        for stat in STATS:
            check(a.atlas.stats[stat][kind], b.atlas.stats[stat][kind], err_msg=f"{kind} {stat}")
        check(a.atlas.js[kind], b.atlas.js[kind])
        check(a.atlas.per_sentence[kind], b.atlas.per_sentence[kind])
        np.testing.assert_array_equal(a.atlas.n_rows[kind], b.atlas.n_rows[kind])
        for layer in range(a.atlas.layer_counts[kind]):
            for head in range(a.atlas.n_heads):
                assert ([r.name for r in a.atlas.roles(kind, layer, head)]
                        == [r.name for r in b.atlas.roles(kind, layer, head)])
                assert a.atlas.top_sentences(kind, layer, head) == b.atlas.top_sentences(kind, layer, head)
        assert a.atlas.order[kind] == b.atlas.order[kind]
    assert a.atlas.texts == b.atlas.texts and a.atlas.outputs == b.atlas.outputs
    for role in D.ON_ANY_INPUT:
        check(a.detectors.corpus.scores[role], b.detectors.corpus.scores[role], err_msg=role)


# --------------------------------------------------------------------------- the corpus file


def test_text_jsonl_and_parquet_files_give_the_same_prompts(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = ["第一句。", "the second one", "  spaced  ", "x" * 50]
    plain = tmp_path / "c.txt"
    plain.write_text("\n".join(texts[:2]) + "\n\n" + "\n".join(texts[2:]) + "\n", encoding="utf-8")
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text("".join(json.dumps({"text": t, "id": i}, ensure_ascii=False) + "\n"
                             for i, t in enumerate(texts)), encoding="utf-8")
    parquet = tmp_path / "c.parquet"
    pq.write_table(pa.table({"text": texts, "n": list(range(4))}), parquet)
    read = [C.read_corpus(p) for p in (plain, jsonl, parquet)]
    assert [c.texts for c in read] == [texts] * 3, "blank lines are skipped, everything else kept as is"
    assert [c.form for c in read] == ["text", "jsonl", "parquet"]
    assert len({c.sha256 for c in read}) == 3 and read[0].name == "c.txt"


@pytest.mark.parametrize("content,name,message", [
    ("", "empty.txt", "no prompt"),
    ("{\"text\": \"a\"}\nnot json\n", "bad.jsonl", "line 2: not JSON"),
    ("{\"txt\": \"a\"}\n", "field.jsonl", "line 1: no \"text\" field"),
    ("{\"text\": 3}\n", "type.jsonl", "line 1: the text is not a string"),
    ("a\n" + "y" * 30 + "\n", "long.txt", "line 2: 30 characters"),
    ("a\nb\nc\nd\n", "many.txt", "more than 3 prompts"),
    ("a" * 300, "big.txt", "300 bytes"),
])
def test_each_bound_and_each_bad_file_gets_one_line(tmp_path, monkeypatch, content, name, message):
    monkeypatch.setattr(C, "MAX_PROMPT_CHARS", 20)
    monkeypatch.setattr(C, "MAX_PROMPTS", 3)
    monkeypatch.setattr(C, "MAX_CORPUS_BYTES", 200)
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(AtlasError, match=message) as info:
        C.read_corpus(path)
    assert "\n" not in str(info.value)


def test_parquet_bounds_and_a_missing_column(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "c.parquet"
    pq.write_table(pa.table({"body": ["a", "b"]}), path)
    with pytest.raises(AtlasError, match="no \"text\" column"):
        C.read_corpus(path)
    pq.write_table(pa.table({"text": ["a", "b", "c", "d"]}), path)
    monkeypatch.setattr(C, "MAX_PROMPTS", 3)
    with pytest.raises(AtlasError, match="more than 3 prompts"):
        C.read_corpus(path)
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(AtlasError, match="not a Parquet file"):
        C.read_corpus(tmp_path / "broken.parquet")
    with pytest.raises(AtlasError, match="not found"):
        C.read_corpus(tmp_path / "nothing.txt")


def test_the_sample_is_drawn_with_its_seed_and_the_corpus_hash_keys_the_run(tmp_path):
    corpus = C.read_corpus(write_corpus(tmp_path, [f"p{i}" for i in range(100)]))
    a, b, c = (C.corpus_dataset(corpus, 10, seed) for seed in (0, 0, 1))
    assert a.texts == b.texts and a.texts != c.texts and len(set(a.texts)) == 10
    assert a.texts == sorted(a.texts, key=lambda t: int(t[1:])), "file order kept"
    assert "10 of 100 prompts, sampled with seed 0" in a.description
    assert C.corpus_dataset(corpus).texts == corpus.texts
    other = C.read_corpus(write_corpus(tmp_path, [f"p{i}" for i in range(100)] + ["one more"], "d.txt"))
    keys = {S.corpus_key("w", corpus, 10, 0, 4), S.corpus_key("w", other, 10, 0, 4),
            S.corpus_key("w", corpus, 10, 1, 4), S.corpus_key("w", corpus, 11, 0, 4),
            S.corpus_key("w", corpus, 10, 0, 5), S.corpus_key("v", corpus, 10, 0, 4)}
    assert len(keys) == 6


# --------------------------------------------------------------------------- the reduction


def _read_alone(text: str):
    """[layer, head, q, k] of one prompt as the app reads it with no new token (``analyze(max_new=0)``: the
    one-pass reading, model/run/one_pass.py), checked against the model's own pattern hooks."""
    b = bundle()
    ids = b.task.prepare(text, b.cfg.max_len).source_ids
    read = analyze(b, text, keep=attention_only, max_new=0)
    assert read.output_text == "" and len(read.target_tokens) == len(ids)
    stack = read.attention("decoder")
    w = np.stack([stack.layer(i) for i in range(len(stack))]).astype(np.float64)
    with torch.no_grad():
        _, cache = b.model.run_with_cache(torch.tensor([ids]))
    n = b.model.attention_layer_counts()["decoder"]
    hooks = np.stack([cache[hook_name("decoder", i, "pattern")][0].double().numpy() for i in range(n)])
    np.testing.assert_allclose(w, hooks, atol=1e-6)
    return ids, w


def test_shards_reduce_to_the_figures_of_each_prompt_read_alone(tmp_path):
    result = run(tmp_path, shard_size=5)  # 24 prompts: four shards of 5 and one of 4
    atlas = result.atlas
    assert atlas.source["shards"] == 5 and atlas.source["engine"] == "local" and atlas.source["read_only"]
    assert atlas.outputs == [""] * 24, "prompts are read, not continued"
    pooled = {s: [] for s in ("max_weight", "previous", "first_share", "entropy", "diagonal")}
    per_sentence = []
    for text in prompts():
        ids, w = _read_alone(text)
        n = len(ids)
        pooled["max_weight"].append(w.max(-1))
        pooled["previous"].append(np.stack([w[..., i, i - 1] for i in range(1, n)], -1))
        pooled["first_share"].append(w[..., 0])
        pooled["diagonal"].append(np.stack([w[..., i, i] for i in range(n)], -1))
        pooled["entropy"].append(-(w * np.log(np.where(w > 0, w, 1))).sum(-1))
        per_sentence.append(w.max(-1).mean(-1))
    for stat, parts in pooled.items():
        expected = np.concatenate(parts, -1).mean(-1)
        np.testing.assert_allclose(atlas.stats[stat]["decoder"], expected, atol=1e-5, err_msg=stat)
    np.testing.assert_allclose(atlas.per_sentence["decoder"], np.stack(per_sentence), atol=1e-5)
    # the detectors over the corpus equal the detectors' own path over the same prompts
    direct = D._run(bundle(), list(prompts()), D.ON_ANY_INPUT)
    for role in D.ON_ANY_INPUT:
        np.testing.assert_allclose(result.detectors.corpus.scores[role], direct.scores[role], atol=1e-5,
                                   err_msg=role)
    assert result.detectors.corpus.counts == direct.counts
    np.testing.assert_allclose(result.detectors.probes.scores["induction"],
                               D.probe_scores(bundle()).scores["induction"])
    # the finished run reads back whole; another shard size is another run with the same figures
    again = run(tmp_path, shard_size=5)
    assert again.cached and again.computed == 0
    assert_same_atlas(result, again, exact=True)
    assert_same_atlas(result, run(tmp_path, shard_size=7))


def test_a_bad_prompt_fails_its_shard_alone_with_its_reason(tmp_path):
    texts = list(prompts()[:12])
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts[:6] + ["   "] + texts[6:]))
    corpus = C.read_corpus(path)
    with pytest.raises(AtlasError) as info:
        S.run_corpus(bundle(), S.ModelSpec(name=MODEL), corpus, shard_size=4)
    message = str(info.value)
    assert message.startswith("1 of 4 shards did not finish (shard 1, prompts 4-7: The input text is empty")
    assert "\n" not in message and "the 3 finished are kept" in message
    folder = next((tmp_path / "atlas" / MODEL).glob("corpus-*"))
    assert sorted(p.name for p in (folder / "shards").iterdir()) == ["00000.npz", "00002.npz", "00003.npz"]
    assert not (folder / "atlas.npz").exists()


# --------------------------------------------------------------------------- engines and faults


@pytest.mark.slow
def test_one_worker_two_pool_workers_and_ray_give_one_atlas(tmp_path):
    serial = run(tmp_path)
    pool = run(tmp_path, workers=2, force=True)
    assert pool.computed == 6 and pool.atlas.source["engine"] == "pool"
    assert pool.atlas.source["processes"] == 2
    assert_same_atlas(serial, pool, exact=True)
    import ray

    assert S.start_ray(None, 2), "a local Ray of two CPUs (dashboard off)"
    try:
        assert ray.cluster_resources()["CPU"] == 2
        ray_run = run(tmp_path, engine="ray", workers=2, force=True)
        assert ray_run.atlas.source["engine"] == "ray" and ray_run.computed == 6
        assert ray_run.atlas.source["processes"] <= 2, "the model is loaded once per worker process"
        assert_same_atlas(serial, ray_run, exact=True)
        # a Ray worker killed mid-run: its task is retried (max_retries) and the atlas is the same
        killed: list[int] = []

        def kill_a_worker(done: int, total: int) -> None:
            shard_files = sorted((tmp_path / "atlas").glob("*/corpus-*/shards/*.npz"), key=os.path.getmtime)
            if done and not killed and shard_files:
                pid = S.read_shard(shard_files[-1])[0]["pid"]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

        again = run(tmp_path, engine="ray", workers=2, force=True, progress=kill_a_worker)
        assert killed and again.computed == 6
        assert_same_atlas(serial, again, exact=True)
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_the_pool_works_after_a_page_test_left_its_script_as_main(tmp_path, monkeypatch):
    """Streamlit's script runner (an AppTest's too) makes its page script ``__main__`` and leaves it so; a
    spawned pool worker would run that script again and die, and every shard was lost (issue 49's CI)."""
    from streamlit.testing.v1 import AppTest

    def page():
        import streamlit as st

        st.write("a page")

    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])  # put back afterwards
    assert not AppTest.from_function(page).run().exception
    assert getattr(sys.modules["__main__"], "__file__", None), "the page script is __main__ now"
    corpus = C.read_corpus(write_corpus(tmp_path, prompts()[:4]))
    pooled = S.run_corpus(bundle(), S.ModelSpec(name=MODEL), corpus, shard_size=2, workers=2)
    assert pooled.computed == 2 and pooled.atlas.source["engine"] == "pool"
    serial = S.run_corpus(bundle(), S.ModelSpec(name=MODEL), corpus, shard_size=2, force=True)
    assert_same_atlas(serial, pooled, exact=True)


@pytest.mark.slow
def test_a_pool_worker_killed_mid_run_loses_only_its_shards(tmp_path):
    killed: list[int] = []

    def kill_a_worker(done: int, total: int) -> None:
        """Kill the pool worker that computed the shard just written (it has more shards to do)."""
        if done and not killed:
            newest = max((tmp_path / "atlas").glob("*/corpus-*/shards/*.npz"), key=os.path.getmtime)
            pid = S.read_shard(newest)[0]["pid"]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    result = run(tmp_path, workers=2, shard_size=2, progress=kill_a_worker)
    assert killed and result.computed == 12
    # the shards the dead worker's pool lost went to a fresh pool: more than two processes computed them
    assert result.atlas.source["processes"] > 2
    assert_same_atlas(run(tmp_path, shard_size=2, force=True), result, exact=True)


@pytest.mark.slow
@pytest.mark.e2e
def test_a_killed_job_run_again_finishes_only_the_missing_shards(tmp_path, capsys):
    many = prompts(120)  # shards of one prompt: the kill lands long before the last
    path = write_corpus(tmp_path, many)
    args = ["atlas", "--model", MODEL, "--corpus", str(path), "--shard-size", "1", "--workers", "2",
            "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    job = subprocess.Popen([sys.executable, "-m", "model", *args], cwd=REPO_ROOT, env=env,
                           start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    shards = tmp_path / "atlas" / MODEL
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and job.poll() is None:
            if len(list(shards.glob("corpus-*/shards/*.npz"))) >= 2:
                break
            time.sleep(0.05)
        os.killpg(job.pid, signal.SIGKILL)  # the job and its workers, mid-run
    finally:
        job.wait(60)
    kept = len(list(shards.glob("corpus-*/shards/*.npz")))
    job_err = job.stderr.read().decode()[-500:]
    assert 2 <= kept < 120, f"killed after {kept} of 120 shards (the job: {job_err})"
    assert main(args) == 0
    err = capsys.readouterr().err
    assert f"{120 - kept} shards computed, {kept} read back" in err
    (folder,) = shards.glob("corpus-*")
    resumed = S.CorpusRun(S.load_atlas(folder / "atlas.npz"), S.load_detectors(folder / "detectors.npz"),
                          folder, 0, 0, True)
    serial = S.run_corpus(bundle(), S.ModelSpec(name=MODEL), C.read_corpus(path), shard_size=1, force=True)
    assert_same_atlas(serial, resumed, exact=True)


# --------------------------------------------------------------------------- the command line


def test_the_command_prints_the_atlas_and_the_detectors_of_a_corpus(tmp_path, capsys):
    path = write_corpus(tmp_path, prompts())
    assert main(["atlas", "--model", MODEL, "--corpus", str(path), "--sentences", "10", "--seed", "3",
                 "--shard-size", "4", "--quiet"]) == 0
    captured = capsys.readouterr()
    atlas_part, detector_part = captured.out.split("\n\n")
    assert len(atlas_part.splitlines()) == 1 + 2 * 4
    header, *rows = detector_part.strip().splitlines()
    assert header.split("\t") == ["detector kind", "layer", "head", "previous", "first", "duplicate",
                                  "probe_induction", "probe_copying"]
    sample = C.corpus_dataset(C.read_corpus(path), 10, 3)
    direct = D._run(bundle(), sample.texts, D.ON_ANY_INPUT)
    for row in rows:
        kind, layer, head, previous, *_ = row.split("\t")
        assert kind == "decoder"
        assert float(previous) == pytest.approx(direct.scores["previous"][int(layer), int(head)], abs=1e-3)
    assert "corpus corpus.txt: 10 of 24 prompts, sampled with seed 3" in captured.err
    assert "3 shards of 4 on local (1 workers)" in captured.err
    assert main(["atlas", "--model", MODEL, "--corpus", str(tmp_path / "none.txt")]) == 2
    assert "corpus file not found" in capsys.readouterr().err
    assert main(["atlas", "--model", MODEL, "--workers", "2"]) == 2
    assert "give it with --corpus FILE" in capsys.readouterr().err
