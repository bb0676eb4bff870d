"""Notebook 13 where no sshd can start (a laptop without OpenSSH's server): it says so, its
cluster starts with the local launcher, and every cell runs with the checked outputs
saved from a run over ssh (nbval, as `make test` runs the notebooks)."""

import os
import pathlib
import subprocess
import sys

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "13_beyond_one_machine.ipynb"
SSHD_PATH = '"/usr/sbin:/usr/local/sbin:/usr/bin"'   # where the notebook looks for sshd


@pytest.mark.timeout(120)
def test_without_sshd_the_cluster_starts_locally(tmp_path):
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    stand_in = next(cell for cell in notebook.cells if "def start_stand_in" in cell.source)
    assert SSHD_PATH in stand_in.source
    stand_in.source = stand_in.source.replace(SSHD_PATH, repr(str(tmp_path)))   # no sshd
    notebook.cells.append(nbformat.v4.new_code_cell(
        'assert stand_in is None and ssh_options == "--launcher local"\n'
        'assert cluster.launcher.name == "local"'))
    nbformat.write(notebook, tmp_path / NOTEBOOK.name)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="",   # as the saved outputs were made
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
         "--nbval-current-env", "--nbval-sanitize-with",
         str(ROOT / "notebooks" / "sanitize.cfg"), NOTEBOOK.name],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=110)
    assert result.returncode == 0, result.stdout[-3000:]
