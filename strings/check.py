"""The checks every string table passes (run by the tests): placeholders, glossary, no English left.

- :func:`placeholders`: a Chinese template has the English one's placeholders (maybe reordered).
- :func:`glossary_problems`: where the English names a concept, the Chinese uses the glossary's term
  (:mod:`strings.glossary`) and none of the synonyms it avoids.
- :func:`untranslated`: interface text left in English inside Chinese text (a table entry, or what a
  Chinese page shows). Chinese technical writing keeps some words in English (token, softmax, hook
  names, code) and the interface puts the English term in brackets after a Chinese one so learners can
  look it up. What is left after removing those, the model's tokens and the allowed words, must hold
  no English word of two letters or more: that would be untranslated text.
"""

from __future__ import annotations

import html
import re
import string
from collections.abc import Iterable, Mapping

from strings.glossary import TERMS

#: Words that stay in English in the Chinese interface: names, units, abbreviations, code words.
ALLOWED_WORDS = frozenset(
    w.lower()
    for w in (
        "English", "Language", "default", "reverse", "copy", "sort", "didactic", "Tatoeba",
        "induction", "tiny-gpt", "tiny", "gpt", "SmolLM", "M-Instruct", "Instruct",  # model names
        "Pre-LN", "Post-LN", "LayerNorm", "RMSNorm", "GELU", "ReLU", "RoPE", "GQA", "MQA", "MHA", "BLEU",
        "chrF", "Jensen-Shannon", "JS", "nats", "nat", "KL", "Abnar", "Zuidema", "Q", "K", "V", "QK", "PNG",
        "SVG", "zip", "WordPiece", "SentencePiece", "Transformer",
        "npz", "json", "meta", "activations", "UTF", "UTF-8", "CPU", "GPU", "URL", "BERT", "MiniLM",
        "MB", "MiB", "GGUF", "gguf", "Llama", "Qwen", "Qwen2", "GPT-2", "Mistral", "SmolLM2",
        "top-k", "top-p", "log",  # decoding strategies: the sampling cut-offs' names and log p
    )
    + tuple(t.zh for t in TERMS if t.zh.isascii())
)

_STRIP = [
    re.compile(r"Attention Lens"),  # the app's name
    re.compile(r"`[^`]*`"),  # code spans
    re.compile(r":material/[a-z_]+:"),  # icons
    re.compile(r"https?://\S+"),
    re.compile(r"%\{[^}]*\}"),  # plotly hover placeholders
    re.compile(r"<[^>]{0,40}>"),  # rich-text tags and <unk>-style tokens
    # the English term in brackets right after the Chinese one: 查询（query）
    re.compile(r"(?<=[\u3400-\u9fff\u3000-\u303f\uff00-\uffef*])\s*[(（]"
               r"\s*[A-Za-z][A-Za-z0-9 ,./'’·\-]{0,60}[)）]"),
    re.compile(r"\b\w+(?:\.\w+)+\b"),  # hook names, module paths, file names
    re.compile(r"\b[A-Za-z]+_[A-Za-z0-9_]+\b"),  # snake_case identifiers (d_model, hook_pattern)
]
_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*[A-Za-z]|[A-Za-z]")
_LONE = re.compile(r"(?<![A-Za-z])[A-Za-z][A-Za-z'’\-]*[A-Za-z](?![A-Za-z])")
_RUN = re.compile(r"(?:[A-Za-z][A-Za-z'’\-]*)(?:[ \t]+[A-Za-z][A-Za-z'’\-]*)+")


def untranslated(text: str, tokens: Iterable[str] = ()) -> list[str]:
    """English words (runs of them, as found) left in ``text``; [] when clean."""
    text = re.sub(r"\\(.)", r"\1", html.unescape(text))  # markdown escapes: \. is a literal "."
    for token in sorted({t.replace("▁", "").strip() for t in tokens if t.strip()}, key=len, reverse=True):
        if re.search(r"[A-Za-z]", token):
            text = re.sub(r"(?<![A-Za-z])" + re.escape(token) + r"(?![A-Za-z])", " ", text)
    for pattern in _STRIP:
        text = pattern.sub(" ", text)
    text = text.replace("*", " ").replace("▁", " ")
    found = []
    for run in _RUN.finditer(text):
        words = [w for w in _WORD.findall(run.group(0)) if w.lower() not in ALLOWED_WORDS and len(w) > 1]
        if words:
            found.append(run.group(0).strip())
    for word in _LONE.finditer(text):
        if word.group(0).lower() not in ALLOWED_WORDS and not any(word.group(0) in f for f in found):
            found.append(word.group(0))
    return found


_FORMATTER = string.Formatter()


def placeholders(template: str) -> list[tuple[str, str]]:
    """(name, format spec) of every placeholder, sorted (a Chinese sentence may reorder them)."""
    return sorted((name, spec or "") for _, name, spec, _ in _FORMATTER.parse(template) if name is not None)


def glossary_problems(en: Mapping[str, str], zh: Mapping[str, str]) -> list[str]:
    """One line per Chinese entry that misses the glossary's term for a concept its English names,
    or uses a synonym the glossary avoids; [] when the tables follow the glossary."""
    problems = []
    for key, english in en.items():
        chinese = zh.get(key, "")
        for term in TERMS:
            if term.matches_en(english) and term.zh.lower() not in chinese.lower():
                problems.append(f"{key}: names '{term.en}' but lacks '{term.zh}': {chinese}")
            for synonym in term.avoid:
                if synonym in chinese:
                    problems.append(f"{key}: uses '{synonym}' instead of '{term.zh}': {chinese}")
    return problems
