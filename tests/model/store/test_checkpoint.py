"""Checkpoint folders (model/store/formats/own.py): round trips, float16 shipping, tied weights, and every
way a folder can be broken or hostile -> CheckpointError naming the file at fault."""

from __future__ import annotations

import json
import pickle
import random
import shutil
import zipfile
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from model.data.batches import pad_batch
from model.data.tasks import SyntheticTask
from model.network.config import ModelConfig
from model.network.transformer import Transformer
from model.store.formats.own import load_checkpoint, save_checkpoint
from model.store.problems import CheckpointError
from model.store.registry import load_model

WEIGHTS = "model.safetensors"


def small_config(**overrides) -> ModelConfig:
    # vocab 30 = the synthetic tasks' char tokenizer (4 specials + 26 letters)
    base = dict(vocab_size=30, d_model=32, n_heads=4, d_ff=64, n_enc_layers=2, n_dec_layers=2, dropout=0.0,
                max_len=16)
    base.update(overrides)
    return ModelConfig(**base)


def random_model(seed: int = 0, **overrides) -> Transformer:
    torch.manual_seed(seed)
    model = Transformer(small_config(**overrides)).eval()
    # Spread the weights a little so logits are not all near zero (a fresh init is nearly uniform).
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    return model


def batch(task: SyntheticTask, n: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded (src, decoder input) of n test examples."""
    pairs = task.examples("test", n)
    src = pad_batch([s for s, _ in pairs], 0)
    tgt = pad_batch([t[:-1] for _, t in pairs], 0)
    return src, tgt


@pytest.fixture
def saved(tmp_path: Path):
    """A tiny random model saved to tmp_path/ckpt: (directory, model, task)."""
    task = SyntheticTask("reverse")
    model = random_model()
    directory = tmp_path / "ckpt"
    save_checkpoint(directory, model, task, info={"step": 7, "note": "x"}, history=[{"step": 1, "loss": 2.5}],
                    metrics={"results": {"task": {"exact_match": 0.5}}})
    return directory, model, task


# ---------------------------------------------------------------- round trips


def test_round_trip_gives_identical_logits(saved):
    directory, model, task = saved
    bundle = load_checkpoint(directory)
    assert bundle.cfg == model.cfg
    assert bundle.task.to_dict() == task.to_dict()
    assert bundle.info["step"] == 7 and bundle.info["note"] == "x"
    assert bundle.history == [{"step": 1, "loss": 2.5}]
    assert bundle.metrics == {"results": {"task": {"exact_match": 0.5}}}
    assert bundle.name == "ckpt"
    assert not bundle.model.training
    src, tgt = batch(task)
    with torch.no_grad():
        expected, got = model(src, tgt), bundle.model(src, tgt)
    assert torch.equal(expected, got)
    # Every parameter came back bit for bit (not just the ones that influence this batch).
    for (name, a), (_, b) in zip(model.state_dict().items(), bundle.model.state_dict().items(), strict=True):
        assert torch.equal(a, b), name


def test_round_trip_untied_and_other_architecture(tmp_path):
    """Learned positions, RMSNorm, Post-LN, GQA, untied output projection: all survive a round trip."""
    task = SyntheticTask("copy")
    model = random_model(
        seed=3,
        tie_embeddings=False,
        pos_encoding="learned",
        norm="rmsnorm",
        norm_first=False,
        n_kv_heads=2,
        activation="gelu",
    )
    save_checkpoint(tmp_path / "c", model, task)
    with safe_open(str(tmp_path / "c" / WEIGHTS), framework="pt") as f:
        assert "unembed.weight" in set(f.keys())
    bundle = load_checkpoint(tmp_path / "c")
    assert bundle.model.unembed.weight is not bundle.model.token_embed.weight
    src, tgt = batch(task)
    with torch.no_grad():
        assert torch.equal(model(src, tgt), bundle.model(src, tgt))


def test_float16_shipping_of_a_random_model(tmp_path, saved):
    _, model, task = saved
    save_checkpoint(tmp_path / "half", model, task, dtype=torch.float16)
    on_disk = load_file(str(tmp_path / "half" / WEIGHTS))
    assert {v.dtype for v in on_disk.values()} == {torch.float16}
    bundle = load_checkpoint(tmp_path / "half")
    assert {p.dtype for p in bundle.model.parameters()} == {torch.float32}
    diffs = [
        (a - b).abs().max().item() for a, b in zip(model.parameters(), bundle.model.parameters(), strict=True)
    ]
    assert max(diffs) < 1e-2
    assert max(diffs) > 0  # really rounded: the file is half precision, not float32 in disguise


def test_float16_shipping_keeps_a_trained_models_outputs(tmp_path):
    """The shipped reverse model saved as float16: same argmax at every target position of a batch."""
    full = load_model("reverse")
    save_checkpoint(tmp_path / "half", full.model, full.task, dtype=torch.float16)
    half = load_checkpoint(tmp_path / "half")
    assert (tmp_path / "half" / WEIGHTS).stat().st_size < 0.6 * (full.directory / WEIGHTS).stat().st_size
    for a, b in zip(full.model.parameters(), half.model.parameters(), strict=True):
        assert b.dtype == torch.float32
        assert (a - b).abs().max().item() < 1e-2
    src, tgt = batch(full.task, 64)
    with torch.no_grad():
        la, lb = full.model(src, tgt), half.model(src, tgt)
    real = tgt != 0
    assert torch.equal(la.argmax(-1)[real], lb.argmax(-1)[real])


# ---------------------------------------------------------------- tied embeddings


def test_tied_embeddings_are_saved_once_and_tied_again_on_load(saved):
    directory, model, _ = saved
    assert model.cfg.tie_embeddings
    with safe_open(str(directory / WEIGHTS), framework="pt") as f:
        keys = set(f.keys())
    assert "token_embed.weight" in keys
    assert "unembed.weight" not in keys
    loaded = load_checkpoint(directory).model
    assert loaded.unembed.weight is loaded.token_embed.weight
    assert loaded.unembed.weight.data_ptr() == loaded.token_embed.weight.data_ptr()
    assert torch.equal(loaded.unembed.weight, model.token_embed.weight)


# ---------------------------------------------------------------- broken folders


def _edit_json(name: str, edit):
    def corrupt(d: Path) -> None:
        data = json.loads((d / name).read_text(encoding="utf-8"))
        edit(data)
        (d / name).write_text(json.dumps(data), encoding="utf-8")

    return corrupt


def _edit_weights(edit):
    def corrupt(d: Path) -> None:
        state = load_file(str(d / WEIGHTS))
        edit(state)
        save_file(state, str(d / WEIGHTS))

    return corrupt


def _truncate(keep):
    def corrupt(d: Path) -> None:
        data = (d / WEIGHTS).read_bytes()
        (d / WEIGHTS).write_bytes(data[: keep(len(data))])

    return corrupt


def _set_nan(state):
    t = state["decoder.blocks.1.mlp.W_in.weight"].clone()
    t[3, 5] = float("nan")
    state["decoder.blocks.1.mlp.W_in.weight"] = t


def _set_inf(state):
    t = state["encoder.blocks.0.attn.W_q.bias"].clone()
    t[0] = float("inf")
    state["encoder.blocks.0.attn.W_q.bias"] = t


def _bad_model_config(config):
    config["model"]["d_model"] = 30  # not divisible by n_heads = 4


BROKEN = {
    # case: (how to break the folder, text the message must contain)
    "missing config.json": (lambda d: (d / "config.json").unlink(), "config.json"),
    "config.json not JSON": (
        lambda d: (d / "config.json").write_text('{"model": {', encoding="utf-8"),
        "config.json",
    ),
    "config.json binary": (lambda d: (d / "config.json").write_bytes(b"\xff\xfe\x00\x01"), "config.json"),
    "config.json without model": (_edit_json("config.json", lambda c: c.pop("model")), "config.json"),
    "config.json is a list": (
        lambda d: (d / "config.json").write_text("[1, 2]", encoding="utf-8"),
        "config.json",
    ),
    "invalid model config": (_edit_json("config.json", _bad_model_config), "config.json"),
    "unknown model config field": (
        _edit_json("config.json", lambda c: c["model"].update(n_layers=3)),
        "config.json",
    ),
    "unknown task": (_edit_json("config.json", lambda c: c["task"].update(kind="shuffle")), "shuffle"),
    "missing weights": (lambda d: (d / WEIGHTS).unlink(), WEIGHTS),
    "empty weights": (lambda d: (d / WEIGHTS).write_bytes(b""), WEIGHTS),
    "weights truncated to its header": (_truncate(lambda n: 40), WEIGHTS),
    "weights truncated in the middle": (_truncate(lambda n: n // 2), WEIGHTS),
    "weights missing the last byte": (_truncate(lambda n: n - 1), WEIGHTS),
    "random bytes": (lambda d: (d / WEIGHTS).write_bytes(random.Random(0).randbytes(50_000)), WEIGHTS),
    "weights is a folder": (lambda d: ((d / WEIGHTS).unlink(), (d / WEIGHTS).mkdir()), WEIGHTS),
    "missing tensor": (
        _edit_weights(lambda s: s.pop("decoder.blocks.0.cross_attn.W_k.weight")),
        "decoder.blocks.0.cross_attn.W_k.weight",
    ),
    "unexpected tensor": (_edit_weights(lambda s: s.update(extra=torch.zeros(3))), "extra"),
    "wrong shape": (
        _edit_weights(lambda s: s.update({"encoder.blocks.1.mlp.W_out.weight": torch.zeros(32, 65)})),
        "encoder.blocks.1.mlp.W_out.weight",
    ),
    "transposed tensor": (
        _edit_weights(
            lambda s: s.update(
                {"encoder.blocks.1.mlp.W_out.weight": s["encoder.blocks.1.mlp.W_out.weight"].T.contiguous()}
            )
        ),
        "encoder.blocks.1.mlp.W_out.weight",
    ),
    "NaN in a tensor": (_edit_weights(_set_nan), "decoder.blocks.1.mlp.W_in.weight"),
    "inf in a tensor": (_edit_weights(_set_inf), "encoder.blocks.0.attn.W_q.bias"),
    "tokenizer not JSON": (
        lambda d: (d / "tokenizer.json").write_text('{"type": "char", ', encoding="utf-8"),
        "tokenizer.json",
    ),
    "tokenizer binary": (lambda d: (d / "tokenizer.json").write_bytes(b"\x80\x81\x82"), "tokenizer.json"),
    "tokenizer wrong type": (
        lambda d: (d / "tokenizer.json").write_text('{"type": "bpe"}', encoding="utf-8"),
        "tokenizer.json",
    ),
    "tokenizer is a list": (
        lambda d: (d / "tokenizer.json").write_text("[]", encoding="utf-8"),
        "tokenizer.json",
    ),
    "tokenizer repeated letters": (
        lambda d: (d / "tokenizer.json").write_text('{"type": "char", "alphabet": "aab"}', encoding="utf-8"),
        "tokenizer.json",
    ),
    "missing tokenizer": (lambda d: (d / "tokenizer.json").unlink(), "tokenizer.json"),
    "metrics.json not JSON": (
        lambda d: (d / "metrics.json").write_text("{", encoding="utf-8"),
        "metrics.json",
    ),
    "history.json not JSON": (
        lambda d: (d / "history.json").write_text("[{", encoding="utf-8"),
        "history.json",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_checkpoint_raises_checkpoint_error_naming_the_file(saved, case):
    directory, _, _ = saved
    corrupt, expected_text = BROKEN[case]
    corrupt(directory)
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(directory)
    assert expected_text in str(err.value)


def test_missing_folder(tmp_path):
    with pytest.raises(CheckpointError, match="no_such_model"):
        load_checkpoint(tmp_path / "no_such_model")


def test_a_file_instead_of_a_folder(tmp_path):
    (tmp_path / "flat").write_text("x")
    with pytest.raises(CheckpointError, match="flat"):
        load_checkpoint(tmp_path / "flat")


def test_a_healthy_copy_still_loads(saved):
    """Control for the parametrized cases above: the fixture itself is loadable."""
    directory, _, _ = saved
    assert load_checkpoint(directory).model.num_parameters() > 0


# Mistyped values, as a hand-edited config.json may hold: each must be a CheckpointError naming the file.
MISTYPED_CONFIGS = {
    "task is a string": _edit_json("config.json", lambda c: c.update(task="reverse")),
    "task is null": _edit_json("config.json", lambda c: c.update(task=None)),
    "task kind is a list": _edit_json("config.json", lambda c: c["task"].update(kind=["reverse"])),
    "d_model is a float": _edit_json("config.json", lambda c: c["model"].update(d_model=32.0)),
    "n_enc_layers is a float": _edit_json("config.json", lambda c: c["model"].update(n_enc_layers=1.5)),
    "max_len is a bool": _edit_json("config.json", lambda c: c["model"].update(max_len=True)),
}


@pytest.mark.parametrize("case", list(MISTYPED_CONFIGS))
def test_mistyped_config_raises_checkpoint_error(saved, case):
    directory, _, _ = saved
    MISTYPED_CONFIGS[case](directory)
    with pytest.raises(CheckpointError, match="config.json"):
        load_checkpoint(directory)


def test_tokenizer_with_another_alphabet_names_the_tokenizer_file(saved):
    directory, _, _ = saved
    (directory / "tokenizer.json").write_text('{"type": "char", "alphabet": "abc"}', encoding="utf-8")
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(directory)
    assert "tokenizer.json" in str(err.value)


def test_vocab_smaller_than_tokenizer_is_rejected(tmp_path):
    task = SyntheticTask("reverse")
    save_checkpoint(tmp_path / "v", Transformer(small_config(vocab_size=10)), task)
    with pytest.raises(CheckpointError, match="tokenizer.json"):
        load_checkpoint(tmp_path / "v")


# ---------------------------------------------------------------- hostile files


class _CreatesMarker:
    """Unpickling this opens (creates) a file: stands in for arbitrary code execution."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _write_pickle(path: Path, marker: Path) -> None:
    path.write_bytes(pickle.dumps(_CreatesMarker(marker)))


def _write_torch_save(path: Path, marker: Path) -> None:
    with open(path, "wb") as f:
        torch.save({"token_embed.weight": _CreatesMarker(marker)}, f)


@pytest.mark.parametrize("write", [_write_pickle, _write_torch_save], ids=["pickle", "torch.save"])
def test_pickle_disguised_as_safetensors_is_never_unpickled(saved, tmp_path, write):
    directory, _, _ = saved
    # Control: the payload really is hostile when unpickled.
    control = tmp_path / "control_marker"
    write(tmp_path / "control.bin", control)
    if write is _write_pickle:
        pickle.loads((tmp_path / "control.bin").read_bytes())
    else:
        # torch.save writes a zip whose data.pkl is a plain pickle: unpickle it directly.
        with zipfile.ZipFile(tmp_path / "control.bin") as archive:
            pickle.loads(archive.read(next(n for n in archive.namelist() if n.endswith("data.pkl"))))
    assert control.exists()

    marker = tmp_path / "pwned_marker"
    write(directory / WEIGHTS, marker)
    with pytest.raises(CheckpointError, match=WEIGHTS):
        load_checkpoint(directory)
    assert not marker.exists()


def test_saving_is_atomic_about_temporary_files(saved):
    directory, _, _ = saved
    assert not list(directory.glob("*.tmp"))
    assert sorted(p.name for p in directory.iterdir()) == sorted(
        ["config.json", "history.json", "metrics.json", WEIGHTS, "tokenizer.json"])


def test_shipped_models_load_from_a_copied_folder(tmp_path):
    """A shipped folder copied elsewhere loads the same, with its name taken from the folder."""
    src = load_model("copy")
    shutil.copytree(src.directory, tmp_path / "mine")
    bundle = load_checkpoint(tmp_path / "mine")
    assert bundle.name == "mine"
    for a, b in zip(src.model.state_dict().values(), bundle.model.state_dict().values(), strict=True):
        assert torch.equal(a, b)
