"""%board in a real kernel: TensorBoard on a log directory, in TensorBoard's own frame,
bound to 127.0.0.1, reused, spared by an interrupt, gone with its kernel; what it says
without TensorBoard; and outside a notebook, where it is."""

import json
import os
import re
import signal
import urllib.request

import pytest
from IPython.core.error import UsageError

import dtfnb as tf
from dtfnb.notebook.board import live_boards
from tests.helpers import poll_for
from tests.notebook.kernel_util import Kernel, outputs, running, stdout

pytest.importorskip("tensorboard", reason="%board needs tensorboard (pip install -e .[dev])")


@pytest.fixture(scope="module")
def kernel():
    kernel = Kernel()
    kernel.execute("%load_ext dtfnb")
    yield kernel
    kernel.stop()


@pytest.fixture
def logdir(tmp_path):
    """A log directory with one run, worker_0, of a `loss` summary at steps 1 and 2."""
    with tf.Graph().as_default():
        loss = tf.placeholder(tf.float32)
        summary = tf.summary.scalar("loss", loss)
        with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path / "worker_0")) as writer:
            for step, value in ((1, 2.5), (2, 1.5)):
                writer.add_summary(sess.run(summary, {loss: value}), step)
    return tmp_path


# Imports of tensorboard fail in the kernel as they do where it is not installed.
NO_TENSORBOARD = """
import sys

class Absent:
    def find_spec(self, name, path=None, target=None):
        if name == "tensorboard":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

absent = Absent()
sys.meta_path.insert(0, absent)
"""


def listening(port):
    """The local addresses (as /proc/net writes them) of the TCP sockets listening on `port`."""
    addresses = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                local, state = row.split()[1], row.split()[3]
                address, hex_port = local.split(":")
                if state == "0A" and int(hex_port, 16) == port:
                    addresses.append(address)
    return addresses


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}", timeout=10) as response:
        return json.loads(response.read())


def shown(messages):
    """The port and pid of the TensorBoard that a %board cell shows, from its frame and
    from TensorBoard's line above it."""
    (frame,) = [data["text/html"] for data in outputs(messages)]
    port = int(re.search(r"const port = (\d+);", frame)[1])
    said = re.fullmatch(r"Selecting TensorBoard with logdir (.+) \(started .* ago; "
                        r"port (\d+), pid (\d+)\)\.\n", stdout(messages))
    assert said and int(said[2]) == port
    return said[1], port, int(said[3])


def test_without_tensorboard_it_says_what_to_install(kernel, tmp_path):
    kernel.execute(NO_TENSORBOARD)
    try:
        messages = kernel.execute(f"%board {tmp_path}")
    finally:
        kernel.execute("sys.meta_path.remove(absent)")
    assert [(m["content"]["name"], m["content"]["text"]) for m in messages
            if m["msg_type"] == "stream"] == [
        ("stderr", "UsageError: TensorBoard is not installed: pip install dtfnb[tensorboard]\n")]


def test_board_serves_a_logdir_on_localhost_once_and_dies_with_its_kernel(kernel, logdir):
    served, port, pid = shown(kernel.execute(f"%board {logdir}"))
    assert served == str(logdir)
    assert listening(port) == ["0100007F"]   # 127.0.0.1, and nothing else
    assert get(port, "data/runs") == ["worker_0"]
    scalars = get(port, "data/plugin/scalars/scalars?run=worker_0&tag=loss")
    assert [(step, value) for _, step, value in scalars] == [(1, 2.5), (2, 1.5)]

    assert shown(kernel.execute(f"%board {logdir}"))[1:] == (port, pid)   # reused
    kernel.manager.interrupt_kernel()   # SIGINT to the kernel's group spares it
    kernel.iopub(0.5)
    assert running(pid)

    os.kill(kernel.pid, signal.SIGKILL)
    assert poll_for(lambda: not running(pid), timeout=15)
    from tensorboard import manager

    assert pid not in [info.pid for info in manager.get_all()]   # it removed its info file


def test_outside_a_notebook_it_says_where_tensorboard_is(shell, logdir, capsys):
    shell.run_line_magic("board", str(logdir))
    (board,) = live_boards()
    try:
        assert capsys.readouterr().out.endswith(
            f"Please visit http://localhost:{board.port} in a web browser.\n")
        assert get(board.port, "data/runs") == ["worker_0"]
        with pytest.raises(UsageError, match=f"could not bind to port {board.port}"):
            shell.run_line_magic("board", f"{logdir}/worker_0 --port {board.port}")
    finally:
        board.stop()
    assert not board.running() and live_boards() == []
