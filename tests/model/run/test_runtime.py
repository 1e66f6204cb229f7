"""The process settings the app runs under (model/run/runtime.py), each in a fresh interpreter: they are
process-wide."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

#: Allocates, fills and frees a 6 MB tensor (a 1,024-token layer's feed-forward activation in SmolLM2)
#: 20 times and prints the minor page faults of those rounds.
REUSE = """
import json, os, resource, sys
sys.path.insert(0, {root!r})
from model.run import runtime
configured = runtime.configure_malloc() if {configure} else False
import torch
torch.ones(1536 * 1024).sum()  # the first block: the heap reaches that size once
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    x = torch.empty(1536 * 1024)
    x.fill_(1.0)
    del x
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
thp = os.environ.get("THP_MEM_ALLOC_ENABLE")
print(json.dumps({{"configured": configured, "faults": faults, "thp": thp}}))
"""


def _run(configure: bool, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("ATTENTION_LENS_", "THP_"))}
    out = subprocess.run([sys.executable, "-c", REUSE.format(root=str(ROOT), configure=configure)],
                         capture_output=True, text=True, check=True, env={**environ, **env}, timeout=120)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_a_freed_block_is_reused_without_new_page_faults():
    """Under the app's settings a pass's per-layer tensors reuse the heap's pages: 20 rounds of a 6 MB
    block (1,536 pages of 4 KB) fault a few rounds' pages at most (none on an idle machine; a busy one
    sometimes has no huge page free), where the 256 KB mmap threshold the app used before made each
    round a fresh mapping the kernel zeroed: 20 rounds' pages."""
    old = _run(True, ATTENTION_LENS_MMAP_THRESHOLD=str(256 << 10), ATTENTION_LENS_HUGE_PAGES="0")
    assert old["faults"] > 20 * 1000  # the measurement sees what the setting changes
    configured = _run(True)
    assert configured["configured"] is True
    assert configured["faults"] * 3 < old["faults"], (configured, old)


def test_huge_pages_are_asked_for_unless_turned_off():
    assert _run(True)["thp"] == "1"
    assert _run(True, ATTENTION_LENS_HUGE_PAGES="0")["thp"] is None
    assert _run(False)["thp"] is None
