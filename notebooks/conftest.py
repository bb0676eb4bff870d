"""nbval runs the tutorials beside the tests (see the Makefile). Their checked outputs were
saved on a machine without CUDA, so the kernels that run them see no GPU, whatever this
machine has; the tests in tests/ still see every GPU. A PlacementView's data and picture
name its step, time and session, which change from run to run: nbval compares its text."""

import os

import pytest

_UNCOMPARED = ("application/vnd.dtfnb.placement+json", "image/svg+xml")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    """A notebook's kernel starts as its first cell is set up, with this environment."""
    notebook = item.parent
    if hasattr(notebook, "skip_compare") and _UNCOMPARED[0] not in notebook.skip_compare:
        notebook.skip_compare += _UNCOMPARED
    saved = os.environ.get("CUDA_VISIBLE_DEVICES")
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    try:
        yield
    finally:
        if saved is None:
            del os.environ["CUDA_VISIBLE_DEVICES"]
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = saved
