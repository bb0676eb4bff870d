"""nbval runs the tutorials beside the tests (see the Makefile). Their checked outputs were
saved on a machine without CUDA, so the kernels that run them see no GPU, whatever this
machine has; the tests in tests/ still see every GPU."""

import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    """A notebook's kernel starts as its first cell is set up, with this environment."""
    saved = os.environ.get("CUDA_VISIBLE_DEVICES")
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    try:
        yield
    finally:
        if saved is None:
            del os.environ["CUDA_VISIBLE_DEVICES"]
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = saved
