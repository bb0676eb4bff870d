"""The notebooks that compare configurations (08, 11), run three times from scratch: every
run states conclusions, and each is what the table it cites says on that run. Their prose
types no measured speed-up: those sentences are computed."""

import json
import re

import nbformat
import pytest
from nbclient import NotebookClient

from tests.notebook.test_conclusions import NOTEBOOKS, check_conclusions

COMPARING = [path for path in NOTEBOOKS if path.stem.startswith(("08_", "11_"))]
TYPED_RATIO = re.compile(r"\b\d+\.\d+ ?x\b")    # "1.88x": a speed-up typed into prose


@pytest.mark.timeout(600)
@pytest.mark.parametrize("run", [1, 2, 3])
@pytest.mark.parametrize("path", COMPARING, ids=lambda p: p.stem)
def test_a_fresh_run_concludes_what_its_numbers_say(path, run, monkeypatch, request):
    request.node.keeps_threads = True      # the kernel's client threads end with the test
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")   # as the saved outputs were made
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    assert check_conclusions(json.loads(nbformat.writes(notebook))) > 0, \
        f"{path.name} states no computed conclusion"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_prose_types_no_measured_ratio(path):
    notebook = json.loads(path.read_text())
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            typed = TYPED_RATIO.findall("".join(cell["source"]))
            assert not typed, f"{path.name} types {typed} in prose: render it from a Result"

