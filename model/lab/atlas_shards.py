"""The head atlas and the head detectors over your own corpus, cut into shards that reduce exactly.

    run = run_corpus(bundle, ModelSpec(name="smollm2"), read_corpus("prompts.txt"), n=10_000, workers=2)
    run = run_corpus(bundle, spec, corpus, engine="ray", address="auto")     # a running Ray cluster
    run.atlas, run.detectors, run.computed, run.reused

The sampled prompts are cut into shards of ``shard_size`` prompts, in order. A shard's result is a partial
statistic: per attention kind the sums and counts of every statistic, the Jensen–Shannon sums and rows,
each of its prompts' mean max weight by the prompt's id (the top-k examples are read from them), and the
detectors' sums and counts; adding the shards' sums in shard order gives the same atlas however many
workers computed them. The shards do not depend on the number of workers, so 1 worker, N pool workers and
a Ray cluster give one result (tested).

Engines: ``workers=1`` runs the shards here, on the loaded model; ``workers=N`` on a local process pool
(spawn: a fresh interpreter each, the model loaded once per process); ``engine="ray"`` submits each shard
as a Ray task (``address`` None starts a local Ray, ``"auto"`` joins a running cluster), the model
loaded once per Ray worker process and kept there. A worker returns the shard file's bytes (an .npz, no
pickled objects); this process writes each one atomically into the run's folder as it arrives:

    runs/atlas/<model>/corpus-<key>/run.json          what the run is (corpus, sample, shards)
    runs/atlas/<model>/corpus-<key>/shards/00003.npz  one finished shard
    runs/atlas/<model>/corpus-<key>/atlas.npz         the reduced atlas (the page reads it)
    runs/atlas/<model>/corpus-<key>/detectors.npz     the detectors over the corpus and on the probes

Running the same command again after a kill computes only the shards missing from the folder. A pool
whose worker died retries the shards it lost once on a fresh pool; Ray retries a task whose worker died
(``max_retries``). A shard whose input is bad fails alone with its reason; the others finish and are kept.

A language model's prompts are read, not continued: one hooked pass over each prompt (no decoding). Per
prompt that is what the app's ``analyze(..., max_new=0)`` reads (the one-pass reading; the reduction test
compares them); a shard reads its prompts ``batch_size`` at a time in right-padded batches instead, which
is faster (SmolLM2, 16 prompts, once on a loaded 2-core machine: 17 s against 25 s) and moves the figures
only by float32 rounding (~1e-6).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import socket
import sys
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..core.files import atomic_write, atomic_write_json
from ..store.bundle import Bundle
from . import entry
from .atlas import _run_dataset, make_atlas, task_kind_of
from .atlas_corpus import Corpus, corpus_dataset
from .atlas_files import ATLAS_VERSION, REPO_ROOT, atlas_dir, load_atlas, save_atlas
from .atlas_files import weights_key as _weights_key  # an @entry the app serves from atlas_files
from .atlas_result import STATS, Atlas, AtlasError, Dataset
from .atlas_stats import RunningSums
from .detectors import (
    ON_ANY_INPUT,
    ROLES,
    THRESHOLDS,
    DetectorScores,
    _Sums,
    add_pattern_rows,
    positions_of,
    self_kind,
)
from .detectors import probe_scores as _probe_scores

#: Prompts per shard (a shard is the unit of work, of the progress bar and of a resumed run).
DEFAULT_SHARD_SIZE = 32
#: Prompts per batch inside a shard (the batch's patterns, [B, layer, head, q, k] float64, are held at once).
SHARD_BATCH = 8
#: Bump when a shard file's content changes: older shards are recomputed.
SHARD_VERSION = 1
ENGINES = ("local", "ray")


@dataclass(frozen=True)
class ModelSpec:
    """How a worker process loads the model: a model name, or a model folder (``--model-dir``)."""

    name: str | None = None
    model_dir: str | None = None

    def load(self) -> Bundle:
        """The model, loaded as the command line loads it (a worker's copy)."""
        if self.model_dir is None:
            from ..store.registry import load_model
            from ..store.sources.hf_cache import is_hub_name, load_hub_model

            return load_hub_model(self.name) if is_hub_name(self.name) else load_model(str(self.name))
        from ..store.user_folders import load_user_model

        path = Path(self.model_dir).expanduser()
        name = path.resolve().name
        if name.lower().endswith(".gguf"):
            name = name[: -len(".gguf")]
        return load_user_model(path, name=name, display=str(path))


@dataclass(frozen=True)
class ShardTask:
    """One shard to compute (plain values: what a worker is sent)."""

    key: str
    index: int
    start: int  # position of its first prompt in the sample
    texts: tuple[str, ...]
    threads: int = 1
    batch_size: int = SHARD_BATCH


@dataclass(frozen=True)
class CorpusDetectors:
    """The detectors over a corpus: previous / first / duplicate over every prompt, every role on the
    probes."""

    corpus: DetectorScores
    probes: DetectorScores


@dataclass(frozen=True)
class CorpusRun:
    atlas: Atlas
    detectors: CorpusDetectors
    folder: Path
    computed: int  # shards computed by this call
    reused: int  # shards read back from the folder
    cached: bool  # the whole atlas was read from the folder


# --------------------------------------------------------------------------- keys and folders


def corpus_key(weights: str, corpus: Corpus, n: int | None, seed: int, shard_size: int) -> str:
    """The run's key: the atlas version, the weights, the corpus file's hash, the sample, the shard size."""
    h = hashlib.sha256()
    h.update(f"atlas-corpus-v{ATLAS_VERSION}.{SHARD_VERSION}\n{weights}\n{corpus.sha256}\n".encode())
    h.update(f"{n}\n{seed}\n{shard_size}\n".encode())
    return h.hexdigest()[:24]


def run_folder(model: str, key: str) -> Path:
    return atlas_dir() / model / f"corpus-{key}"


def corpus_runs(model: str) -> list[Path]:
    """The corpus atlases of ``model`` in runs/atlas/ (finished runs, also ones copied from elsewhere)."""
    folder = atlas_dir() / model
    if not folder.is_dir():
        return []
    return sorted(p / "atlas.npz" for p in folder.glob("corpus-*") if (p / "atlas.npz").is_file())


def shard_bounds(total: int, shard_size: int) -> list[tuple[int, int]]:
    return [(s, min(s + shard_size, total)) for s in range(0, total, shard_size)]


# --------------------------------------------------------------------------- one shard


def _npz_bytes(arrays: dict[str, np.ndarray], meta: dict) -> bytes:
    arrays = dict(arrays)
    arrays["meta"] = np.array(json.dumps(meta, ensure_ascii=False))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def compute_shard(bundle: Bundle, task: ShardTask) -> bytes:
    """One shard's partial statistics as the bytes of its .npz file (see the module docstring); a shard
    whose input is bad comes back with its reason (``meta["error"]``) instead of raising."""
    started = time.perf_counter()
    meta = {"version": SHARD_VERSION, "key": task.key, "index": task.index, "start": task.start,
            "n": len(task.texts), "pid": os.getpid(), "host": socket.gethostname(), "error": None}
    try:
        arrays, extra = _shard_arrays(bundle, task)
    except Exception as e:  # the shard fails alone; its reason travels back in one line
        meta["error"] = (str(e).splitlines() or [type(e).__name__])[0]
        return _npz_bytes({}, meta)
    meta.update(extra, seconds=time.perf_counter() - started)
    return _npz_bytes(arrays, meta)


def _shard_arrays(bundle: Bundle, task: ShardTask) -> tuple[dict[str, np.ndarray], dict]:
    import torch

    torch.set_num_threads(task.threads)
    cfg = bundle.model.cfg
    if cfg.encoder_only:
        raise AtlasError("an encoder-only model has no atlas over a corpus yet")
    counts = {k: n for k, n in bundle.model.attention_layer_counts().items() if n}
    n = len(task.texts)
    sums = {k: RunningSums(layers, cfg.n_heads, n) for k, layers in counts.items()}
    det_kind = self_kind(bundle)
    from ..network.kinds import get_kind

    det_side = get_kind(det_kind).queries
    det = _Sums((counts[det_kind], cfg.n_heads))

    def on_batch(patterns: dict[str, np.ndarray], side_ids: dict[str, list[list[int]]]) -> None:
        pattern = patterns[det_kind]  # [B, L, H, q, k]
        for b, ids in enumerate(side_ids[det_side]):
            m = len(ids)
            pos = positions_of(ids)
            for layer in range(pattern.shape[1]):
                add_pattern_rows(det, layer, slice(0, m), pattern[b, layer, :, :m, :m], pos)

    data = Dataset(list(task.texts), [None] * n, [""] * n, "shard", n)
    outputs = _run_dataset(bundle, data, sums, task_kind_of(bundle), task.batch_size, None, read_only=True,
                           on_batch=on_batch)
    arrays: dict[str, np.ndarray] = {}
    js_rows = {}
    for kind, s in sums.items():
        for stat in STATS:
            arrays[f"sum/{kind}/{stat}"] = s.sums[stat]
            arrays[f"count/{kind}/{stat}"] = s.counts[stat]
        arrays[f"js/{kind}"] = s.js_sum
        arrays[f"per_sentence/{kind}"] = s.per_sentence
        js_rows[kind] = s.js_rows
    for role in ON_ANY_INPUT:
        arrays[f"det_sum/{role}"] = det.total.get(role, np.zeros(det.shape))
        arrays[f"det_count/{role}"] = det.count.get(role, np.zeros(det.shape))
    return arrays, {"outputs": outputs, "js_rows": js_rows, "layer_counts": counts, "detector_kind": det_kind}


def read_shard(data: bytes | Path) -> tuple[dict, dict[str, np.ndarray]]:
    """(meta, arrays) of a shard file; ValueError when it is not one."""
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    with np.load(source, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        arrays = {k: z[k] for k in z.files if k != "meta"}
    if meta.get("version") != SHARD_VERSION:
        raise ValueError("a shard of another version")
    return meta, arrays


# --------------------------------------------------------------------------- workers (pool and Ray)

#: The model each worker process loaded, by its spec: loaded once per process, not per shard.
_LOADED: dict[ModelSpec, Bundle] = {}


def _worker_bundle(spec: ModelSpec) -> Bundle:
    if spec not in _LOADED:
        _LOADED[spec] = spec.load()
    return _LOADED[spec]


def worker_shard(spec: ModelSpec, task: ShardTask) -> bytes:
    """A worker's entry (pool or Ray): the shard computed on this process's copy of the model."""
    return compute_shard(_worker_bundle(spec), task)


#: Seconds a pool worker waits for the others to start before it takes a shard (then it goes on alone).
POOL_START_WAIT = 120.0


def _pool_init(threads: int, started) -> None:
    """Each pool worker: its torch threads, then a wait until every worker has started (``started``, a
    barrier of the pool's size), so the first one up does not take every shard of a short corpus while
    the others are still importing torch."""
    import threading

    import torch

    torch.set_num_threads(threads)
    try:
        started.wait(POOL_START_WAIT)
    except threading.BrokenBarrierError:  # a worker that never started: the others go on without it
        pass


def _run_pool(spec: ModelSpec, tasks: list[ShardTask], workers: int, threads: int,
              deliver: Callable[[ShardTask, bytes], None]) -> list[tuple[ShardTask, str]]:
    """Every task on a spawn process pool; a pool broken by a dead worker is started again once for the
    shards it lost. (task, reason) of the shards still lost."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context("spawn")
    todo, lost = list(tasks), []
    for _attempt in range(2):
        lost = []
        size = min(workers, len(todo))
        pool = ProcessPoolExecutor(max_workers=size, mp_context=context, initializer=_pool_init,
                                   initargs=(threads, context.Barrier(size)))
        try:
            with _no_main_script():  # the workers start on submit
                futures = {pool.submit(worker_shard, spec, t): t for t in todo}
            for future in as_completed(futures):
                task = futures[future]
                try:
                    data = future.result()
                except Exception as e:  # BrokenProcessPool: its worker died with the shard
                    reason = (str(e).splitlines() or [type(e).__name__])[0]
                    lost.append((task, f"{reason}{_exit_codes(pool)}"))
                    continue
                deliver(task, data)
        except BaseException:
            # Interrupted (Ctrl-C, an error here): the shards not started are dropped, not waited for.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        todo = [t for t, _ in lost]
        if not todo:
            break
    return lost


@contextlib.contextmanager
def _no_main_script() -> Iterator[None]:
    """While the pool's workers start, this process's ``__main__`` is an empty module.

    A spawned worker first runs its parent's ``__main__`` file again (as ``__mp_main__``) unless it was
    started with ``-m``. Under Streamlit (the app, and every AppTest of the test suite, which leaves it so)
    ``__main__`` is the page script Streamlit's script runner put there; run again outside a script run it
    raises, and every worker died with "terminated abruptly" (issue 49: the CI's pool tests, run after a
    page test in the same process). A worker needs nothing from ``__main__``: what it runs and what it is
    sent live in this module. The swap lasts while ``submit`` starts the processes (spawn: in this thread).
    """
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is None:
            sys.modules.pop("__main__", None)
        else:
            sys.modules["__main__"] = main


def _exit_codes(pool) -> str:
    """How the pool's dead workers ended (" (worker exit codes: -9)"; negative: the signal), to tell a
    kill from a crash; empty when the pool does not say."""
    processes = getattr(pool, "_processes", None) or {}  # the executor keeps no public list of them
    codes = sorted({p.exitcode for p in list(processes.values()) if p.exitcode not in (None, 0)})
    return f" (worker exit codes: {', '.join(map(str, codes))})" if codes else ""


def _ray_shard(spec: ModelSpec, task: ShardTask) -> bytes:
    return worker_shard(spec, task)


def start_ray(address: str | None, workers: int):
    """ray.init for a run: ``address`` None starts a local Ray of ``workers`` CPUs (dashboard off), any
    other (``auto``, ``ray://host:10001``) joins that cluster. Returns whether this call started it."""
    try:
        import ray
    except ImportError:
        raise AtlasError("--ray needs Ray: pip install 'attention-lens[cluster]' (or: pip install ray)") \
            from None
    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    else:
        # The local workers import this checkout's packages, as this process does.
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": str(REPO_ROOT)}})
    return True


def _run_ray(spec: ModelSpec, tasks: list[ShardTask], address: str | None, workers: int,
             deliver: Callable[[ShardTask, bytes], None]) -> list[tuple[ShardTask, str]]:
    import ray

    started = start_ray(address, workers)
    try:
        remote = ray.remote(num_cpus=1, max_retries=3)(_ray_shard)
        pending = {remote.remote(spec, t): t for t in tasks}
        lost = []
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            task = pending.pop(done[0])
            try:
                data = ray.get(done[0])
            except Exception as e:  # the task's retries are spent (its worker died each time)
                lost.append((task, (str(e).splitlines() or [type(e).__name__])[0]))
                continue
            deliver(task, data)
        return lost
    finally:
        if started:
            ray.shutdown()


# --------------------------------------------------------------------------- the run


def run_corpus(bundle: Bundle, spec: ModelSpec, corpus: Corpus, n: int | None = None, seed: int = 0, *,
               workers: int = 1, engine: str = "local", address: str | None = None,
               shard_size: int = DEFAULT_SHARD_SIZE, threads: int = 1, force: bool = False,
               progress: Callable[[int, int], None] | None = None,
               batch_size: int = SHARD_BATCH) -> CorpusRun:
    """The atlas and the detectors of ``bundle`` over ``corpus`` (sampled: ``n`` prompts, ``seed``).

    Finished shards are kept in the run's folder; what is there is not computed again. ``progress(done,
    total)`` counts prompts. AtlasError (one line) when shards fail or are lost: the finished ones stay.
    """
    if engine not in ENGINES:
        raise AtlasError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
    if shard_size < 1 or workers < 1:
        raise AtlasError("the shard size and the number of workers must be at least 1")
    started = time.perf_counter()
    dataset = corpus_dataset(corpus, n, seed)
    weights = _weights_key(bundle)
    key = corpus_key(weights, corpus, n, seed, shard_size)
    folder = run_folder(bundle.name, key)
    if not force:
        done = _finished(folder, key)
        if done is not None:
            return CorpusRun(*done, folder=folder, computed=0, reused=0, cached=True)
    shards_dir = folder / "shards"
    shards_dir.mkdir(parents=True, exist_ok=True)
    bounds = shard_bounds(len(dataset.texts), shard_size)
    atomic_write_json(folder / "run.json", {
        "key": key, "model": bundle.name, "corpus": corpus.name, "corpus_sha256": corpus.sha256,
        "prompts": len(corpus.texts), "sampled": len(dataset.texts), "seed": seed, "shard_size": shard_size,
        "shards": len(bounds)})
    have: dict[int, tuple[dict, dict]] = {}
    for i in range(len(bounds)):
        path = shards_dir / f"{i:05d}.npz"
        if path.is_file() and not force:
            try:
                meta, arrays = read_shard(path)
            except (OSError, ValueError, KeyError):
                continue  # a broken file is computed again
            if meta.get("key") == key and meta.get("error") is None:
                have[i] = (meta, arrays)
    reused = len(have)
    tasks = [ShardTask(key, i, a, tuple(dataset.texts[a:b]), threads, batch_size)
             for i, (a, b) in enumerate(bounds) if i not in have]
    total = len(dataset.texts)
    done_prompts = [sum(bounds[i][1] - bounds[i][0] for i in have)]
    failed: list[tuple[ShardTask, str]] = []
    if progress:
        progress(done_prompts[0], total)

    def deliver(task: ShardTask, data: bytes) -> None:
        meta, arrays = read_shard(data)
        if meta["error"] is not None:
            failed.append((task, meta["error"]))
        else:
            atomic_write(shards_dir / f"{task.index:05d}.npz", data)
            have[task.index] = (meta, arrays)
        done_prompts[0] += len(task.texts)
        if progress:
            progress(done_prompts[0], total)

    lost: list[tuple[ShardTask, str]] = []
    if tasks:
        if engine == "ray":
            lost = _run_ray(spec, tasks, address, workers, deliver)
        elif workers > 1:
            lost = _run_pool(spec, tasks, workers, threads, deliver)
        else:
            for t in tasks:
                deliver(t, compute_shard(bundle, t))
    problems = sorted(failed + lost, key=lambda x: x[0].index)
    if problems:
        first, reason = problems[0]
        a = first.start
        raise AtlasError(
            f"{len(problems)} of {len(bounds)} shards did not finish (shard {first.index}, prompts "
            f"{a}-{a + len(first.texts) - 1}: {reason}); the {len(have)} finished are kept in {folder}: "
            "run the same command again to finish the rest")
    workers_used = sorted({(m["host"], m["pid"]) for m, _ in have.values()})
    source = {
        "corpus": corpus.name, "corpus_sha256": corpus.sha256, "form": corpus.form,
        "prompts": len(corpus.texts),
        "sampled": len(dataset.texts), "seed": seed, "shard_size": shard_size, "shards": len(bounds),
        "engine": "ray" if engine == "ray" else ("pool" if workers > 1 else "local"),
        "workers": workers, "processes": len(workers_used), "hosts": len({h for h, _ in workers_used}),
        "weights": weights, "read_only": bool(bundle.cfg.decoder_only), "computed": len(tasks),
        "reused": reused,
    }
    atlas, detectors = reduce_shards(bundle, dataset, [have[i] for i in range(len(bounds))], key,
                                     time.perf_counter() - started, source)
    save_atlas(atlas, folder / "atlas.npz")
    save_detectors(detectors, folder / "detectors.npz")
    return CorpusRun(atlas, detectors, folder, computed=len(tasks), reused=reused, cached=False)


def _finished(folder: Path, key: str) -> tuple[Atlas, CorpusDetectors] | None:
    atlas = load_atlas(folder / "atlas.npz")
    detectors = load_detectors(folder / "detectors.npz")
    if atlas is None or detectors is None or atlas.key != key:
        return None
    return atlas, detectors


def reduce_shards(bundle: Bundle, dataset: Dataset, shards: list[tuple[dict, dict]], key: str, seconds: float,
                  source: dict) -> tuple[Atlas, CorpusDetectors]:
    """The exact reduction: every shard's sums and counts added in shard order, each prompt's figures put
    at its id."""
    cfg = bundle.model.cfg
    first_meta = shards[0][0]
    counts = first_meta["layer_counts"]
    total = len(dataset.texts)
    sums = {k: RunningSums(layers, cfg.n_heads, total) for k, layers in counts.items()}
    det_kind = first_meta["detector_kind"]
    det_shape = (counts[det_kind], cfg.n_heads)
    det_total = {r: np.zeros(det_shape) for r in ON_ANY_INPUT}
    det_count = {r: np.zeros(det_shape) for r in ON_ANY_INPUT}
    outputs: list[str] = [""] * total
    for meta, arrays in shards:
        a, m = meta["start"], meta["n"]
        outputs[a : a + m] = meta["outputs"]
        for kind, s in sums.items():
            for stat in STATS:
                s.sums[stat] += arrays[f"sum/{kind}/{stat}"]
                s.counts[stat] += arrays[f"count/{kind}/{stat}"]
            s.js_sum += arrays[f"js/{kind}"]
            s.js_rows += int(meta["js_rows"][kind])
            s.per_sentence[a : a + m] = arrays[f"per_sentence/{kind}"]
        for r in ON_ANY_INPUT:
            det_total[r] += arrays[f"det_sum/{r}"]
            det_count[r] += arrays[f"det_count/{r}"]
    atlas = make_atlas(bundle, dataset, sums, outputs, key, seconds, source=source)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = {r: np.where(det_count[r] > 0, det_total[r] / np.maximum(det_count[r], 1), np.nan)
                  for r in ON_ANY_INPUT}
    rows = {r: int(det_count[r][0, 0]) for r in ON_ANY_INPUT}
    corpus_scores = DetectorScores(det_kind, scores, [], [], rows, seconds)
    return atlas, CorpusDetectors(corpus_scores, _probe_scores(bundle))


# --------------------------------------------------------------------------- detectors on disk


def save_detectors(d: CorpusDetectors, path: Path) -> None:
    arrays = {f"{which}/{role}": s.scores[role] for which, s in (("corpus", d.corpus), ("probes", d.probes))
              for role in s.scores}
    meta = {which: {k: v for k, v in asdict(s).items() if k != "scores"}
            for which, s in (("corpus", d.corpus), ("probes", d.probes))}
    meta["version"] = SHARD_VERSION
    atomic_write(path, _npz_bytes(arrays, meta))


def load_detectors(path: Path) -> CorpusDetectors | None:
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            if meta.get("version") != SHARD_VERSION:
                return None
            parts = [DetectorScores(scores={r: z[f"{which}/{r}"] for r in ROLES if f"{which}/{r}" in z.files},
                                    **meta[which]) for which in ("corpus", "probes")]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return CorpusDetectors(*parts)


@entry(models=0)
def read_detectors(path: str, mtime_ns: int) -> CorpusDetectors | None:
    """:func:`load_detectors` of the file at ``path`` as of its modification time ``mtime_ns`` (the app's
    key: a file written again is read again)."""
    return load_detectors(Path(path))


def detector_rows(d: CorpusDetectors) -> list[tuple[int, int, dict[str, float]]]:
    """(layer, head, role -> score) of every head: the corpus's previous / first / duplicate, then the
    probes' induction and copying (where the model has them)."""
    layers, heads = d.corpus.scores["previous"].shape
    out = []
    for layer in range(layers):
        for head in range(heads):
            row = {r: float(d.corpus.scores[r][layer, head]) for r in ON_ANY_INPUT}
            for r in ROLES:
                if r not in ON_ANY_INPUT and r in d.probes.scores:
                    row[f"probe_{r}"] = float(d.probes.scores[r][layer, head])
            out.append((layer, head, row))
    return out


__all__ = ["CorpusDetectors", "CorpusRun", "DEFAULT_SHARD_SIZE", "ENGINES", "ModelSpec", "ShardTask",
           "THRESHOLDS",
           "compute_shard", "corpus_key", "corpus_runs", "detector_rows", "load_detectors", "read_detectors",
           "read_shard",
           "reduce_shards", "run_corpus", "run_folder", "save_detectors", "shard_bounds", "start_ray",
           "worker_shard"]
