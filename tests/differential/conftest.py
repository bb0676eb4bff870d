"""The differential tier: the same TF1 code on dtfnb and on real TensorFlow.

TensorFlow is never a dependency of dtfnb: it runs in its own interpreter, named by
$DTFNB_TF_PYTHON or found at .tfvenv/bin/python (`make tfvenv` creates it; `.ci/run`
does). Without one, the tier skips and says how to get one.
"""

import json
import os
import selectors
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import tensorflow_python

HERE = Path(__file__).parent
TF_VERSION = "2.21."
ANSWER_SECONDS = 60  # the slowest case (a blocking op with its timeout) takes well under


class TensorFlowWorker:
    """tf_worker.py in TensorFlow's interpreter; `observe(module, case)` asks it."""

    def __init__(self, python):
        self._proc = subprocess.Popen(
            [python, str(HERE / "tf_worker.py")], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env=dict(os.environ, PYTHONPATH="", CUDA_VISIBLE_DEVICES=""))
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._proc.stdout, selectors.EVENT_READ)
        self.version = self._answer(timeout=300)["version"]

    def observe(self, module, case):
        self._proc.stdin.write(json.dumps({"module": module, "case": case}) + "\n")
        self._proc.stdin.flush()
        return self._answer(ANSWER_SECONDS)

    def _answer(self, timeout):
        if not self._selector.select(timeout):
            self.close()
            raise TimeoutError(f"TensorFlow's worker gave no answer in {timeout} s")
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"TensorFlow's worker exited ({self._proc.wait()})")
        return json.loads(line)

    def close(self):
        self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


@pytest.fixture(scope="session")
def tensorflow():
    python = tensorflow_python()
    if python is None:
        pytest.skip("differential tier: no TensorFlow interpreter; run `make tfvenv` "
                    "(tensorflow-cpu==2.21.* in .tfvenv) or set DTFNB_TF_PYTHON")
    worker = TensorFlowWorker(python)
    if not worker.version.startswith(TF_VERSION):
        worker.close()
        pytest.fail(f"the differential tier compares with TensorFlow {TF_VERSION}*, "
                    f"{python} has {worker.version}")
    sys.stderr.write(f"\ndifferential tier: TensorFlow {worker.version} at {python}\n")
    yield worker
    worker.close()
