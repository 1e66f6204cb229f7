"""The example notebooks in examples/ run top to bottom in a real Jupyter kernel (nbclient + ipykernel):
a cell that raises fails the test, every cell tagged ``figure`` must leave a plotly figure among its
outputs, and the notebooks are stored without outputs (so their diffs stay small)."""

from __future__ import annotations

import json

import pytest

from tests.paths import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))
#: What a plotly figure leaves in a notebook's output (the ``notebook`` renderer: plotly.js inside it).
FIGURE_MIME = "application/vnd.plotly.v1+json"


def test_there_are_the_three_example_notebooks():
    assert [p.name for p in NOTEBOOKS] == ["1_quick_start.ipynb", "2_your_own_attention.ipynb",
                                           "3_apple_in_class.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_is_stored_without_outputs(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None, cell["source"][:2]


def _figure_outputs(cell) -> int:
    return sum(1 for out in cell.get("outputs", []) if FIGURE_MIME in out.get("data", {})
               or "text/html" in out.get("data", {}) and "plotly" in "".join(out["data"]["text/html"]))


@pytest.mark.slow  # slow: whole suite only (each kernel loads torch and models: 20-60 s a notebook)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_runs_top_to_bottom_and_every_figure_cell_draws(path, tmp_path):
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # a cell that raises stops here with its traceback
    figure_cells = [c for c in notebook.cells if "figure" in c.get("metadata", {}).get("tags", [])]
    assert figure_cells, "a notebook shows at least one figure"
    for cell in figure_cells:
        assert _figure_outputs(cell) >= 1, "".join(cell.source)[:200]
