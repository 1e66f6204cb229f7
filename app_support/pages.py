"""The app's pages and URL parameters, declared once.

``app.py`` builds its navigation from :data:`PAGES`; the URL state keeps exactly the parameters
declared here (the app-wide ones plus the open page's own); the page tests iterate over the same
list. Adding a page = ``app_pages/<key>.py`` + one :class:`PageSpec` here + ``strings/pages/<key>.py``;
its other modules carry the same key (docs/design.md, "Recipes: where the one edit goes";
``tests/test_naming.py``).

When a page or a parameter moves, add a :class:`Redirect`: old links then open the same view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PageSpec:
    key: str  # stable identifier, used by code and tests (never shown)
    file: str  # script path relative to app.py
    icon: str  # Streamlit material icon
    section: str  # id of the menu section it is listed under (see SECTIONS)
    url_path: str  # path in the address bar ("" = the start page)
    params: tuple[str, ...] = ()  # URL parameters this page owns (kept in links to it)
    # True when the page follows the decoder's output: on an encoder-only model (MiniLM) the router
    # says so plainly instead of running it
    needs_decoder: bool = False
    # False while the page is drawn for an encoder or an encoder-decoder only: on a decoder-only
    # language model (SmolLM2, a GGUF or GPT-style upload) the router says so instead of running it
    for_language_models: bool = True


@dataclass(frozen=True)
class Redirect:
    """An old link shape that still opens the view it used to.

    Applies when the address is ``old_path`` and (if ``when_param`` is set) carries that
    parameter; the page ``new_path`` opens with the parameters renamed by ``rename``.
    """

    old_path: str  # url_path of the old address
    new_path: str  # url_path of the page that now shows the view
    when_param: str | None = None  # only links holding this parameter move (the rest of the page stayed)
    rename: Mapping[str, str] = field(default_factory=dict)  # old parameter name -> new name


#: Section ids in menu order. Titles (sections and pages) are interface text: the string tables hold
#: them as ``section.<id>`` and ``page.<key>.title``.
SECTIONS = ("attention", "decoding", "probe", "how", "intervene", "hood")

PAGES: tuple[PageSpec, ...] = (
    PageSpec("single", "app_pages/single.py", ":material/grid_on:", "attention", "",
             ("scale", "hide", "min", "share", "q", "k", "weigh")),
    PageSpec("heads", "app_pages/heads.py", ":material/apps:", "attention", "heads", ("layers", "weigh")),
    PageSpec("focus", "app_pages/focus.py", ":material/my_location:", "attention", "focus",
             ("token", "side", "weigh")),
    PageSpec("aggregates", "app_pages/aggregates.py", ":material/functions:", "attention",
             "aggregates", ("residual",)),
    PageSpec("decoding", "app_pages/decoding.py", ":material/play_circle:",
             "decoding", "decoding", ("step", "ref"), needs_decoder=True),
    PageSpec("compare", "app_pages/compare.py", ":material/compare:",
             "decoding", "compare", ("a", "b", "token")),
    PageSpec("stats", "app_pages/stats.py", ":material/bar_chart:", "hood",
             "stats", ("x", "y", "bar")),
    PageSpec("model", "app_pages/model.py", ":material/memory:", "hood", "model"),
    PageSpec("mymodels", "app_pages/mymodels.py", ":material/upload_file:", "hood", "my-models"),
    PageSpec("atlas", "app_pages/atlas.py", ":material/travel_explore:", "hood", "atlas", ("n", "stat")),
    PageSpec("deck", "app_pages/deck.py", ":material/slideshow:", "how", "deck", ("slide",)),
    PageSpec("worked", "app_pages/worked.py", ":material/calculate:", "how", "worked",
             ("query", "key")),
    PageSpec("masks", "app_pages/masks.py", ":material/visibility_off:", "how", "masks", ("other", "causal")),
    PageSpec("families", "app_pages/families.py", ":material/family_history:", "how", "families",
             ("sentence", "word")),
    PageSpec("architecture", "app_pages/architecture.py", ":material/account_tree:", "how", "architecture"),
    PageSpec("cost", "app_pages/cost.py", ":material/speed:", "how", "cost"),
    PageSpec("pitfalls", "app_pages/pitfalls.py", ":material/bug_report:", "how", "pitfalls",
             ("variant", "fault", "causal", "shuffle", "dmodel", "heads", "order")),
    PageSpec("positional", "app_pages/positional.py", ":material/waves:", "how",
             "positional", ("len", "dim", "k")),
    PageSpec("ablation", "app_pages/ablation.py", ":material/content_cut:", "intervene", "ablation",
             ("heads", "mode"), needs_decoder=True),
    PageSpec("patching", "app_pages/patching.py", ":material/swap_horiz:", "intervene", "patching",
             ("a", "b", "token", "site"), needs_decoder=True),
    PageSpec("attribution", "app_pages/attribution.py", ":material/insights:", "intervene", "attribution",
             ("step", "steps"), needs_decoder=True),
    PageSpec("lens", "app_pages/lens.py", ":material/layers:", "probe", "lens", ("pos", "lens_view")),
    PageSpec("flow", "app_pages/flow.py", ":material/route:", "probe", "flow", ("pos", "thr")),
    PageSpec("detectors", "app_pages/detectors.py", ":material/label:", "probe", "detectors",
             ("role", "probe")),
    PageSpec("versus", "app_pages/versus.py", ":material/difference:", "probe", "versus",
             ("other", "pair")),
    PageSpec("projector", "app_pages/projector.py", ":material/scatter_plot:", "probe", "projector",
             ("word", "preset", "sentences", "row", "color")),
    PageSpec("training", "app_pages/training.py", ":material/timeline:", "how", "training", ("step",)),
    PageSpec("variants", "app_pages/variants.py", ":material/call_split:", "how", "variants", ("axis",)),
)

#: Parameters every page keeps in its links: the shared sidebar's choices ("new": a language model's new
#: tokens; "pieces", "special": word pieces merged, [CLS]/[SEP] hidden, see token_display).
APP_PARAMS: tuple[str, ...] = ("lang", "model", "text", "dir", "kind", "layer", "head", "present", "decode",
                               "new", "pieces", "special")

REDIRECTS: tuple[Redirect, ...] = (
    # The positional-encoding lab was a tab of the model page.
    Redirect("model", "positional", when_param="pe_len", rename={"pe_len": "len", "pe_dim": "dim"}),
    Redirect("model", "positional", when_param="pe_dim", rename={"pe_len": "len", "pe_dim": "dim"}),
)

BY_KEY: dict[str, PageSpec] = {p.key: p for p in PAGES}
BY_PATH: dict[str, PageSpec] = {p.url_path: p for p in PAGES}
START_PAGE = PAGES[0]


def page(key: str) -> PageSpec:
    return BY_KEY[key]


def params_of(url_path: str) -> tuple[str, ...]:
    """Every parameter a link to the page at ``url_path`` keeps: app-wide ones, then the page's."""
    spec = BY_PATH.get(url_path)
    return APP_PARAMS + (spec.params if spec else ())


def redirect_for(url_path: str, params: Mapping[str, str]) -> tuple[PageSpec, dict[str, str]] | None:
    """(page to open, its parameters) if an old link shape moved, else None."""
    for r in REDIRECTS:
        if r.old_path == url_path and (r.when_param is None or r.when_param in params):
            moved = {r.rename.get(k, k): v for k, v in params.items()}
            return BY_PATH[r.new_path], moved
    return None


def _check() -> None:
    """Fail at import on a registry that cannot work (caught by every test that imports the app)."""
    for attr in ("key", "file", "url_path"):
        values = [getattr(p, attr) for p in PAGES]
        dupes = {v for v in values if values.count(v) > 1}
        if dupes:
            raise ValueError(f"pages share a {attr}: {sorted(dupes)}")
    for p in PAGES:
        if p.section not in SECTIONS:
            raise ValueError(f"page {p.key!r} is in unknown section {p.section!r}")
        clash = set(p.params) & set(APP_PARAMS)
        if clash:
            raise ValueError(f"page {p.key!r} declares app-wide parameters {sorted(clash)}")
    for r in REDIRECTS:
        if r.new_path not in BY_PATH:
            raise ValueError(f"redirect from {r.old_path!r} points to unknown page {r.new_path!r}")


_check()
