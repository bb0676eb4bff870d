"""A real IPython kernel for tests: start it, run cells, read what they show on iopub;
and whether a process still runs."""

import contextlib
import queue
import time

from jupyter_client.manager import KernelManager


class Kernel:
    """A kernel process (python3 of this environment) and a blocking client on it."""

    def __init__(self):
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel()
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    @property
    def pid(self):
        return self.manager.provisioner.process.pid

    def execute(self, code, timeout=60):
        """Runs `code` as a cell; returns its iopub messages up to idle. Raises on error."""
        messages = self.run(code, timeout)
        errors = [m for m in messages if m["msg_type"] == "error"]
        if errors:
            content = errors[0]["content"]
            raise AssertionError(f"{content['ename']}: {content['evalue']}\n"
                                 + "\n".join(content["traceback"]))
        return messages

    def run(self, code, timeout=60):
        msg_id = self.client.execute(code)
        return self.until_idle(msg_id, timeout)

    def until_idle(self, msg_id, timeout=60):
        messages = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = self.client.get_iopub_msg(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"the cell did not finish in {timeout} s") from None
            if message["parent_header"].get("msg_id") != msg_id:
                messages.append(message)   # comm messages sent from kernel threads
                continue
            if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                return messages
            messages.append(message)

    def iopub(self, timeout):
        """The iopub messages that arrive within `timeout` seconds."""
        messages = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                messages.append(self.client.get_iopub_msg(timeout=0.05))
        return messages

    def stop(self):
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def outputs(messages, kind=("display_data", "execute_result")):
    """The data dicts of the display messages among `messages`."""
    return [m["content"]["data"] for m in messages if m["msg_type"] in kind]


def stdout(messages):
    return "".join(m["content"]["text"] for m in messages
                   if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")


def running(pid):
    """Whether `pid` is a live process (a zombie waiting for its reaper is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone before the open, or the read
        return False
