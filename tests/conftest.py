import os

import pytest
import torch

# The cost page measures attention for up to 5 s when it opens; in tests (AppTest and the browser
# test's server, which inherits this) one second of measuring is enough to exercise it.
os.environ.setdefault("ATTENTION_LENS_COST_BUDGET", "1")
# Models in the Hugging Face cache of the machine running the tests would join every model list: the
# tests see an empty cache (tests/model/store/test_hf_cache.py builds its own under tmp_path).
os.environ["HF_HUB_CACHE"] = os.path.join(os.path.dirname(__file__), "..", ".cache", "no-hf-cache-in-tests")

from model.network.config import ModelConfig
from model.network.transformer import Transformer
from tests.app_harness import scan_installed_components_once
from tests.system import require_chromium

torch.set_num_threads(1)  # the test machine has two cores; keep one for the app under test
scan_installed_components_once()


def tiny_config(**overrides) -> ModelConfig:
    base = dict(
        vocab_size=40, d_model=32, n_heads=4, d_ff=64, n_enc_layers=2, n_dec_layers=2, dropout=0.0, max_len=16
    )
    base.update(overrides)
    return ModelConfig(**base)


@pytest.fixture
def tiny_model() -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config()).eval()


def padded_batch(vocab: int = 40, seed: int = 0):
    """src [2, 7] with the second sentence padded after 5 tokens; tgt [2, 6] with the first padded after 4."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, vocab, (2, 7), generator=g)
    src[1, 5:] = 0
    tgt = torch.randint(4, vocab, (2, 6), generator=g)
    tgt[0, 4:] = 0
    return src, tgt


# --------------------------------------------------------------------------- what a run selects

#: Interface languages the page tests draw: both by default; the quick subset (``run.py test
#: --quick``) sets ``ATTENTION_LENS_TEST_LANGUAGES=en``.
_LANGUAGES_ASKED = os.environ.get("ATTENTION_LENS_TEST_LANGUAGES", "en,zh")
TEST_LANGUAGES = tuple(lang.strip() for lang in _LANGUAGES_ASKED.split(",") if lang.strip())


def pytest_collection_modifyitems(config, items):
    """Leave out the page tests of an interface language this run does not draw: a test's ``lang``
    parameter, or its ``language("zh")`` mark."""
    keep, drop = [], []
    for item in items:
        spec = getattr(item, "callspec", None)
        lang = spec.params.get("lang") if spec is not None else None
        mark = item.get_closest_marker("language")
        if mark is not None:
            lang = mark.args[0]
        (drop if isinstance(lang, str) and lang not in TEST_LANGUAGES else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(autouse=True)
def _browser_is_there(request):
    """Browser tests and image exports need Chromium: checked before each of them runs."""
    if request.node.get_closest_marker("browser") or request.node.get_closest_marker("export"):
        require_chromium()
