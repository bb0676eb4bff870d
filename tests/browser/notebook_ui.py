"""What a learner does in JupyterLab, as Playwright steps: write a notebook, open it, run
its cells, read its outputs, restart its kernel."""

import json
import re

from tests.browser.conftest import ARTIFACTS


def write_notebook(path, cells):
    """Writes a notebook of code cells with no outputs."""
    document = {
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}},
        "cells": [{"cell_type": "code", "id": f"cell{i}", "metadata": {}, "source": source,
                   "outputs": [], "execution_count": None} for i, source in enumerate(cells)],
    }
    path.write_text(json.dumps(document))


def screenshot(page, name):
    """Saves the page as test-artifacts/<name>.png."""
    # Bytes, written here: Playwright's own file writing starts threads.
    (ARTIFACTS / f"{name}.png").write_bytes(page.screenshot())


def active_notebook(page):
    """The notebook in the main area's current tab."""
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")


def cell(page, index):
    """The cell at `index` of the active notebook."""
    return active_notebook(page).locator(".jp-Cell").nth(index)


def run_all(page, cells):
    """Runs every cell in order, as Shift+Enter from the first cell does."""
    active_notebook(page).locator(".jp-Cell").first.locator(".jp-InputPrompt").click()
    for _ in cells:
        page.keyboard.press("Shift+Enter")


def run_cell(page, index):
    """Runs one cell in place, as Ctrl+Enter on a selected cell does."""
    cell(page, index).locator(".jp-InputPrompt").click()
    page.keyboard.press("Control+Enter")


def wait_until_idle(page, index, timeout=90_000):
    """Waits until the cell at `index` has run: its prompt holds a number, not `*`."""
    from playwright.sync_api import expect

    expect(cell(page, index).locator(".jp-InputArea-prompt")).to_have_text(
        re.compile(r"\[\d+\]"), timeout=timeout)


def output(page, index):
    """The first output of the cell at `index`."""
    return cell(page, index).locator(".jp-OutputArea-output").first


def wait_for_kernel(page):
    """Waits until the notebook's kernel is up: a cell run before it is, does not run."""
    page.locator("#jp-main-statusbar", has_text="| Idle").wait_for(timeout=60_000)


def open_notebook(lab, page, name, cells):
    """Writes `name` with `cells` and opens it in the main area."""
    from playwright.sync_api import expect

    write_notebook(lab.root / name, cells)
    page.goto(f"{lab.url}/lab/tree/{name}?token={lab.token}")
    # The restored workspace may bring an earlier notebook to the front first.
    expect(page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current")).to_contain_text(
        name, timeout=60_000)
    active_notebook(page).locator(".jp-Cell").first.wait_for()


def show_tab(page, name):
    """Brings the main-area tab `name` to the front."""
    page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text=name).click()


def run_beside_panel(lab, page, name, cells, last):
    """Opens notebook `name` of `cells` with the dtfnb side panel shown, runs its cells up
    to `last` one by one, and returns the panel."""
    open_notebook(lab, page, name, cells)
    page.locator('.jp-SideBar .lm-TabBar-tab[data-id="dtfnb-panel"]').click()
    wait_for_kernel(page)
    for index in range(last + 1):
        run_cell(page, index)
        wait_until_idle(page, index)
    return page.locator("#dtfnb-panel")
