"""What a learner sees of a distributed training step, checked in a real JupyterLab: the
panel draws exactly the ops the step ran, in the colours the cell outputs use; a folded
`gradients/` scope opens on click; StalenessPlot shows points while training runs; after
`cluster.stop()` nothing looks live; and 02 restarts and runs without asyncio noise.
Screenshots of each state go to test-artifacts/."""

import inspect
import json
import os
import re
import time

import pytest

from tests.browser.conftest import ROOT
from tests.browser.notebook_ui import (
    cell,
    output,
    run_beside_panel,
    run_cell,
    screenshot,
    wait_until_idle,
)
from tests.browser.placements import linear_regression

README_IMAGE = ROOT / "docs/images/placement.png"
PS0, PS1 = "/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0"
WORKER0 = "/job:worker/replica:0/task:0/device:CPU:0"

MODEL = """\
import json, threading, time
import numpy as np
import dtfnb as tf
from dtfnb.notebook import PlacementView, QueueMonitor, StalenessPlot

BATCH = 4


""" + inspect.getsource(linear_regression) + """

def model(task):
    graph, (training_op, loss), _ = linear_regression(task)
    with graph.as_default():
        init = tf.global_variables_initializer()
    tensor = graph.get_tensor_by_name
    return graph, tensor("X:0"), tensor("y:0"), loss, training_op, init

graph, X, y, loss, training_op, init = model(0)
data = {X: np.ones((4, 3)), y: np.zeros((4, 1))}
sess = tf.Session(cluster.target("worker", 0), graph=graph)
sess.run(init)"""

STEP = """\
metadata = tf.RunMetadata()
sess.run([training_op, loss], feed_dict=data, run_metadata=metadata,
         options=tf.RunOptions(output_partition_graphs=True))
executed = sorted({node.name for partition in metadata.partition_graphs
                   for node in partition.node if not node.op.startswith("_")})
print(json.dumps(executed))"""

QUEUE = """\
with graph.as_default(), tf.device("/job:ps/task:1"):
    queue = tf.FIFOQueue(10, [tf.float32], shapes=[[]], name="q", shared_name="q")
    enqueue = queue.enqueue([1.0])
for _ in range(3):
    sess.run(enqueue)
QueueMonitor(cluster)"""

TRAIN = """\
plot = StalenessPlot(cluster)
display(plot)
stop = threading.Event()

def train(task):
    graph, X, y, loss, training_op, _ = model(task)
    with tf.Session(cluster.target("worker", task), graph=graph) as session:
        while not stop.is_set():
            session.run([training_op, loss], feed_dict={X: np.ones((4, 3)), y: np.zeros((4, 1))})
            time.sleep(0.005)

threads = [threading.Thread(target=train, args=(task,)) for task in (0, 1)]
for thread in threads:
    thread.start()"""

END_TRAINING = """\
print("training still running:", all(thread.is_alive() for thread in threads))
stop.set()
for thread in threads:
    thread.join()"""

FAIL = """\
try:
    sess.run(queue.dequeue_many(10), options=tf.RunOptions(timeout_in_ms=300))
except tf.errors.DeadlineExceededError:
    print("DeadlineExceededError; still queued:", sess.run(queue.size()))"""

CELLS = ["%load_ext dtfnb", "%%cluster\nps: 2\nworker: 2", MODEL, STEP, "PlacementView(sess)",
         QUEUE, TRAIN, END_TRAINING, FAIL, "cluster.stop()"]
STEP_CELL, VIEW_CELL, QUEUE_CELL, TRAIN_CELL, END_CELL, FAIL_CELL, STOP_CELL = range(3, 10)


@pytest.fixture(scope="module")
def panel(lab, page):
    """The dtfnb panel beside seeing.ipynb, whose cells up to the PlacementView have run."""
    return run_beside_panel(lab, page, "seeing.ipynb", CELLS, VIEW_CELL)


def graph_in(root):
    """The placement graph inside `root`, once drawn."""
    from playwright.sync_api import expect

    graph = root.locator(".dtfnb-placement")
    expect(graph).to_have_attribute("data-render-ms", re.compile(r"^\d"), timeout=60_000)
    return graph


def shown_ops(graph):
    """(names of the ops drawn, {folded scope: its op count}) of a drawn graph."""
    seen = graph.evaluate("""root => ({
        ops: [...root.querySelectorAll('.dtfnb-op')].map(op => op.dataset.name),
        folded: [...root.querySelectorAll('.dtfnb-folded')].map(
            node => [node.dataset.scope, Number(node.dataset.size)]),
    })""")
    return seen["ops"], dict(seen["folded"])


def test_the_panel_draws_exactly_the_ops_the_step_ran(panel, page):
    from playwright.sync_api import expect

    executed = set(json.loads(output(page, STEP_CELL).inner_text()))
    graph = graph_in(panel)
    # The newest run is the training step of cell [4] (the PlacementView cell runs none).
    expect(graph.locator(".dtfnb-run-cell")).to_have_text(f"[{STEP_CELL + 1}]")
    ops, folded = shown_ops(graph)
    assert set(ops) <= executed
    assert len(ops) + sum(folded.values()) == len(executed), (ops, folded)
    assert "init" not in ops and "init" not in folded   # ran in cell [3], not in this step
    assert {"dnn/w", "dnn/MatMul", "loss"} <= set(ops)
    assert "gradients" in folded
    screenshot(page, "seeing-step")
    graph.locator('.dtfnb-folded[data-scope="gradients"]').dispatch_event("click")
    opened = graph.locator('.dtfnb-scope[data-scope="gradients"]')
    expect(opened.locator(".dtfnb-op").first).to_be_visible()
    ops_now, folded_now = shown_ops(graph)
    inside = [name for name in ops_now if name.startswith("gradients/")]
    assert inside and set(inside) <= executed
    assert len(ops_now) + sum(folded_now.values()) == len(executed)
    screenshot(page, "seeing-gradients-open")


def _colours(graph):
    """{device: legend colour} and [(device, fill)] of every op box of a drawn graph."""
    return graph.evaluate("""root => ({
        legend: Object.fromEntries([...root.querySelectorAll('.dtfnb-legend-item')].map(
            item => [item.dataset.device,
                     getComputedStyle(item.querySelector('.dtfnb-swatch')).backgroundColor])),
        ops: [...root.querySelectorAll('.dtfnb-op')].map(
            op => [op.dataset.device, op.querySelector('.dtfnb-op-box').getAttribute('fill')]),
    })""")


def _rgb(colour):
    return "rgb({}, {}, {})".format(*(int(colour[i:i + 2], 16) for i in (1, 3, 5)))


def test_every_device_has_one_colour_in_the_panel_and_in_the_cell_output(panel, page):
    in_panel = _colours(graph_in(panel))
    in_cell = _colours(graph_in(cell(page, VIEW_CELL)))
    assert in_panel["legend"] == in_cell["legend"]
    assert set(in_panel["legend"]) == {PS0, PS1, WORKER0}
    assert len(set(in_panel["legend"].values())) == 3
    for view in (in_panel, in_cell):
        for device, fill in view["ops"]:
            assert _rgb(fill) == view["legend"][device], device
    if os.environ.get("DTFNB_README_IMAGES"):   # refreshes docs/images/placement.png
        cell(page, VIEW_CELL).locator(".dtfnb-open-tab").click()
        tab = graph_in(page.locator(".dtfnb-placement-tab"))
        page.wait_for_timeout(500)   # fitted to the tab
        README_IMAGE.write_bytes(tab.screenshot())
        page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text="Placement:").locator(
            ".lm-TabBar-tabCloseIcon").click()


def test_staleness_is_plotted_while_training_runs_and_a_followed_session_holds_still(
        panel, page):
    from playwright.sync_api import expect

    for index in (QUEUE_CELL, TRAIN_CELL):
        run_cell(page, index)
        wait_until_idle(page, index)
    plot = cell(page, TRAIN_CELL).locator(".dtfnb-staleness")
    expect(plot).to_have_attribute("data-points", re.compile(r"^[1-9]"), timeout=60_000)
    # Two replicas train, each its own session: "latest run" hops between them; following
    # the first session keeps its own last step in view (an enqueue of the queue cell).
    picker = panel.locator(".dtfnb-follow-select")
    first = picker.evaluate("""select => [...select.options].find(
        option => option.textContent.includes('from [3]')).value""")
    picker.select_option(first)
    graph = graph_in(panel)
    shown = set()
    for _ in range(10):
        shown.add(graph.locator(".dtfnb-run-cell").text_content())
        time.sleep(0.2)
    assert shown == {f"[{QUEUE_CELL + 1}]"}
    screenshot(page, "seeing-training")
    run_cell(page, END_CELL)
    wait_until_idle(page, END_CELL)
    expect(output(page, END_CELL)).to_contain_text("training still running: True")


def test_a_step_that_failed_says_so_with_its_error(panel, page):
    from playwright.sync_api import expect

    run_cell(page, FAIL_CELL)
    wait_until_idle(page, FAIL_CELL)
    expect(output(page, FAIL_CELL)).to_contain_text("still queued: 3")   # nothing lost
    # The panel follows sess: its newest run is the dequeue that timed out, then the size.
    failed = panel.locator(".dtfnb-history-run", has=page.locator(".dtfnb-mod-failed"))
    expect(failed).to_have_count(1, timeout=30_000)
    expect(failed).to_contain_text(f"[{FAIL_CELL + 1}]")
    assert "DeadlineExceededError" in failed.get_attribute("title")
    failed.dispatch_event("pointerdown")   # pinned: the graph shows that run
    status = graph_in(panel).locator(".dtfnb-run-status")
    expect(status).to_have_text("failed")
    expect(status).to_have_attribute("title", re.compile("DeadlineExceededError"))


def test_after_cluster_stop_nothing_looks_live(panel, page):
    from playwright.sync_api import expect

    run_cell(page, STOP_CELL)
    wait_until_idle(page, STOP_CELL)
    cluster = panel.locator('.dtfnb-cluster[data-cluster="cluster"]')
    expect(cluster).to_have_attribute("data-state", "stopped", timeout=30_000)
    expect(cluster.locator(".dtfnb-stopped")).to_contain_text("stopped at")
    queue = panel.locator('.dtfnb-queue[data-queue="q"]')
    expect(queue).to_have_class(re.compile("dtfnb-mod-stopped"))
    expect(panel.locator(".dtfnb-rates")).to_have_count(0)
    expect(graph_in(panel).locator(".dtfnb-stopped")).to_contain_text("stopped at")
    monitor = output(page, QUEUE_CELL)
    expect(monitor).to_contain_text("stopped at")
    expect(monitor).not_to_contain_text("/s in")
    for task in ("ps:0", "ps:1", "worker:0", "worker:1"):
        expect(panel.locator(f'.dtfnb-task[data-task="{task}"]')).not_to_have_attribute(
            "data-state", "serving")
    screenshot(page, "seeing-stopped")
