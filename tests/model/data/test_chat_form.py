"""A model file's chat template, rendered in a child process under a time and a memory bound: a real
template gives its chat form, a hostile one gives none and one line saying why, and a GGUF that
carries a hostile one still loads (it says why it has no chat form when the form is asked for)."""

from __future__ import annotations

import time

import pytest

from model.data import chat_form as C

#: The shape of SmolLM2's own template (ChatML).
CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] "
          "+ '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}"
          "{{ '<|im_start|>assistant\\n' }}{% endif %}")
#: Builds a 3 GB string before writing the message (it took a load to 2.95 GB).
HUNGRY = "{% set x = 'a' * 3000000000 %}{{ x|length }}{{ messages[0]['content'] }}"


def test_a_real_template_gives_its_chat_form():
    form, reason = C.chat_form_and_reason(CHATML)
    assert reason is None
    assert form.apply("hi") == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_a_template_that_needs_gigabytes_gives_no_chat_form_and_says_why():
    start = time.perf_counter()
    form, reason = C.chat_form_and_reason(HUNGRY)
    assert form is None
    assert reason == f"the chat template needs more than {C.RENDER_MEMORY_BYTES // 2**20} MB to render"
    assert time.perf_counter() - start < C.RENDER_SECONDS  # refused by the memory bound, not the clock


@pytest.mark.parametrize("template,says", [
    ("{{ 'x' * 2000000 }}{{ messages[0]['content'] }}", "writes more than 1,000,000 characters"),
    ("{{ messages[0]['content'] }}{{ messages[0]['content'] }}", "exactly once"),
    ("{{ raise_exception('no') }}", "does not render (ValueError: no)"),
    pytest.param("{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
                 "within 5 s", marks=pytest.mark.slow, id="too-long"),  # waits out the 5 s
    ("x" * (C.MAX_TEMPLATE_CHARS + 1), "at most 65,536 are read"),
])
def test_every_bound_gives_one_line(template, says):
    form, reason = C.chat_form_and_reason(template)
    assert form is None and says in reason and "\n" not in reason, reason


def test_a_gguf_with_a_hungry_template_loads_renders_only_when_asked_and_says_why(tmp_path, monkeypatch):
    from model.store.formats import gguf as gguf_format
    from model.store.user_folders import load_user_model
    from tests.model.store.test_smollm2 import write_tiny

    renders = []
    real = C.chat_form_and_reason
    monkeypatch.setattr("model.data.lm_task.chat_form_and_reason",
                        lambda template: renders.append(template) or real(template))
    monkeypatch.setattr(gguf_format, "CACHE_DIR", tmp_path / "cache")
    write_tiny(tmp_path / "hungry.gguf", chat_template=HUNGRY)
    bundle = load_user_model(tmp_path / "hungry.gguf")
    raw = bundle.task.prepare("hello", bundle.cfg.max_len)
    assert raw.source_ids and renders == []  # loading and a raw prompt leave the template alone
    assert "chat" not in bundle.task.directions and renders == [HUNGRY]
    assert bundle.task.chat_reason.startswith("the chat template needs more than")
    assert bundle.task.directions == [] and len(renders) == 1  # rendered once
