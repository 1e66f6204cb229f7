"""The chat form of a prompt: the text an instruction-tuned model was trained to answer, from the
chat template its file carries (a Jinja template, as ``transformers`` applies it).

A template comes with the model file, so it is not trusted: it is rendered once, when the model
loads, in a separate Python process under a time limit, inside Jinja's sandbox, with a marker as
the user's message. What comes before and after the marker is the chat form's wrapper; a prompt in
chat form is then ``before + prompt + after``, with no template run per input. A template that
does not render in time, or does not hold the message exactly once, gives no chat form.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

#: Longest template rendered (SmolLM2's is 0.4 kB; Llama 3's about 5 kB).
MAX_TEMPLATE_CHARS = 64 * 1024
#: Seconds the rendering process may take (starting Python and Jinja takes ~0.1 s).
RENDER_SECONDS = 5.0
#: The user's message while rendering: text no template would write by itself.
MARKER = "\u2063ATTENTION-LENS-USER-MESSAGE\u2063"

_RENDER = r"""
import json, sys
from jinja2.sandbox import ImmutableSandboxedEnvironment
template, marker = json.loads(sys.stdin.read())
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
def raise_exception(message):
    raise ValueError(message)
env.globals["raise_exception"] = raise_exception
text = env.from_string(template).render(messages=[{"role": "user", "content": marker}],
                                        add_generation_prompt=True, bos_token="", eos_token="")
sys.stdout.write(json.dumps(text[:1_000_000]))
"""


@dataclass(frozen=True)
class ChatForm:
    """What the template puts around one user message, with the answer's start after it."""

    before: str
    after: str

    def apply(self, prompt: str) -> str:
        return f"{self.before}{prompt}{self.after}"


def chat_form(template: str | None) -> ChatForm | None:
    """The chat form ``template`` gives a single user message, or None when it gives none."""
    if not isinstance(template, str) or not template.strip() or len(template) > MAX_TEMPLATE_CHARS:
        return None
    try:
        done = subprocess.run([sys.executable, "-I", "-c", _RENDER], input=json.dumps([template, MARKER]),
                              capture_output=True, text=True, timeout=RENDER_SECONDS, check=False)
    except (subprocess.TimeoutExpired, OSError):
        return None
    if done.returncode != 0:
        return None
    try:
        text = json.loads(done.stdout)
    except ValueError:
        return None
    if not isinstance(text, str) or text.count(MARKER) != 1:
        return None
    before, after = text.split(MARKER)
    return ChatForm(before, after)
