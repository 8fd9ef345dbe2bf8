"""python/examples/demo.ipynb, the demo as a notebook, executed headless
(nbclient, a fresh ipykernel) with small sizes: every cell runs, the
answers check out, the pictures are shown. Skips without nbclient/ipykernel."""
import os
import sys

import pytest

NOTEBOOK = os.path.join(os.path.dirname(__file__), "..", "examples", "demo.ipynb")


def test_demo_notebook_runs(kiln, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    params = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1
    params[0].source = "SIZE, POINTS, DIM, REPEAT, DEVICE = 64, 40, 3, 1, None"
    # "python3" is ipykernel's kernel; its spec may name plain "python":
    # this interpreter's directory first, so that it is the venv with kiln
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "NumPy" in text and "kiln ElementwiseKernel" in text and "check:" in text
    images = [o for o in outputs if o.output_type == "display_data" and "image/png" in o.data]
    assert len(images) == 2
    assert os.path.exists(tmp_path / "polygon_mask.png")
