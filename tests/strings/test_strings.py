"""The interface in English and Simplified Chinese: every string table (pages and figures), the
glossary, and every page in both languages."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

import strings
from app_support import i18n
from app_support import pages as page_registry
from model.core.messages import ENGLISH as MESSAGES_EN
from model.data.tasks import InputError
from strings.check import glossary_problems, placeholders, untranslated
from strings.glossary import TERMS
from tests.app.test_app_pages import APP, PAGES, TIMEOUT, reference
from tests.app.url_checks import assert_only_declared_url_parameters
from viz import labels as viz_labels


def all_tables() -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """name -> (English table, Chinese table), for every table of interface text: the pages' and the
    figures' (one merged table), and model/'s messages."""
    return {
        "text": (strings.STRINGS["en"], strings.STRINGS["zh"]),
        "messages": (dict(MESSAGES_EN), dict(strings.MESSAGES["zh"])),
    }


@pytest.mark.parametrize("name", list(all_tables()))
def test_both_languages_have_the_same_keys_and_placeholders(name):
    en, zh = all_tables()[name]
    assert set(en) == set(zh), (sorted(set(en) - set(zh)), sorted(set(zh) - set(en)))
    for key in en:
        assert placeholders(en[key]) == placeholders(zh[key]), key
        assert zh[key].strip(), key


def test_every_table_module_has_matching_keys():
    from app_support.i18n import ORIGIN

    by_module: dict[str, set[str]] = {}
    for key, module in ORIGIN.items():
        by_module.setdefault(module, set()).add(key)
    for module, keys in by_module.items():
        assert keys <= set(i18n.STRINGS["en"]) and keys <= set(i18n.STRINGS["zh"]), module
    for name, module in strings.table_modules():
        assert module.EN.keys() == module.ZH.keys(), name


def test_no_key_is_defined_twice_across_pages_and_figures():
    defined_in: dict[str, set[str]] = {}
    for name, module in strings.table_modules():
        for key in [*module.EN, *module.ZH]:
            defined_in.setdefault(key, set()).add(name)
    twice = {key: sorted(names) for key, names in defined_in.items() if len(names) > 1}
    assert not twice, twice
    assert {name.split(".")[0] for name, _ in strings.table_modules()} == {"pages", "figures"}


def test_merging_a_key_defined_twice_fails_and_names_both_modules():
    page = SimpleNamespace(EN={"x.title": "Title"}, ZH={"x.title": "标题"})
    figure = SimpleNamespace(EN={"x.title": "Figure title"}, ZH={"x.title": "图标题"})
    with pytest.raises(ValueError, match=r"'x.title' is defined in both pages.x and figures.x"):
        strings.merge_tables([("pages.x", page), ("figures.x", figure)])


def test_the_figures_read_the_same_tables_in_every_language():
    assert viz_labels.TEXT is strings.STRINGS is i18n.STRINGS
    assert viz_labels.TEXT["en"].keys() == viz_labels.TEXT["zh"].keys()
    assert set(viz_labels.LANGS) == set(viz_labels.TEXT)


def test_user_model_problems_are_worded_as_model_store_words_them():
    """The tables word every refused-model problem code, in English exactly as the store does."""
    from model.store.problems import ENGLISH as PROBLEMS_EN

    prefix = "mymodels.problem."
    english = strings.STRINGS["en"]
    copied = {key.removeprefix(prefix): value for key, value in english.items() if key.startswith(prefix)}
    assert copied == PROBLEMS_EN


@pytest.mark.parametrize("name", list(all_tables()))
def test_chinese_uses_the_glossary_term_for_every_concept(name):
    en, zh = all_tables()[name]
    problems = glossary_problems(en, zh)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", list(all_tables()))
def test_no_table_entry_is_left_in_english(name):
    _, zh = all_tables()[name]
    left = {key: untranslated(re.sub(r"\{[^{}]*\}", " ", value)) for key, value in zh.items()}
    assert not {k: v for k, v in left.items() if v}


def test_the_checker_finds_english_and_allows_what_stays_english():
    assert untranslated("Single head") == ["Single head"]
    assert untranslated("权重 weight") == ["weight"]
    assert sorted(untranslated("key (attended to)")) == ["attended to", "key"]
    assert untranslated("每个 token 的注意力权重") == []
    assert untranslated("注意力头（attention head）看向 `hook_pattern`") == []
    assert untranslated("查看 encoder.blocks.0.attn.hook_pattern 和 d_model") == []
    assert untranslated("the model reads tokens") == ["the model reads tokens"]
    assert untranslated("输出 ▁I ▁ate ▁an ▁apple", tokens=["▁I", "▁ate", "▁an", "▁apple"]) == []


def test_glossary_has_one_chinese_term_per_concept():
    zh_terms = [t.zh for t in TERMS]
    assert len(zh_terms) == len(set(zh_terms))
    for term in TERMS:
        assert term.zh not in term.avoid


@pytest.mark.parametrize("locale,header,expected", [
    ("zh-CN", None, "zh"), ("zh-TW", None, "zh"), ("en-US", "zh-CN", "en"),
    (None, "zh-CN,zh;q=0.9,en;q=0.8", "zh"), (None, "en-GB,en;q=0.9,zh;q=0.8", "en"),
    (None, "fr-FR,zh;q=0.5", "zh"), (None, "de;q=0.9,en;q=0.8", "en"),
    (None, None, "en"), (None, "", "en"), (None, ";;;,=q", "en"), (None, "zh;q=abc", "en"), ("", "zh", "zh"),
])
def test_preferred_language(locale, header, expected):
    assert i18n.preferred_lang(locale, header) == expected


# --------------------------------------------------------------------------- pages in both languages


def _visible_texts(at: AppTest) -> list[str]:
    """What a reader sees: markdown, headers, captions, boxes, widget labels, help and options,
    table headers, and the words inside figures (titles, axes, legends, hover templates)."""
    out: list[str] = []
    boxes = ("markdown", "title", "header", "subheader", "caption", "info", "warning", "error", "success")
    for kind in boxes:
        out += [str(el.value) for el in getattr(at, kind)]
    for kind in ("selectbox", "radio", "toggle", "text_input", "slider", "select_slider", "multiselect",
                 "button", "checkbox", "number_input"):
        for el in getattr(at, kind):
            out.append(str(el.label))
            out.append(str(getattr(el, "help", "") or ""))
            if kind in ("selectbox", "radio", "multiselect", "select_slider"):
                out += [str(o) for o in getattr(el.proto, "options", [])]
    out += [str(el.label) for el in at.expander]
    out += [str(el.label) for el in at.tabs]
    out += [str(el.label) for el in at.get("metric")] if at.get("metric") else []
    for el in at.get("arrow_data_frame"):
        config = json.loads(el.proto.columns or "{}") if getattr(el.proto, "columns", "") else {}
        for column in config.values():
            out += [str(column.get("label", "")), str(column.get("help", ""))]
    for el in at.get("plotly_chart"):
        out += _figure_texts(json.loads(el.proto.spec))
    return [s for s in out if s.strip()]


def _figure_texts(fig: dict) -> list[str]:
    layout = fig.get("layout", {})
    out = []

    def title(obj) -> str:
        t = (obj or {}).get("title", "")
        return t.get("text", "") if isinstance(t, dict) else str(t)

    out.append(title(layout))
    for name, value in layout.items():
        if re.match(r"[xy]axis\d*$", name) or name == "coloraxis":
            out.append(title(value))
            out.append(title(value.get("colorbar", {})) if isinstance(value, dict) else "")
    for ann in layout.get("annotations", []) or []:
        out.append(str(ann.get("text", "")))
    legend = layout.get("showlegend", True) is not False
    for tr in fig.get("data", []):
        # Plotly lists a trace in the legend when asked to, or by default for lines, markers and bars.
        listed = tr.get("showlegend", tr.get("type", "scatter") in ("scatter", "scattergl", "bar"))
        if legend and listed and tr.get("name"):
            out.append(str(tr["name"]))
        out.append(str(tr.get("hovertemplate", "")))
        cell_texts = tr.get("text")
        if isinstance(cell_texts, list):  # per-cell hover text: a few rows are enough to see its words
            flat = [c for row in cell_texts[:3] for c in (row if isinstance(row, list) else [row])]
            out += [str(c) for c in flat[:12]]
        out.append(title(tr.get("colorbar", {})))
    return out


def _open(page: str, lang: str, model: str, text: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"model": model, "text": text, "lang": lang})
    at.run()
    if page != "single":
        at.switch_page(PAGES[page]).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


CASES = [("reverse", "attention"), ("default", "我吃了一个苹果")]


@pytest.mark.parametrize("page", [p.key for p in page_registry.PAGES])
@pytest.mark.parametrize("model,text", CASES)
@pytest.mark.parametrize("lang", [lang for lang in i18n.LANGS if lang != "zh"])
def test_every_page_runs_in_both_languages(page, model, text, lang):
    """Each language but Chinese here; the Chinese pages are opened, with the same checks, by
    test_chinese_pages_have_no_english_left."""
    at = _open(page, lang, model, text)
    assert not at.error, [e.value for e in at.error]
    assert at.query_params["lang"] == lang  # a link keeps its language
    assert_only_declared_url_parameters(at, page)


@pytest.mark.parametrize("page", [p.key for p in page_registry.PAGES])
@pytest.mark.parametrize("model,text", CASES)
@pytest.mark.language("zh")
def test_chinese_pages_have_no_english_left(page, model, text):
    at = _open(page, "zh", model, text)
    assert not at.error, [e.value for e in at.error]
    assert at.query_params["lang"] == "zh"  # a link keeps its language
    assert_only_declared_url_parameters(at, page)
    # Every sentence on the page (sidebar, compare boxes), its tokens and the model's output are data.
    tokens: list[str] = []
    for typed in {text, *(str(el.value) for el in at.text_input if str(el.value).strip())}:
        try:
            ref = reference(model, typed)
        except InputError:  # e.g. a filter box, not a sentence
            continue
        tokens += [typed, ref.prepared.text, ref.output_text, *typed.split(), *ref.output_text.split()]
        tokens += [*ref.source_tokens, *ref.target_tokens, *[tok for s in ref.steps for tok in s.top_tokens]]
    if page == "pitfalls":  # its default view also shows what the model writes with the fault (no scaling)
        from model.run.analysis import analyze
        from model.run.interventions import NoScaling
        from tests.app.test_app_pages import bundle

        broken = analyze(bundle(model), text, edits=(NoScaling(),))
        tokens += [broken.output_text, *broken.output_text.split(), *broken.target_tokens]
    if page == "detectors":  # its seeded probes are random tokens of the model's vocabulary: data too
        from model.lab.detectors import probe_scores
        from tests.app.test_app_pages import bundle

        tokens += [tok for probe in probe_scores(bundle(model), 0).tokens for tok in probe]
    left = {s: untranslated(s, tokens) for s in _visible_texts(at)}
    left = {s: found for s, found in left.items() if found}
    assert not left, json.dumps(left, ensure_ascii=False, indent=1)


def test_the_language_switch_changes_the_page_and_the_link():
    at = _open("single", "en", "reverse", "attention")
    assert at.title[0].value == i18n.text("en", "page.single.title")
    at.segmented_control(key="lang").set_value("zh").run()
    assert at.title[0].value == i18n.text("zh", "page.single.title")
    assert at.query_params["lang"] == "zh"
    assert at.text_input(key="text").label == i18n.text("zh", "sidebar.input")
