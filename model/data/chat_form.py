"""The chat form of a prompt: the text an instruction-tuned model was trained to answer, from the
chat template its file carries (a Jinja template, as ``transformers`` applies it).

A template comes with the model file, so it is not trusted: it is rendered once, when the chat
form is first asked for or offered (not for a raw prompt), in a separate Python process under a
time and a memory limit, inside Jinja's sandbox, with a marker as the user's message. What comes
before and after the marker is the chat form's wrapper; a prompt in chat form is then
``before + prompt + after``, with no template run per input. A template that does not render within
its limits, or does not hold the message exactly once, gives no chat form,
and :func:`chat_form_and_reason` says why in one line.
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
#: Address space the rendering process may take once Python and Jinja are imported (a template that
#: built a 3 GB string took a load to 2.95 GB before this bound).
RENDER_MEMORY_BYTES = 512 * 2**20
#: Longest rendered text read back (a chat form is a few hundred characters around the message).
MAX_RENDERED_CHARS = 1_000_000
#: The user's message while rendering: text no template would write by itself.
MARKER = "\u2063ATTENTION-LENS-USER-MESSAGE\u2063"

_RENDER = r"""
import json, sys
from jinja2.sandbox import ImmutableSandboxedEnvironment
template, marker, memory, longest = json.loads(sys.stdin.read())
try:  # the address space in use now (Python and Jinja loaded), and ``memory`` more
    import os, resource
    with open("/proc/self/statm") as statm:
        in_use = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (in_use + memory,) * 2)
except (ImportError, ValueError, OSError):
    pass  # no such limit here: the time limit still holds
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
def raise_exception(message):
    raise ValueError(message)
env.globals["raise_exception"] = raise_exception
try:
    text = env.from_string(template).render(messages=[{"role": "user", "content": marker}],
                                            add_generation_prompt=True, bos_token="", eos_token="")
except MemoryError:
    sys.stdout.write(json.dumps({"problem": "memory"}))
except Exception as e:
    sys.stdout.write(json.dumps({"problem": "error", "error": f"{type(e).__name__}: {e}"[:200]}))
else:
    sys.stdout.write(json.dumps({"text": text[:longest], "cut": len(text) > longest}))
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
    return chat_form_and_reason(template)[0]


def chat_form_and_reason(template: str | None) -> tuple[ChatForm | None, str | None]:
    """The chat form ``template`` gives a single user message, or None and why (one line; None when
    there is no template at all)."""
    if not isinstance(template, str) or not template.strip():
        return None, None
    if len(template) > MAX_TEMPLATE_CHARS:
        return None, (f"the chat template has {len(template):,} characters "
                      f"(at most {MAX_TEMPLATE_CHARS:,} are read)")
    request = json.dumps([template, MARKER, RENDER_MEMORY_BYTES, MAX_RENDERED_CHARS])
    try:
        done = subprocess.run([sys.executable, "-I", "-c", _RENDER], input=request, capture_output=True,
                              text=True, timeout=RENDER_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return None, f"the chat template did not render within {RENDER_SECONDS:g} s"
    except OSError as e:
        return None, f"the chat template could not be rendered ({e.strerror or e})"
    try:
        answer = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        return None, "the chat template did not render"
    if answer.get("problem") == "memory":
        return None, f"the chat template needs more than {RENDER_MEMORY_BYTES // 2**20} MB to render"
    if answer.get("problem"):
        return None, f"the chat template does not render ({str(answer.get('error', ''))[:200]})"
    text = answer.get("text")
    if answer.get("cut") or not isinstance(text, str):
        return None, f"the chat template writes more than {MAX_RENDERED_CHARS:,} characters"
    if text.count(MARKER) != 1:
        return None, "the chat template does not hold the user's message exactly once"
    before, after = text.split(MARKER)
    return ChatForm(before, after), None
