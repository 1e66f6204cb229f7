"""Layers point one way: viz imports no torch or streamlit; model imports no streamlit, plotly or viz."""

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
