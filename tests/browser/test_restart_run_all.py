"""Tutorial 02 as a learner re-runs it: "Restart Kernel and Run All Cells…" five times in a
real JupyterLab, and no output ever shows asyncio's "Task was destroyed but it is
pending!" or "was never awaited" (they came from processes forked off the kernel)."""

import json
import time

from tests.browser.conftest import ROOT
from tests.browser.notebook_ui import active_notebook, open_notebook, screenshot, wait_for_kernel

RUNS = 5
NOISE = ("Task was destroyed", "was never awaited")
# Appended to the copy: each restart is a new kernel process, so a new pid tells that
# this run, not the one before, reached the end.
LAST_CELL = "import os\nprint('kernel', os.getpid())"


def restart_and_run_all(page):
    page.locator(".lm-MenuBar-itemLabel", has_text="Kernel").click()
    page.locator(".lm-Menu-itemLabel", has_text="Restart Kernel and Run All Cells").click()
    page.locator(".jp-Dialog-button.jp-mod-accept").click()


def finished_kernel(last, previous, timeout=90.0):
    """The "kernel <pid>" the last cell printed once a run other than `previous` has
    reached it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = " ".join(last.all_inner_texts())   # no waiting: the output may be cleared
        if text.startswith("kernel ") and text not in previous:
            return text
        time.sleep(0.2)
    raise TimeoutError(f"Run All did not reach the last cell in {timeout} s")


def test_02_restarts_and_runs_all_without_asyncio_noise(lab, page):
    tutorial = json.loads((ROOT / "notebooks/02_clusters.ipynb").read_text())
    cells = ["".join(cell["source"]) for cell in tutorial["cells"]
             if cell["cell_type"] == "code"] + [LAST_CELL]
    open_notebook(lab, page, "02_clusters.ipynb", cells)
    wait_for_kernel(page)
    last = active_notebook(page).locator(".jp-Cell").last.locator(".jp-OutputArea-output")
    seen = set()
    for run in range(RUNS):
        restart_and_run_all(page)
        seen.add(finished_kernel(last, seen))
        outputs = active_notebook(page).locator(".jp-OutputArea-output").all_inner_texts()
        noisy = [text for text in outputs if any(noise in text for noise in NOISE)]
        assert not noisy, f"run {run + 1}: {noisy}"
        if run == 0:
            screenshot(page, "restart-run-all-02")
    assert len(seen) == RUNS
