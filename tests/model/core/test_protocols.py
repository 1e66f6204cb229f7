"""The shipped tokenizers, tasks and model satisfy the protocols the rest of the code relies on."""

import inspect
from pathlib import Path

import pytest

from model.core.protocols import HookedModel, Task, Tokenizer
from model.data.char_tokenizer import CharTokenizer
from model.data.tasks import SyntheticTask, TranslationTask
from model.data.translation_tokenizer import TranslationTokenizer
from model.network.transformer import Transformer
from model.store.bundle import Bundle
from model.store.registry import model_dir
from tests.conftest import tiny_config

MEMBERS = {
    Tokenizer: {
        "pad_id", "bos_id", "eos_id", "vocab_size", "encode", "decode", "tokens", "id_to_token",
        "unknown_characters", "is_special", "save",
    },
    Task: {
        "name", "example", "directions", "tokenizer", "target_tokenizer", "prepare", "target_ids", "examples",
        "references", "to_dict", "save_tokenizer",
    },
    HookedModel: {"cfg", "lock", "hook_names", "run_with_cache", "hooks", "attention_layer_counts", "encode"},
}


def _members(protocol) -> set[str]:
    return {n for n in vars(protocol) if not n.startswith("_")} | set(
        getattr(protocol, "__annotations__", {})
    )


@pytest.fixture(scope="module")
def translation_tokenizer():
    return TranslationTokenizer.load(model_dir("default") / "tokenizer.json")


@pytest.fixture(scope="module")
def implementations(translation_tokenizer):
    return {
        Tokenizer: [CharTokenizer("abc"), translation_tokenizer],
        Task: [SyntheticTask("reverse"), TranslationTask(translation_tokenizer)],
        HookedModel: [Transformer(tiny_config())],
    }


def test_protocols_declare_the_members_the_code_relies_on():
    for protocol, expected in MEMBERS.items():
        assert _members(protocol) == expected, protocol.__name__


@pytest.mark.parametrize("protocol", list(MEMBERS), ids=lambda p: p.__name__)
def test_implementations_satisfy_the_protocols(implementations, protocol):
    for obj in implementations[protocol]:
        assert isinstance(obj, protocol), type(obj).__name__
        for name in MEMBERS[protocol]:
            assert hasattr(obj, name), f"{type(obj).__name__} lacks {name}"
            declared = inspect.getattr_static(protocol, name)
            if inspect.isfunction(declared):  # a method in the protocol must be a method here too
                assert callable(getattr(obj, name)), f"{type(obj).__name__}.{name}"


def test_a_missing_member_fails_the_check():
    class NoSpecials(CharTokenizer):
        is_special = None  # hides the method: isinstance must notice

    assert not isinstance(object(), Tokenizer)
    assert not isinstance(CharTokenizer("abc"), Task)
    assert not isinstance(SyntheticTask("copy"), HookedModel)
    assert not isinstance(NoSpecials("abc"), Tokenizer)


def test_bundle_hands_out_protocol_objects():
    task = SyntheticTask("copy")
    bundle = Bundle(name="t", model=Transformer(tiny_config()), task=task, directory=Path("."))
    assert isinstance(bundle.task, Task)
    assert isinstance(bundle.tokenizer, Tokenizer)
    assert isinstance(bundle.model, HookedModel)
