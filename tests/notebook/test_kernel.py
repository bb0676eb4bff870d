"""dtfnb in a real IPython kernel, driven as a notebook frontend drives it: cells run over
jupyter_client, outputs read from iopub, the panel's comm opened from the client side."""

import re
import uuid

import pytest

from dtfnb.notebook import palette
from tests.notebook.kernel_util import Kernel, outputs, stdout

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PLACEMENT = "application/vnd.dtfnb.placement+json"
ADDRESS = re.compile(r"127\.0\.0\.1|localhost|:\d{4,5}\b|0x[0-9a-f]+")


@pytest.fixture(scope="module")
def kernel():
    kernel = Kernel()
    yield kernel
    kernel.stop()


@pytest.fixture(scope="module")
def loaded(kernel):
    """The kernel after `%load_ext dtfnb`, and the comm it opened then."""
    messages = kernel.execute("%load_ext dtfnb\nimport dtfnb as tf")
    opened = [m["content"] for m in messages if m["msg_type"] == "comm_open"]
    yield kernel, opened


def _comm_snapshots(messages, comm_id):
    return [m["content"]["data"] for m in messages
            if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm_id]


def test_load_ext_opens_the_panel_comm_with_a_snapshot(loaded):
    _, opened = loaded
    (comm,) = [c for c in opened if c["target_name"] == "dtfnb.panel"]
    assert comm["data"] == {"type": "snapshot", "version": 2, "clusters": [], "devices": [],
                            "sessions": [], "plans": {}, "queues": []}


def test_cluster_cell_shows_progress_and_a_cluster_view(loaded):
    kernel, _ = loaded
    texts = []
    for _ in range(2):   # saved outputs must not change from run to run
        messages = kernel.execute("%%cluster --name demo --link ps=10Gbit\nps: 1\nworker: 2\n")
        shown = outputs(messages)
        assert [set(d) for d in shown] == [{WIDGET_VIEW, "text/plain"},
                                           {WIDGET_VIEW, "text/plain", "text/html"}]
        texts.append([d["text/plain"] for d in shown])
        assert not [m for m in messages if m["msg_type"] == "stream"]   # task logs stay out
    assert texts[0] == texts[1] == [
        "<progress 'Starting demo' of 3>",
        "ClusterView 'demo': 3 tasks\n  /job:ps/replica:0/task:0: 1 device; emulated: 10 Gbit/s\n"
        "  /job:worker/replica:0/task:0: 1 device\n  /job:worker/replica:0/task:1: 1 device"]
    kernel.manager.interrupt_kernel()   # SIGINT to the kernel's group spares the tasks
    kernel.iopub(0.5)
    messages = kernel.execute("print(demo.state('worker', 1), len(demo.logs('ps')) > 0)")
    assert stdout(messages) == "serving True\n"


def test_rich_displays_are_html_with_plain_text_free_of_addresses(loaded):
    kernel, _ = loaded
    kernel.execute("with tf.device('/job:ps/task:0'):\n    v = tf.Variable(1.0, name='v')\n"
                   "with tf.device('/job:worker/task:1'):\n    w = tf.multiply(v, 2.0, name='w')\n"
                   "q = tf.FIFOQueue(4, tf.float32, name='q')\n"
                   "sess = tf.Session(demo.target('worker', 0))\nsess.run(v.initializer)")
    expected = {
        "sess": "<tf.Session of a graph of 7 ops, on a cluster master>",
        "tf.get_default_graph()": "<tf.Graph of 7 ops>",
        "q": "<tf.FIFOQueue 'q' dtypes=[float32]>",
        "demo": "<LocalCluster 'demo' (ps: 1, worker: 2): 3 serving; emulated: ps:0 10 Gbit/s>",
        "w": "<tf.Tensor 'w:0' shape=() dtype=float32>",
        "w.op": "<tf.Operation 'w' type=Mul>",
    }
    for expression, text in expected.items():
        (data,) = outputs(kernel.execute(expression))
        assert data["text/plain"] == text
        assert not ADDRESS.search(data["text/plain"])
        assert data["text/html"].startswith("<b>")
    (data,) = outputs(kernel.execute("demo.spec"))
    assert "<td>ps</td><td>0</td><td>127.0.0.1:" in data["text/html"]


def test_widgets_and_progress_in_the_kernel(loaded):
    kernel, _ = loaded
    messages = kernel.execute(
        "from dtfnb.notebook import PlacementView, progress\n"
        "print(sess.run(w))\nview = PlacementView(sess)\nview")
    assert stdout(messages) == "2.0\n"
    (shown,) = [m for m in messages if m["msg_type"] == "display_data"]
    data = shown["content"]["data"]
    assert data["text/plain"] == (
        "PlacementView: the last step of its session ran 4 ops on 2 devices; 1 tensor "
        "crossed devices\n"
        "  ps:0 CPU:0: 2 ops\n  worker:1 CPU:0: 2 ops\n"
        "  v/read:0 (ps:0 CPU:0) -> w (worker:1 CPU:0)")
    placement = data[PLACEMENT]
    assert [d["short"] for d in placement["devices"]] == ["ps:0 CPU:0", "worker:1 CPU:0"]
    assert data["image/svg+xml"].startswith("<svg")
    # a new step updates the same output in place, through its display id
    display_id = shown["content"]["transient"]["display_id"]
    messages = kernel.execute("sess.run(w)") + kernel.iopub(1.5)
    updates = [m["content"] for m in messages if m["msg_type"] == "update_display_data"]
    assert updates and {u["transient"]["display_id"] for u in updates} == {display_id}
    assert updates[-1]["data"][PLACEMENT]["run"]["step"] != placement["run"]["step"]
    messages = kernel.execute("for step in progress(range(3), 'training'):\n    pass")
    (data,) = outputs(messages)
    assert data["text/plain"] == "<progress 'training' of 3>" and WIDGET_VIEW in data
    values = [m["content"]["data"]["state"]["value"] for m in messages
              if m["msg_type"] == "comm_msg" and "value" in m["content"]["data"].get("state", {})]
    assert values[-2:] == [3, "3/3"]   # the bar's value and its count, updated in place


def test_the_panel_comm_opened_by_the_frontend(loaded):
    kernel, _ = loaded
    comm_id = uuid.uuid4().hex
    message = kernel.client.session.msg("comm_open", {
        "comm_id": comm_id, "target_name": "dtfnb.panel", "data": {"type": "hello"}})
    kernel.client.shell_channel.send(message)
    snapshots = _comm_snapshots(kernel.until_idle(message["header"]["msg_id"]), comm_id)
    snapshot = snapshots[-1]
    assert snapshot["type"] == "snapshot" and snapshot["version"] == 2
    (cluster,) = snapshot["clusters"]
    assert (cluster["name"], cluster["state"], cluster["folded"]) == ("demo", "serving", 0)
    assert [(t["job"], t["task"], t["state"]) for t in cluster["tasks"]] == [
        ("ps", 0, "serving"), ("worker", 0, "serving"), ("worker", 1, "serving")]
    assert cluster["tasks"][0]["devices"] == ["/job:ps/replica:0/task:0/device:CPU:0"]
    assert [t["emulated"] for t in cluster["tasks"]] == ["10 Gbit/s", "", ""]
    assert re.fullmatch(r"127\.0\.0\.1:\d+", cluster["tasks"][0]["address"])
    ps_cpu = "/job:ps/replica:0/task:0/device:CPU:0"
    assert [d["short"] for d in snapshot["devices"]] == [
        "ps:0 CPU:0", "worker:0 CPU:0", "worker:1 CPU:0"]
    assert snapshot["devices"][0]["colour"] == palette.colour(ps_cpu)
    (session,) = [s for s in snapshot["sessions"] if s["runs"][0]["task"].startswith(
        "/job:worker/replica:0/task:0")]
    assert session["target"].startswith("grpc://127.0.0.1:") and session["stopped_at"] is None
    run = session["runs"][0]
    assert run["cell"] is not None and run["error"] == ""
    plan = snapshot["plans"][run["plan"]]
    devices = {n["name"]: n["device"] for n in plan["nodes"]}
    assert devices["w"] == "/job:worker/replica:0/task:1/device:CPU:0"
    assert "v/Assign" not in devices   # only what the last run executed
    assert {n["name"]: n["requested"] for n in plan["nodes"]}["v"] == "/job:ps/task:0"
    assert set(snapshot["plans"]) == {r["plan"] for s in snapshot["sessions"] for r in s["runs"]}
    # a change is pushed without asking: a queue on the ps fills
    messages = kernel.execute("with tf.device('/job:ps/task:0'):\n"
                   "    fifo = tf.FIFOQueue(10, tf.float32, name='fifo', shared_name='fifo')\n"
                   "sess.run(fifo.enqueue_many([[1.0, 2.0, 3.0]]))")
    messages += kernel.iopub(2.0)
    pushed = [s for s in _comm_snapshots(messages, comm_id) if s["queues"]]
    assert pushed
    (queue,) = pushed[-1]["queues"]
    assert {k: queue[k] for k in ("name", "device", "size", "capacity", "closed", "summary",
                                  "stopped_at")} == {
        "name": "fifo", "device": ps_cpu, "size": 3, "capacity": 10, "closed": False,
        "summary": "queue/fifo/fraction_of_10_full", "stopped_at": None}
    refresh = kernel.client.session.msg("comm_msg", {"comm_id": comm_id,
                                                     "data": {"type": "refresh"}})
    kernel.client.shell_channel.send(refresh)
    (again,) = _comm_snapshots(kernel.until_idle(refresh["header"]["msg_id"]), comm_id)
    assert again["queues"][0]["size"] == 3
    assert [t["address"] for t in again["clusters"][0]["tasks"]] == \
        [t["address"] for t in cluster["tasks"]]
    work = {t["job"] + str(t["task"]): t["work"] for t in again["clusters"][0]["tasks"]}
    assert work["worker0"]["steps_run"] >= 2   # worker 0 is the master
    assert work["ps0"]["graphs_run"] >= 1 and work["ps0"]["bytes_sent"] > 0   # not "0 steps"
    messages = kernel.execute("%cluster stop demo") + kernel.iopub(1.0)
    (stopped,) = _comm_snapshots(messages, comm_id)[-1]["clusters"]
    assert (stopped["state"], stopped["name"]) == ("stopped", "demo")
    assert re.fullmatch(r"\d\d:\d\d", stopped["stopped_at"])
    assert {t["state"] for t in stopped["tasks"]} == {"stopped"}
    last = _comm_snapshots(messages, comm_id)[-1]
    (queue,) = last["queues"]
    assert queue["stopped_at"] == stopped["stopped_at"]
    assert queue["enqueued_per_second"] == queue["dequeued_per_second"] == 0
    assert all(d["stopped_at"] for d in last["devices"])
    assert all(s["stopped_at"] for s in last["sessions"])
    # in-kernel servers: a stopped one folds into a count
    messages = kernel.execute("server = tf.train.Server.create_local_server()\nserver.stop()")
    messages += kernel.iopub(1.0)
    servers = _comm_snapshots(messages, comm_id)[-1]["clusters"][-1]
    assert (servers["name"], servers["state"], servers["tasks"], servers["folded"]) == (
        "servers in this kernel", "stopped", [], 1)


def test_the_kernels_comm_carries_changes_only_once_a_panel_speaks(loaded):
    """Without a panel (nbval, a plain Jupyter) nothing is sent after the first snapshot."""
    kernel, opened = loaded
    (comm,) = [c for c in opened if c["target_name"] == "dtfnb.panel"]
    change = "with tf.Graph().as_default(), tf.Session() as quiet:\n    quiet.run(tf.constant(1.0))"
    messages = kernel.execute(change) + kernel.iopub(1.0)
    assert _comm_snapshots(messages, comm["comm_id"]) == []
    refresh = kernel.client.session.msg("comm_msg", {"comm_id": comm["comm_id"],
                                                     "data": {"type": "refresh"}})
    kernel.client.shell_channel.send(refresh)
    (answer,) = _comm_snapshots(kernel.until_idle(refresh["header"]["msg_id"]), comm["comm_id"])
    assert answer["sessions"]
    messages = kernel.execute(change) + kernel.iopub(1.0)
    assert _comm_snapshots(messages, comm["comm_id"])   # now it listens: changes come


def test_unload_closes_the_panel_comm_and_load_opens_another(loaded):
    kernel, _ = loaded
    closed = [m for m in kernel.execute("%unload_ext dtfnb") if m["msg_type"] == "comm_close"]
    assert closed
    opened = [m["content"] for m in kernel.execute("%load_ext dtfnb")
              if m["msg_type"] == "comm_open"]
    assert [c["target_name"] for c in opened] == ["dtfnb.panel"]
    assert opened[0]["data"]["type"] == "snapshot"


def test_a_results_plot_shows_as_a_picture_once():
    """In a kernel that has drawn nothing yet, Result.plot() shows as a PNG (a bare
    matplotlib Figure would be text there), as the cell's value only."""
    kernel = Kernel()
    try:
        messages = kernel.execute("from dtfnb.notebook.experiment import Result\n"
                                  "Result({'a': [{'seconds': 1.0}]}, 1, 0, 'test').plot()")
    finally:
        kernel.stop()
    assert [sorted(data) for data in outputs(messages)] == [["image/png", "text/plain"]]
