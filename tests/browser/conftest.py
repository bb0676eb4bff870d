"""A real JupyterLab for browser tests: started on 127.0.0.1 with token auth and hermetic
Jupyter dirs, driven by the Debian chromium through Playwright.

Screenshots go to test-artifacts/ at the repository root; a failed test leaves one too.
"""

import contextlib
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from dtfnb.distributed_runtime.cluster import local_addresses

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def needs(*modules):
    """Skips the test without chromium, playwright or any of `modules`."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"browser tests need chromium at {CHROMIUM} (apt-get install chromium); "
                    ".ci/run installs it")
    for module in ("playwright", *modules):
        pytest.importorskip(module, reason=f"browser tests need {module} (pip install -e .[dev])")


def _needs():
    needs("jupyterlab")
    labextension = Path(sys.prefix) / "share/jupyter/labextensions/dtfnb/package.json"
    if not labextension.exists():
        pytest.skip(f"the dtfnb labextension is not installed at {labextension.parent} "
                    "(pip install -e .[dev] builds it)")


class Lab:
    """A running `jupyter lab` server: its URL, token and notebook folder."""

    def __init__(self, home):
        self.home = home
        self.root = home / "notebooks"
        self.token = secrets.token_hex(16)
        self.port = int(local_addresses(1)[0].rsplit(":", 1)[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = home / "lab.log"
        self.process = None

    def env(self):
        env = dict(os.environ)
        env.update(
            JUPYTER_CONFIG_DIR=str(self.home / "config"),
            JUPYTER_DATA_DIR=str(self.home / "data"),
            JUPYTER_RUNTIME_DIR=str(self.home / "runtime"),
            JUPYTERLAB_SETTINGS_DIR=str(self.home / "settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(self.home / "workspaces"),
            IPYTHONDIR=str(self.home / "ipython"),
            # The kernel and the task processes it starts use this interpreter.
            PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        )
        return env

    def start(self, timeout=90.0):
        self.root.mkdir(parents=True)
        # The first start shows a "news" toast over the page: ask for no news.
        notification = self.home / "settings/@jupyterlab/apputils-extension"
        notification.mkdir(parents=True)
        (notification / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        # Every cell in the page, not only those in view: tests read all outputs.
        tracker = self.home / "settings/@jupyterlab/notebook-extension"
        tracker.mkdir(parents=True)
        (tracker / "tracker.jupyterlab-settings").write_text(
            json.dumps({"windowingMode": "none"}))
        command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
                   "--ip=127.0.0.1", f"--port={self.port}", "--ServerApp.port_retries=0",
                   f"--IdentityProvider.token={self.token}",
                   f"--ServerApp.root_dir={self.root}",
                   "--FileContentsManager.delete_to_trash=False"]
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(command, cwd=self.root, env=self.env(),
                                            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.process.returncode}:\n"
                                   f"{self.log_tail()}")
            try:
                self.api("status")
                return
            except OSError:
                time.sleep(0.25)
        raise TimeoutError(f"jupyter lab did not answer in {timeout} s:\n{self.log_tail()}")

    def api(self, path, method="GET", timeout=5.0):
        request = urllib.request.Request(f"{self.url}/api/{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        # Shut kernels down first: their clusters' task processes go with them.
        try:
            for session in self.api("sessions"):
                self.api(f"kernels/{session['kernel']['id']}", method="DELETE", timeout=20.0)
        except OSError:
            pass
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)

    def log_tail(self, lines=40):
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    _needs()
    lab = Lab(tmp_path_factory.mktemp("lab"))
    try:
        lab.start()
        yield lab
    finally:
        lab.stop()


@contextlib.contextmanager
def chromium_page():
    """A page of the system chromium, 1440 by 900, driven by Playwright."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            page = context.new_page()
            page.set_default_timeout(60_000)
            yield page
        finally:
            browser.close()


@pytest.fixture(scope="module")
def page(lab):
    with chromium_page() as page:
        yield page


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


@pytest.fixture(autouse=True)
def screenshot_on_failure(request, page):
    """A failed browser test leaves test-artifacts/FAILED-<test>.png behind."""
    yield
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        # Bytes, written here: Playwright's own file writing starts threads.
        (ARTIFACTS / f"FAILED-{request.node.name}.png").write_bytes(page.screenshot())
