"""One name per feature: a page's key (app_support/pages.py) names its page file, its string tables, and
every module of model/lab/, viz/ and app_pages/glue/ that is its own.

A module is named by a key when its file is ``<key>.py`` or ``<key>_<part>.py`` (``atlas_stats.py``,
``patching_lm.py``, ``single_export.py``). A module that several pages use keeps a name of its own: those
of model/lab/ and the string tables are listed in :data:`SHARED` with the reason; a viz/ or model/lab/
module that only one page reaches is that page's and must carry its key (or be listed in
:data:`ONE_PAGE_ALLOWED`).
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

from app_support.pages import PAGES

ROOT = pathlib.Path(__file__).resolve().parents[1]
KEYS = tuple(p.key for p in PAGES)
GLUE = ROOT / "app_pages" / "glue"

#: Modules named by no page key in the folders whose every module is a page's or listed here: why each is
#: shared.
SHARED = {
    "model/lab/induction.py": "induction measures shared by the detectors' scores and the induction report",
    "model/lab/choices.py": "what ablation, patching and families choose from, torch-free for model.public",
    "strings/pages/common.py": "navigation, the sidebar and the notes every page shows",
    "strings/pages/strategy.py": "the decoding strategy's sidebar controls and names, app-wide",
    "strings/pages/tokens.py": "the sidebar's word-piece and special-token choices (every attention page)",
    "strings/figures/common.py": "value names, hover pieces and axis titles many figures share",
    "strings/figures/columns.py": "the table columns of viz.column_labels (several pages)",
    "strings/figures/interventions.py": "viz.interventions' figures (ablation, patching, attribution)",
    "strings/figures/patterns.py": "the attention heatmap and head grid every attention page draws",
    "strings/figures/shapes.py": "the shape trace and parameters (model, architecture and deck pages)",
}

#: viz/ or model/lab/ modules that only one page reaches but that are not named by its key, and why.
ONE_PAGE_ALLOWED: dict[str, str] = {}


def named_by(stem: str, key: str) -> bool:
    return stem == key or stem.startswith(key + "_")


def owner_key(stem: str) -> str | None:
    """The page key a module's name carries (the longest that fits), or None."""
    return next((k for k in sorted(KEYS, key=len, reverse=True) if named_by(stem, k)), None)


@pytest.mark.parametrize("spec", PAGES, ids=lambda p: p.key)
def test_the_page_file_and_its_string_table_carry_the_key(spec):
    assert spec.file == f"app_pages/{spec.key}.py"
    assert (ROOT / spec.file).is_file(), spec.file
    assert (ROOT / "strings" / "pages" / f"{spec.key}.py").is_file(), f"strings/pages/{spec.key}.py"


@pytest.mark.parametrize("folder", ["model/lab", "strings/pages", "strings/figures", "app_pages/glue"])
def test_every_module_of_a_feature_folder_is_a_pages_or_listed_as_shared(folder):
    unnamed = sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / folder).glob("*.py")
        if p.stem != "__init__" and owner_key(p.stem) is None and str(p.relative_to(ROOT)) not in SHARED
    )
    assert not unnamed, f"name these by their page's key, or list them in SHARED with a reason: {unnamed}"


def test_the_allow_lists_name_modules_that_exist_and_say_why():
    for path, reason in {**SHARED, **ONE_PAGE_ALLOWED}.items():
        assert (ROOT / path).is_file(), path
        assert len(reason) > 20, path
    assert len(SHARED) + len(ONE_PAGE_ALLOWED) <= 12  # short: a longer list means names drifted apart


def _viz_exports() -> dict[str, str]:
    """Name exported by the ``viz`` package -> the module it comes from."""
    tree = ast.parse((ROOT / "viz" / "__init__.py").read_text(encoding="utf-8"))
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = node.module
    return out


def _reached(paths: list[pathlib.Path]) -> tuple[set[str], set[str]]:
    """(viz modules, model/lab modules) the sources in ``paths`` use: ``viz/<m>.py``, ``model/lab/<m>.py``."""
    exports = _viz_exports()
    viz, lab = set(), set()
    for path in paths:
        source = path.read_text(encoding="utf-8")
        viz |= {exports[n] for n in re.findall(r"\bviz\.(\w+)", source) if n in exports}
        viz |= set(re.findall(r"(?:from|import) viz\.(\w+)", source))
        lab |= set(re.findall(r"\blab\.(\w+)\.\w+", source))
        lab |= set(re.findall(r"from model\.lab\.(\w+) import", source))
        lab |= set(re.findall(r"from model\.lab import (\w+)", source))
    return ({f"viz/{m}.py" for m in viz if (ROOT / "viz" / f"{m}.py").is_file()},
            {f"model/lab/{m}.py" for m in lab if (ROOT / "model" / "lab" / f"{m}.py").is_file()})


def _sources_of(key: str) -> list[pathlib.Path]:
    glue = [p for p in GLUE.glob("*.py") if named_by(p.stem, key)]
    return [ROOT / "app_pages" / f"{key}.py", *glue]


def test_a_module_only_one_page_reaches_carries_that_pages_key():
    """The viz/ and model/lab/ modules a page reaches (itself or through its glue) that no other page and
    not the app-wide core reaches are that page's feature modules: ``<key>.py`` or ``<key>_<part>.py``."""
    core = sorted(p for p in (ROOT / "app_support").rglob("*.py")) + [ROOT / "app.py"]
    core_viz, core_lab = _reached(core)
    # a viz/ or model/lab/ module the others of its folder build on is shared too (viz.labels, viz.pooling)
    for folder, package in (("viz", "viz"), ("model/lab", "model.lab")):
        for path in (ROOT / folder).glob("*.py"):
            source = path.read_text(encoding="utf-8")
            found = re.findall(r"from \.(\w+) import", source)
            found += re.findall(rf"from {package}\.(\w+) import", source)
            core_viz |= {f"{folder}/{m}.py" for m in found
                         if owner_key(m) is None or owner_key(m) != owner_key(path.stem)}
    users: dict[str, set[str]] = {}
    for key in KEYS:
        viz, lab = _reached(_sources_of(key))
        for module in viz | lab:
            users.setdefault(module, set()).add(key)
    assert "viz/lens.py" in users and "model/lab/ablation.py" in users  # the walk sees both kinds of use
    wrong = sorted(
        f"{module} (only page {next(iter(keys))!r})"
        for module, keys in users.items()
        if len(keys) == 1 and module not in core_viz | core_lab and module not in ONE_PAGE_ALLOWED
        and not named_by(pathlib.Path(module).stem, next(iter(keys)))
    )
    assert not wrong, wrong


def test_every_glue_module_belongs_to_a_page_and_the_package_docstrings_name_every_module():
    for path in GLUE.glob("*.py"):
        if path.stem != "__init__":
            assert owner_key(path.stem) is not None, f"{path.name}: glue is named by its page's key"
    for package in ("app_support", "app_pages", "app_pages/glue"):
        folder = ROOT / package
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
        dotted = package.replace("/", ".")
        members = [p.stem for p in folder.glob("*.py") if p.stem != "__init__"]
        members += [p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").is_file()]
        missing = sorted(m for m in members if f":mod:`{dotted}.{m}`" not in doc)
        assert not missing, f"{package}/__init__.py names no line for {missing}"
