"""The wheel carries the prebuilt JupyterLab panel: `pip wheel .` builds extension/ into
share/jupyter/labextensions/dtfnb, and a venv that installs the wheel lists the
extension as enabled, with no node in sight."""

import json
import os
import site
import subprocess
import sys
import venv
import zipfile

import pytest

from tests.helpers import ROOT

SHARE = "dtfnb-0.1.0.data/data/share/jupyter/labextensions/dtfnb"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q",
                            "-w", str(out)], timeout=300, capture_output=True, text=True)
    assert build.returncode == 0, f"pip wheel failed:\n{build.stdout}\n{build.stderr}"
    [built] = out.glob("dtfnb-*.whl")
    return built


def test_wheel_holds_the_built_extension(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        package = json.loads(archive.read(f"{SHARE}/package.json"))
        install = json.loads(archive.read(f"{SHARE}/install.json"))
    assert package["name"] == "dtfnb"
    build = package["jupyterlab"]["_build"]
    assert f"{SHARE}/{build['load']}" in names   # the federated module's entry point
    assert f"{SHARE}/static/style.js" in names
    assert install["packageName"] == "dtfnb"
    # The sources and node packages stay out; the Python package is all there.
    assert not any("node_modules" in name or name.endswith(".ts") for name in names)
    assert "dtfnb/__init__.py" in names


def test_installed_wheel_enables_the_extension(wheel, tmp_path):
    if importlib_missing("jupyterlab"):
        pytest.skip("needs jupyterlab (pip install -e .[dev])")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    # JupyterLab comes from this environment (no download); dtfnb only from the wheel.
    [packages] = env_dir.glob("lib/python*/site-packages")
    (packages / "outer.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                    "--no-deps", "--no-index", "-q", str(wheel)],
                   check=True, timeout=120, capture_output=True)
    labextension = env_dir / "share/jupyter/labextensions/dtfnb/package.json"
    assert labextension.exists()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("JUPYTER", "PYTHON"))}
    env.update(JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               JUPYTER_DATA_DIR=str(tmp_path / "data"))
    listing = subprocess.run([str(python), "-m", "jupyterlab.labextensions", "list"],
                             env=env, cwd=tmp_path, capture_output=True, text=True,
                             timeout=120, check=True)
    lines = (listing.stdout + listing.stderr).splitlines()
    [line] = [line for line in lines if line.split()[:1] == ["dtfnb"]]
    assert "enabled" in line and "OK" in line, line
    assert str(env_dir / "share/jupyter/labextensions") in listing.stdout + listing.stderr
    where = subprocess.run([str(python), "-c", "import dtfnb; print(dtfnb.__file__)"],
                           env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60,
                           check=True)
    assert where.stdout.startswith(str(env_dir))


def importlib_missing(name):
    import importlib.util

    return importlib.util.find_spec(name) is None
