"""An IPython shell of this process with dtfnb loaded, shared by the fast magic tests."""

import pytest
from IPython.core.interactiveshell import InteractiveShell


@pytest.fixture(scope="session")
def shell():
    shell = InteractiveShell.instance()   # its history thread lives as long as the tests
    shell.run_line_magic("load_ext", "dtfnb")
    yield shell
    shell.run_line_magic("cluster", "stop --all")
    shell.run_line_magic("unload_ext", "dtfnb")
