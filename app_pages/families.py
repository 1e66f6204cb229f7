"""Three families, one sentence: an encoder-only model, the encoder-decoder and a decoder-only language
model side by side: what each may see (its masks), what it is for (its output), its attention on one
word and its shapes, all from real runs."""

import pandas as pd
import streamlit as st

import viz
from app_support import lab
from app_support.i18n import current_lang, t
from app_support.messages import show_input_error
from app_support.models import MAX_INPUT_CHARS, model_label
from app_support.ui import chart, escape_md, page_header
from app_support.url_state import clip_input, note_clipped, seed_from_url, set_url_param
from app_support.view import current_view
from model.public import FAMILY_MAX_TOKENS, FAMILY_MODELS, InputError, UnknownModelError, sentence_words
from viz.families import MAX_BARS, bar_window, word_attention_bars

#: The masks' width: a third of a laptop's page, each drawn at the height its square cells need.
MASK_WIDTH_PX = 290
lang = current_lang()
view = current_view()
page_header(t("page.families.title"), t("families.intro"))

# --------------------------------------------------------------------------- the sentence and the word

if "families_sentence" not in st.session_state and "sentence" in st.query_params:
    # a link bypasses the box's max_chars: cut it the same way, and say so below the box
    st.session_state["families_sentence"], st.session_state["families_cut"] = clip_input(
        st.query_params["sentence"])
seed_from_url("families_sentence", "sentence", None, t("families.example"))
if st.button(t("families.use_sidebar"), help=t("families.use_sidebar_help", text=view.text)):
    st.session_state["families_sentence"] = view.text[:MAX_INPUT_CHARS]
sentence = st.text_input(t("families.sentence"), key="families_sentence", max_chars=MAX_INPUT_CHARS,
                         help=t("families.sentence_help"))
if st.session_state.get("families_cut") and len(sentence) == MAX_INPUT_CHARS:
    note_clipped(st.session_state["families_cut"])
set_url_param("sentence", sentence)
choices = sentence_words(sentence)
if not choices:
    st.info(t("families.no_words"), icon=":material/edit:")
    st.stop()
if len(choices) > FAMILY_MAX_TOKENS:
    # a word is at least one token, so no model reaches a later one (and the list stays a list)
    st.caption(t("families.words_cut", bound=FAMILY_MAX_TOKENS, n=len(choices)))
    choices = choices[:FAMILY_MAX_TOKENS]


def _word_label(choice: tuple[str, int]) -> str:
    word, before = choice
    return word if not before else t("families.word_again", word=word, n=before + 1)


def _from_url(value: str) -> str | None:
    """The word's label from its URL form, "word" or "word~n" (its n-th time): the same in both languages."""
    word_part, _, n = value.partition("~")
    choice = (word_part, int(n) - 1 if n.isdigit() and int(n) > 0 else 0)
    return _word_label(choice) if choice in choices else None


labels = [_word_label(c) for c in choices]
seed_from_url("families_word", "word", _from_url, None)
if st.session_state.get("families_word") not in labels:
    # a noun-like default: the second word of the sentence when there is one (the first is often "The")
    st.session_state["families_word"] = labels[min(1, len(labels) - 1)]
picked = st.selectbox(t("families.word"), labels, key="families_word", help=t("families.word_help"))
word, occurrence = choices[labels.index(picked)]
set_url_param("word", f"{word}~{occurrence + 1}" if occurrence else word)


# --------------------------------------------------------------------------- one column per family

def _masks(column) -> None:
    st.markdown(f"**{t('families.sees_header')}** {t(f'families.{column.family}.sees')}")
    for kind, mask in column.masks.items():
        queries, keys = column.mask_tokens[kind]
        if column.family == "decoder_only":  # the sentence alone, as in the other columns (one scale)
            n = column.read_tokens
            mask, queries, keys = mask[:n, :n], queries[:n], keys[:n]
        chart(viz.mask_matrix(mask, queries, keys, title=t(f"kind.{kind}.label"), width=MASK_WIDTH_PX,
                              lang=lang), key=f"families_mask_{column.family}_{kind}")


def _output(column) -> None:
    st.markdown(f"**{t('families.for_header')}** {t(f'families.{column.family}.for')}")
    if column.family == "encoder_only":
        st.markdown(t("families.embedding", dim=column.embedding_dim, norm=f"{column.embedding_norm:.2f}"))
        table = pd.DataFrame({t("families.col.sentence"): [s for s, _ in column.similarities],
                              t("families.col.cosine"): [c for _, c in column.similarities]})
        st.dataframe(table.style.format({t("families.col.cosine"): "{:.3f}"}), hide_index=True)
        st.caption(t("families.cosine_caption"))
        return
    label = t(f"families.{column.family}.output", n=column.max_new)
    if not column.output.strip():
        st.markdown(f"{label} *{t('io.empty_output')}*")
        return
    # as the model wrote it (data, never translated); a continuation often starts with a line break
    st.markdown(label)
    st.code(column.output.replace("\n", "↵\n"), language=None, wrap_lines=True)
    if "\n" in column.output:
        st.caption(t("families.line_breaks"))


def _word(column) -> None:
    st.markdown(f"**{t('families.word_header', word=escape_md(word))}**")
    positions = column.word_positions(word, occurrence)
    if not positions:
        st.info(t("families.word_lost", word=escape_md(word)), icon=":material/help:")
        return
    pieces = ", ".join(f"`{escape_md(column.tokens[p])}`" for p in positions)
    st.caption(t("families.word_tokens", word=escape_md(word), n=len(positions), tokens=pieces))
    hidden = column.masks[column.self_kind][positions].all(0)
    row_key = f"families_row_{column.family}"
    chart(word_attention_bars(column.word_row(positions), column.tokens, positions, hidden,
                              title=t("families.row_title", kind=t(f"kind.{column.self_kind}.label")),
                              key_range=_bar_range(row_key, len(column.tokens), positions[0]),
                              lang=lang), key=row_key)
    if column.cross_mean is not None:
        readers = column.cross_mean[:, positions].sum(1)  # [tgt_pos]: weight each output token puts on it
        cross_key = f"families_cross_{column.family}"
        chart(word_attention_bars(readers, column.target_tokens, title=t("families.cross_title"),
                                  axis_title=t("families.axis_output_token"),
                                  key_range=_bar_range(cross_key, len(column.target_tokens), 0), lang=lang),
              key=cross_key)


def _bar_range(chart_key: str, n: int, focus: int) -> tuple[int, int] | None:
    """The window of a row of ``n`` bars to draw (None: all fit): a page of MAX_BARS positions, the
    one holding ``focus`` (the word's first token) until the user picks another, or a new word does."""
    if n <= MAX_BARS:
        return None
    pages = (n - 1) // MAX_BARS + 1
    key, shown_for = f"{chart_key}_page", (word, occurrence, n)
    if st.session_state.get(f"{key}_for") != shown_for or st.session_state.get(key) not in range(pages):
        st.session_state[key] = focus // MAX_BARS
        st.session_state[f"{key}_for"] = shown_for
    page = st.selectbox(t("families.positions"), range(pages), key=key,
                        format_func=lambda p: _page_label(n, p),
                        help=t("families.positions_help", n=n, per=MAX_BARS))
    return bar_window(n, page)


def _page_label(n: int, page: int) -> str:
    start, stop = bar_window(n, page)
    return f"{start}–{stop - 1}"


def _trace(column) -> None:
    steps = " → ".join(f"`{list(shape)}` {t(f'families.step.{step}')}" for step, shape in column.trace)
    st.markdown(f"**{t('families.trace_header')}** {steps}")


def draw_column(family: str, name: str) -> None:
    st.subheader(t(f"families.{family}.name"))
    label = model_label(name, lang)
    st.caption(label)
    try:
        with st.spinner(t("analysis.running")):
            column = lab.families.family_column(name, sentence)
    except UnknownModelError:
        st.info(t("families.missing", model=escape_md(name)), icon=":material/block:")
        return
    except InputError as e:
        show_input_error(e)
        return
    if column.cut_from:
        which = "page" if column.model_max_len > FAMILY_MAX_TOKENS else "model"
        st.warning(t(f"families.read_cut_{which}", model=escape_md(label), read=column.read_tokens,
                     total=column.cut_from, bound=FAMILY_MAX_TOKENS, max_len=column.model_max_len),
                   icon=":material/content_cut:")
    _masks(column)
    _output(column)
    _word(column)
    _trace(column)


for (family, name), place in zip(FAMILY_MODELS.items(), st.columns(3), strict=True):
    with place:
        draw_column(family, name)

st.markdown(t("families.summary"))
