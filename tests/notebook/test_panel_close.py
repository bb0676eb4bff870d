"""Restart and Run All with the panel showing, in a real kernel driven as JupyterLab 4.6
drives it: the cells are queued first, then the panel's hello crosses the comm that
`%load_ext dtfnb` opens, and the panel has the kernel close the one it does not keep.
It never sends comm_close itself: JupyterLab sends that on the comm's subshell and deletes
the subshell at once, and ipykernel then drops the message with "Task was destroyed but
it is pending!" in the running cell (docs/panel-protocol.md)."""

import uuid

from tests.notebook.kernel_util import Kernel

CELLS = ["%load_ext dtfnb\nimport dtfnb as tf",
         "server = tf.train.Server.create_local_server()\nprint(server.target)"]
ASYNCIO_ERRORS = ("Task was destroyed", "was never awaited")


def _request(kernel, channel, msg_type, content, subshell=None):
    message = kernel.client.session.msg(msg_type, content)
    if subshell is not None:
        message["header"]["subshell_id"] = subshell
    getattr(kernel.client, f"{channel}_channel").send(message)
    return message["header"]["msg_id"]


def _subshell(kernel):
    """A new subshell, as JupyterLab makes one per comm target."""
    msg_id = _request(kernel, "control", "create_subshell_request", {})
    while True:
        reply = kernel.client.control_channel.get_msg(timeout=10)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"]["subshell_id"]


def _until(kernel, seen, found, timeout=10):
    """The first message of iopub, read into `seen` as far as needed, with `found(message)`."""
    for message in seen:
        if found(message):
            return message
    while True:
        message = kernel.client.get_iopub_msg(timeout=timeout)
        seen.append(message)
        if found(message):
            return message


def _run_all(kernel):
    """Queues the cells, then says hello as the panel does, keeps its own comm, has the kernel
    close the crossed one, and asks for a snapshot; every iopub message up to the end."""
    seen = []
    cells = [kernel.client.execute(code) for code in CELLS]
    subshell = _subshell(kernel)
    hello = uuid.uuid4().hex   # opened on the main shell: the subshell is not known yet
    _request(kernel, "shell", "comm_open", {
        "comm_id": hello, "target_name": "dtfnb.panel", "data": {"type": "hello"}})
    opened = _until(kernel, seen, lambda m: m["msg_type"] == "comm_open"
                    and m["content"]["target_name"] == "dtfnb.panel")
    theirs = opened["content"]["comm_id"]
    _request(kernel, "shell", "comm_msg", {"comm_id": theirs, "data": {"type": "close"}},
             subshell)
    _until(kernel, seen, lambda m: m["msg_type"] == "comm_close"
           and m["content"]["comm_id"] == theirs)
    _request(kernel, "shell", "comm_msg", {"comm_id": hello, "data": {"type": "refresh"}},
             subshell)
    _until(kernel, seen, lambda m: m["msg_type"] == "status"
           and m["parent_header"].get("msg_id") == cells[-1]
           and m["content"]["execution_state"] == "idle")
    return hello, seen + kernel.iopub(1.0)


def test_restart_and_run_all_closes_the_crossed_comm_without_asyncio_errors():
    kernel = Kernel()
    try:
        for run in range(3):
            if run:
                kernel.manager.restart_kernel(now=True)
                kernel.client.wait_for_ready(timeout=60)
                kernel.iopub(0.2)
            hello, seen = _run_all(kernel)
            snapshots = [m for m in seen if m["msg_type"] == "comm_msg"
                         and m["content"]["comm_id"] == hello]
            assert snapshots and snapshots[-1]["content"]["data"]["type"] == "snapshot"
            assert not [m for m in seen if m["msg_type"] == "comm_close"
                        and m["content"]["comm_id"] == hello]
            texts = [str(m["content"]) for m in seen]
            assert not [t for t in texts if any(e in t for e in ASYNCIO_ERRORS)]
            assert any("grpc://localhost:" in t for t in texts)
    finally:
        kernel.stop()
