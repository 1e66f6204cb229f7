"""Layers point one way: viz imports no torch or streamlit; model imports no streamlit, plotly or viz."""

import ast
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_viz_imports_neither_torch_nor_streamlit():
    modules = sorted(p.stem for p in (ROOT / "viz").glob("*.py") if p.stem != "__init__")
    code = (
        "import importlib, json, sys\n"
        "import viz\n"
        f"for m in {modules!r}: importlib.import_module('viz.' + m)\n"
        "print(json.dumps({'torch': 'torch' in sys.modules, 'streamlit': 'streamlit' in sys.modules,"
        " 'n': len([m for m in sys.modules if m.startswith('viz')])}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["torch"] is False
    assert result["streamlit"] is False
    assert result["n"] >= len(modules)


def test_viz_sources_do_not_mention_torch_or_streamlit_imports():
    for path in (ROOT / "viz").glob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            stripped = line.strip()
            if stripped.startswith(("import ", "from ")):
                assert "torch" not in stripped and "streamlit" not in stripped, f"{path.name}: {stripped}"


def test_model_imports_neither_streamlit_nor_plotly_nor_viz():
    modules = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for p in (ROOT / "model").rglob("*.py")
        if p.stem not in ("__init__", "__main__")
    )
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "ui = {'streamlit', 'plotly', 'viz', 'app_support'}\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} & ui)\n"
        "print(json.dumps({'bad': bad, 'n': len([m for m in sys.modules if m.startswith('model')])}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["bad"] == []
    assert result["n"] >= len(modules)


def test_model_sources_do_not_import_ui_packages():
    for path in (ROOT / "model").rglob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            stripped = line.strip()
            if stripped.startswith(("import ", "from ")):
                words = stripped.replace(",", " ").split()
                assert not {"streamlit", "plotly", "viz", "app_support"} & {w.split(".")[0] for w in words}, (
                    f"{path}: {stripped}"
                )


PACKAGES = ("model", "viz", "app_support", "app_pages")


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: pathlib.Path, name: str, known: set[str], typing: bool = False) -> set[str]:
    """The project modules ``path`` imports anywhere in it (inside functions too, where an import circle
    hides), and under ``if TYPE_CHECKING:`` too when ``typing``. ``from pkg import sub`` names the
    submodule only."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = set() if typing else {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            submodules = [f"{source}.{alias.name}" for alias in node.names]
            targets = [m for m in submodules if m in known]
            if len(targets) < len(submodules):
                targets.append(source)
        else:
            continue
        for target in targets:
            parts = target.split(".")
            prefixes = (".".join(parts[:i]) for i in range(len(parts), 0, -1))
            owner = next((p for p in prefixes if p in known), None)  # the deepest project module named
            if owner is not None and owner != name:
                found.add(owner)
    return found


def import_graph(typing: bool = False) -> dict[str, set[str]]:
    """Module -> the project modules it imports (``typing``: those imported for type checking too)."""
    paths = {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    known = set(paths)
    return {name: _imported_modules(path, name, known, typing) for name, path in paths.items()}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other round a circle (strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_the_circle_finder_finds_a_circle_and_passes_a_chain():
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_import_graph_sees_relative_and_function_level_imports():
    graph = import_graph()
    assert "model.store.formats.own" in graph["model.training.snapshots"]  # from ..store.formats.own import
    assert "model.network.transformer" in graph["model.decoding.decoders"]
    assert len(graph) > 100


def test_no_module_imports_itself_round_a_circle():
    assert import_circles(import_graph()) == []


def test_no_circle_either_through_imports_made_for_type_checking_only():
    # a circle of type-only imports still ties the modules together for a reader and a type checker
    assert import_circles(import_graph(typing=True)) == []


def _imports_of(path: pathlib.Path) -> list[str]:
    """Every module name ``path`` imports (absolute names; relative imports as written, with dots)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append("." * node.level + (node.module or ""))
    return names


def _app_files() -> list[pathlib.Path]:
    support = sorted((ROOT / "app_support").rglob("*.py"))
    return [ROOT / "app.py", *support, *sorted((ROOT / "app_pages").rglob("*.py"))]


def test_pages_take_from_model_only_its_public_module():
    """Pages draw: what runs a model reaches them through app_support's gateway, never an import."""
    found = {
        f"{path.name}: {name}"
        for path in sorted((ROOT / "app_pages").glob("*.py"))
        for name in _imports_of(path)
        if (name == "model" or name.startswith("model.")) and name != "model.public"
    }
    assert not found, sorted(found)


def _glue_owner(module: str) -> str | None:
    """The page key a glue module belongs to (``app_pages.glue.<key>`` or ``app_pages.glue.<key>_<part>``)."""
    if not module.startswith("app_pages.glue.") or module == "app_pages.glue":
        return None
    stem = module.rpartition(".")[2]
    from app_support.pages import BY_KEY

    keys = sorted(BY_KEY, key=len, reverse=True)
    return next((key for key in keys if stem == key or stem.startswith(key + "_")), stem)


def test_glue_is_imported_by_its_own_page_only_and_the_core_imports_no_page():
    """``app_pages/glue/<key>.py`` serves the page ``app_pages/<key>.py`` (and that page's other glue); the
    app-wide core (app.py, app_support/) imports nothing of app_pages/."""
    graph = import_graph()
    found = set()
    for module, imported in graph.items():
        for target in imported:
            owner = _glue_owner(target)
            if module.startswith("app_support") and target.startswith("app_pages"):
                found.add(f"{module} -> {target} (the core imports no page)")
            elif owner is not None and module not in (f"app_pages.{owner}",) and _glue_owner(module) != owner:
                found.add(f"{module} -> {target} (glue of page {owner!r})")
    assert not found, sorted(found)


def test_the_app_layers_never_import_torch():
    found = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in _app_files()
        for name in _imports_of(path)
        if name == "torch" or name.startswith("torch.")
    }
    assert not found, sorted(found)


def test_only_the_gateway_caches_model_results():
    """One cache for model results (app_support/gateway.py); the upload space and the session's clean-up
    watch are per-session resources."""
    allowed = {"app_support/gateway.py", "app_support/user_models.py", "app_support/session_memory.py"}
    found = {
        str(path.relative_to(ROOT))
        for path in _app_files()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr in ("cache_data", "cache_resource")
    }
    assert found <= allowed, sorted(found - allowed)


def test_the_forward_pass_is_changed_through_one_mechanism():
    """Hook functions and flags are set by model.run.interventions (which always undoes them) and the
    hook machinery itself, nowhere else: no raw forward hook, no hand-flipped recompute flag."""
    owners = {"model/run/interventions.py", "model/network/hooks.py", "model/network/transformer.py"}
    found = set()
    for path in sorted((ROOT / "model").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        source = path.read_text(encoding="utf-8")
        if rel not in owners and ("register_forward_hook" in source or "recompute = " in source):
            found.add(rel)
    assert not found, sorted(found)


def test_strings_imports_no_ui_no_torch_and_of_the_project_only_pure_model_tables():
    """The string tables are read by the app and by viz alike: importing every module of ``strings``
    pulls in no streamlit, plotly, torch, viz or app_support, and of model/ only its pure word tables."""
    modules = sorted(_module_name(p) for p in (ROOT / "strings").rglob("*.py"))
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "banned = {'streamlit', 'plotly', 'torch', 'viz', 'app_support'}\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} & banned)\n"
        "project = sorted(m for m in sys.modules if m.split('.')[0] == 'model')\n"
        "n = len([m for m in sys.modules if m.startswith('strings')])\n"
        "print(json.dumps({'bad': bad, 'project': project, 'n': n}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["bad"] == []
    # model.core.messages and model.store.problems: the English of model/'s messages and of a refused upload;
    # model.network.kinds: the attention kinds' names (all three pure Python)
    allowed = {"model", "model.core", "model.core.messages",
               "model.network", "model.network.kinds", "model.store",
               "model.store.problems"}
    assert set(result["project"]) <= allowed
    assert result["n"] >= len(modules)


def test_the_public_module_imports_no_torch():
    """``model.public`` holds value types and constants only: a page that imports it loads no torch."""
    code = "import json, sys\nimport model.public\nprint(json.dumps('torch' in sys.modules))\n"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) is False


#: The only modules at the top of model/: every other module belongs to one of its packages.
MODEL_TOP = {"__init__.py", "__main__.py", "public.py"}


def test_no_loose_modules_at_the_top_of_model():
    loose = sorted(p.name for p in (ROOT / "model").glob("*.py") if p.name not in MODEL_TOP)
    assert not loose, loose


def test_every_package_docstring_names_each_of_its_modules():
    """A package's docstring is its table of contents: each module (and subpackage) on a line of its own."""
    missing = []
    for init in sorted((ROOT / "model").rglob("__init__.py")):
        package = init.parent
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        words = {w for line in doc.splitlines() for w in line.replace(",", " ").split()}
        members = [p.name for p in package.glob("*.py") if p.name != "__init__.py"]
        members += [f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").is_file()]
        missing += [f"{package.relative_to(ROOT)}: {m}" for m in sorted(members) if m not in words]
    assert not missing, missing
