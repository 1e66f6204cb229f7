"""What the talk deck needs from the model, and the deck's navigation state.

Each slide draws a figure of an explorer page from the loaded model's own numbers (through the same
cached functions those pages use where they exist): the worked example's layer tensors (slide 1 and the
exercise), the shape trace (slides 2 and 5), the pitfall lab's word-order run (slide 3), the residual
stream's norms (slide 4, computed here from a full hooked pass) and the cached analysis (slide 6).

The slide number is the deck page's URL parameter ``slide``; the deck remembers the slide it was on so
every other page's sidebar can offer a way back (:func:`app_support.sidebar.deck_back_link`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import streamlit as st

from app_support import gateway as G
from app_support import lab
from app_support.sidebar import DECK_RETURN_KEY
from model.lab.deck import ResidualStream
from viz.deck import MINUTES, SLIDES, ResidualNorms, residual_norms

if TYPE_CHECKING:
    from app_support.view import View

#: The six slides of the talk; the exercise comes after them.
TALK = SLIDES[:6]
N_SLIDES = len(SLIDES)
SLIDE_KEY = "deck_slide"  # session key of the slide number (1-based)
#: The explorer page behind each slide, and the page parameters the link sets.
EXPLORER: dict[str, tuple[str, dict[str, str]]] = {
    "attention": ("worked", {}),
    "heads": ("architecture", {}),
    "position": ("pitfalls", {"fault": "position"}),
    "residual": ("architecture", {}),
    "architecture": ("architecture", {}),
    "live": ("single", {}),
    "exercise": ("worked", {"query": "0"}),
}
#: The two sentences of the live case: the same word 苹果 as a company and as a fruit.
APPLE_PAIR = ("苹果公司发布新品", "我吃了一个苹果")
#: The exercise's six-word sentence: for the translation model, and six letters for the letter models.
SIX_WORDS = {"translation": "The cat sat on the mat", "letters": "python"}


def slide_key(n: int) -> str:
    return SLIDES[n - 1]


def talk_minutes() -> int:
    return sum(MINUTES[s] for s in TALK)


# --------------------------------------------------------------------------- what a model can show


def slide_problems(name: str, slide: str) -> list[str]:
    """Why ``slide`` cannot run on model ``name`` (codes "decoder", "position"); empty when it can."""
    cfg = G.config(name)
    has_decoder = cfg.n_dec_layers > 0 and not getattr(cfg, "encoder_only", False)
    if slide == "architecture" and not has_decoder:
        return ["decoder"]
    if slide == "position":
        if not has_decoder:
            return ["decoder"]
        if lab.pitfalls.fault_problems(name, "position"):
            return ["position"]
    return []


# --------------------------------------------------------------------------- slide 4


@dataclass(frozen=True)
class Residuals:
    stacks: tuple[ResidualNorms, ...]  # encoder, then decoder (those the model has)
    norm_first: bool  # Pre-LN (True) or Post-LN, from the config


def residuals(stream: ResidualStream) -> Residuals:
    """The residual stream's ‖x‖ at every recorded point of each stack."""
    acts = stream.activations
    stacks = tuple(residual_norms(acts, s) for s in ("encoder", "decoder")
                   if f"{s}.blocks.0.hook_resid_post" in acts)
    return Residuals(stacks, stream.norm_first)


def get_residuals(view: View) -> Residuals:
    """:func:`residuals` of the sidebar's input, decoded as the page's analysis was (the hooked pass cached
    by the gateway, the norms once per input)."""
    stream = lab.deck.residual_stream(view.model, view.text, view.direction_arg, view.strategy, view.max_new)
    return G.derived(stream, "residuals", lambda: residuals(stream))


# --------------------------------------------------------------------------- navigation


def set_slide(n: int) -> None:
    st.session_state[SLIDE_KEY] = max(1, min(N_SLIDES, int(n)))


def step(delta: int) -> None:
    """Button callback: the previous (-1) or next (+1) slide."""
    set_slide(int(st.session_state.get(SLIDE_KEY, 1)) + delta)


def remember(n: int) -> None:
    """The deck is on slide ``n``: other pages offer a way back to it."""
    st.session_state[DECK_RETURN_KEY] = int(n)


# --------------------------------------------------------------------------- the deck's look and keys

#: Projector sizes: slide text 1.6rem (25.6 px) and the title 2.5rem, whatever the window. Scoped to the
#: slide's container.
DECK_CSS = """
<style>
  .st-key-deck_body p, .st-key-deck_body li { font-size: 1.6rem !important; line-height: 1.35; }
  .st-key-deck_body h1 { font-size: 2.5rem !important; padding-top: .1rem; }
  .st-key-deck_bar p { font-size: 1.3rem !important; }
</style>
"""

#: The sidebar folds when the deck opens (it stays one click away). ← → PageUp PageDown click the deck's
#: previous/next buttons (presentation clickers send PageUp/PageDown): installed once per browser page, the
#: listener does nothing while no deck buttons are on the page or while the focus is in a text box.
DECK_KEYS_JS = """
<script>
(function () {
  // the sidebar folds when the deck opens (once per visit; the presenter may open it again)
  var tries = 0;
  (function fold() {
    var bar = document.querySelector('[data-testid="stSidebar"]');
    var button = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
    if (bar && bar.getAttribute('data-collapsed') === 'false' && button) { button.click(); return; }
    if (bar && bar.getAttribute('data-collapsed') === 'true') return;
    if (++tries < 50) setTimeout(fold, 100);
  })();
  if (window.__alDeckKeys) return;
  window.__alDeckKeys = true;
  // Presses that come while the page is still answering the last one are queued, not lost.
  var pending = 0, direction = null, lastClick = 0;
  function running() {
    return document.querySelector('[data-testid="stStatusWidget"] [data-testid="stStatusWidgetRunningIcon"]');
  }
  function pump() {
    if (!pending) return;
    var button = document.querySelector('.st-key-' + direction + ' button');
    if (!button) { pending = 0; return; }  // left the deck
    var wait = lastClick + 300 - Date.now();  // let the last click's run start before looking
    if (wait > 0 || running()) { setTimeout(pump, Math.max(wait, 100)); return; }
    pending -= 1;
    if (!button.disabled) { button.click(); lastClick = Date.now(); }
    if (pending) setTimeout(pump, 300);
  }
  document.addEventListener('keydown', function (e) {
    var which = null;
    if (e.key === 'ArrowRight' || e.key === 'PageDown') which = 'deck_next';
    if (e.key === 'ArrowLeft' || e.key === 'PageUp') which = 'deck_prev';
    if (!which || e.altKey || e.ctrlKey || e.metaKey) return;
    var target = e.target;
    if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.isContentEditable)) {
      return;
    }
    if (!document.querySelector('.st-key-' + which + ' button')) return;
    e.preventDefault();
    if (which !== direction) { pending = 0; direction = which; }
    pending += 1;
    if (pending === 1) pump();
  }, true);
})();
</script>
"""


def install_deck_look() -> None:
    """The deck's CSS and keyboard navigation (static text, no user input)."""
    st.html(DECK_CSS + DECK_KEYS_JS, unsafe_allow_javascript=True)
