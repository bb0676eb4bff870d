"""The README's two commands, from a fresh clone: `make lab` sets everything up and serves
JupyterLab with the dtfnb panel; `make test` sets up, lints and collects the whole suite.
And what else the README promises: its example runs, and its links and the docs' lead
somewhere.

The test command only collects here (`--collect-only`): running the suite inside
itself would double CI's time, and this very run is the suite.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from dtfnb.distributed_runtime.cluster import local_addresses
from tests.helpers import ROOT


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout")
    if shutil.which("node") is None:
        pytest.skip("building the JupyterLab panel needs node (.ci/run installs it)")
    target = tmp_path_factory.mktemp("fresh") / "dtfnb"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(target)], check=True)
    return target


def _env():
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(str(ROOT)))
    return env


def _get(url):
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


@pytest.mark.timeout(900)
def test_make_lab_sets_up_and_serves_the_tutorials_with_the_panel(clone, tmp_path):
    port = local_addresses(1)[0].rsplit(":", 1)[1]
    token = "readme-test"
    env = dict(_env(), JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    args = f"--no-browser --port={port} --ServerApp.port_retries=0 --IdentityProvider.token={token}"
    log = open(tmp_path / "make-lab.log", "wb")
    lab = subprocess.Popen(["make", "lab", f"LAB_ARGS={args}"], cwd=clone, env=env,
                           stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 840
        page = None
        while page is None:
            assert lab.poll() is None, (tmp_path / "make-lab.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "JupyterLab never answered"
            try:
                page = _get(f"http://127.0.0.1:{port}/lab?token={token}")
            except OSError:
                time.sleep(1)
        assert '"name": "dtfnb"' in page or '"name":"dtfnb"' in page  # a federated extension
        assert "01_devices_on_one_machine.ipynb" in _get(
            f"http://127.0.0.1:{port}/api/contents?token={token}")
        listed = subprocess.run([str(clone / ".venv/bin/jupyter"), "labextension", "list"],
                                env=env, capture_output=True, text=True, check=True)
        line = next(s for s in (listed.stdout + listed.stderr).splitlines()
                    if s.split()[:1] == ["dtfnb"])
        assert "enabled" in line and "OK" in line, line
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        lab.wait(30)
        log.close()


@pytest.mark.timeout(900)
def test_make_test_sets_up_lints_and_collects_the_suite_and_the_notebooks(clone):
    done = subprocess.run(["make", "test"], cwd=clone, capture_output=True, text=True,
                          env=dict(_env(), PYTEST_ADDOPTS="--collect-only -q"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "All checks passed" in done.stdout
    # `make test`'s -q and PYTEST_ADDOPTS's -q list each file with its count of tests
    assert "tests/local/test_session.py: " in done.stdout
    assert "notebooks/01_devices_on_one_machine.ipynb: " in done.stdout


def test_the_readme_example_runs_and_prints_what_it_says():
    readme = (ROOT / "README.md").read_text()
    [example] = [block for block in re.findall(r"```python\n(.*?)```", readme, re.S)
                 if "ClusterSpec" in block]
    for address, free in zip(sorted(set(re.findall(r"127\.0\.0\.1:\d+", example))),
                             local_addresses(3), strict=True):
        example = example.replace(address, free)
    done = subprocess.run([sys.executable, "-c", example], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == re.findall(r"print\(.*# (\S+)", example)


def _prose(markdown):
    """The text outside code, where a link is a link."""
    return re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", markdown, flags=re.S))


def _anchors(page):
    """GitHub's ids for the headings of a page, and the ids of its explicit anchors
    (`<a id="...">`)."""
    text = _prose(page.read_text())
    return {re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
            for title in re.findall(r"^#+ (.*)$", text, re.M)} | set(
        re.findall(r'<a id="([^"]+)">', text))


def test_relative_links_in_the_readme_and_the_docs_lead_to_what_exists():
    pages = [ROOT / "README.md", ROOT / "notebooks/README.md", *(ROOT / "docs").glob("*.md")]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", _prose(page.read_text())):
            if re.match(r"[a-z]+:", target):   # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists() or anchor and anchor not in _anchors(linked):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, broken


def test_files_the_readme_and_the_docs_name_exist():
    """A path in code, `tests/distributed/test_servers.py`, is one a reader will open."""
    pages = [ROOT / "README.md", ROOT / "notebooks/README.md", *(ROOT / "docs").glob("*.md")]
    missing = [f"{page.relative_to(ROOT)}: {path}" for page in pages
               for path in re.findall(r"`((?:dtfnb|tests|docs|notebooks|benchmarks|examples)/"
                                      r"[\w/.-]+\.(?:py|md|ipynb))`", page.read_text())
               if not (ROOT / path).exists()]
    assert not missing, missing
