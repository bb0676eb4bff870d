"""The dtfnb side panel in a real JupyterLab: a notebook starts a 2 ps + 2 worker
cluster with %%cluster, runs a replica_device_setter graph on it, and the panel shows
the four tasks, the ops coloured by the devices they really ran on, and a queue that
fills as the notebook enqueues."""

import os
import re

import pytest

from tests.browser.conftest import ROOT
from tests.browser.notebook_ui import (
    active_notebook,
    open_notebook,
    run_all,
    run_cell,
    screenshot,
    show_tab,
)

README_IMAGE = ROOT / "docs/images/panel.png"

CELLS = [
    "%load_ext dtfnb",
    "%%cluster\nps: 2\nworker: 2",
    """\
import dtfnb as tf
from dtfnb.notebook import QueueMonitor

with tf.device(tf.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:0")):
    X = tf.placeholder(tf.float32, shape=(None, 3), name="X")
    with tf.name_scope("dnn"):
        w = tf.Variable(tf.ones([3, 1]), name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        y = tf.matmul(X, w) + b
    loss = tf.reduce_mean(tf.square(y), name="loss")
    training_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.device("/job:ps/task:1"):
    queue = tf.FIFOQueue(10, [tf.float32], shapes=[[]], name="q", shared_name="q")
    enqueue = queue.enqueue([1.0])
sess = tf.Session(cluster.target("worker", 0))
sess.run(tf.global_variables_initializer())
QueueMonitor(cluster)""",
    "for _ in range(3):\n    sess.run(enqueue)",
    "sess.run([training_op, loss], feed_dict={X: [[1.0, 2.0, 3.0]]})",
]
ENQUEUE_CELL = 3

# A second panel, on a cluster with an emulated GPU.
GPU_CELLS = [
    "%load_ext dtfnb",
    "%%cluster --name gpus --gpus 1\nworker: 1",
    """\
import dtfnb as tf

with tf.device("/job:worker/task:0/gpu:0"):
    doubled = tf.constant([1.0, 2.0], name="x") * 2.0
with tf.Session(gpus.target("worker", 0)) as sess:
    print(sess.run(doubled))""",
]
GPU0 = "/job:worker/replica:0/task:0/device:GPU:0"

PS0, PS1 = "/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0"
WORKER0 = "/job:worker/replica:0/task:0/device:CPU:0"


def widen_side_panel(page, pixels):
    """Drags the handle between the notebook and the right side panel."""
    handle = page.locator("#jp-main-split-panel > .lm-SplitPanel-handle:visible").last
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - pixels, y, steps=5)
    page.mouse.up()


def queue_bar(page):
    return page.locator('#dtfnb-panel .dtfnb-queue[data-queue="q"]')


@pytest.fixture(scope="module")
def panel(lab, page):
    """The dtfnb panel, shown beside panel.ipynb whose cells have all run once."""
    from playwright.sync_api import expect

    open_notebook(lab, page, "panel.ipynb", CELLS)
    page.locator('.jp-SideBar .lm-TabBar-tab[data-id="dtfnb-panel"]').click()
    panel = page.locator("#dtfnb-panel")
    expect(panel).to_be_visible()
    # The kernel has no dtfnb yet: the panel's hello is refused.
    expect(panel.locator(".dtfnb-body")).to_have_attribute("data-state", "absent",
                                                           timeout=60_000)
    run_all(page, CELLS)
    return panel


def test_panel_lists_the_four_tasks(panel, page):
    from playwright.sync_api import expect

    tasks = panel.locator(".dtfnb-task")
    expect(tasks).to_have_count(4, timeout=90_000)
    for name in ("ps:0", "ps:1", "worker:0", "worker:1"):
        expect(panel.locator(f'.dtfnb-task[data-task="{name}"]')).to_have_attribute(
            "data-state", "serving")
    expect(panel.locator('.dtfnb-cluster[data-cluster="cluster"]')).to_be_visible()


def test_tasks_show_the_tensor_bytes_they_sent_and_received(panel, page):
    from playwright.sync_api import expect

    # The training step pulls w and b from the ps tasks and pushes their gradients back.
    expect(panel.locator('.dtfnb-folded[data-scope="GradientDescent"]')).to_be_visible(
        timeout=90_000)
    moved = re.compile(r"[1-9][\d.]* K?B sent · [1-9][\d.]* K?B received")
    for name in ("ps:0", "ps:1", "worker:0"):
        expect(panel.locator(f'.dtfnb-task[data-task="{name}"] .dtfnb-work')).to_contain_text(
            moved, timeout=30_000)


def test_ops_are_coloured_by_their_real_devices(panel, page):
    from playwright.sync_api import expect

    # The training step is the notebook's last cell: wait until its graph is drawn.
    expect(panel.locator('.dtfnb-folded[data-scope="GradientDescent"]')).to_be_visible(
        timeout=90_000)
    # The panel redraws on every snapshot: read it in one go.
    chips, legend, transfers = panel.evaluate("""panel => {
        const chips = {}, legend = {};
        for (const chip of panel.querySelectorAll('.dtfnb-op')) {
            chips[chip.dataset.name] = [chip.dataset.device,
                                        chip.querySelector('.dtfnb-op-box').getAttribute('fill')];
        }
        for (const item of panel.querySelectorAll('.dtfnb-legend-item')) {
            const [r, g, b] = getComputedStyle(item.querySelector('.dtfnb-swatch'))
                .backgroundColor.match(/\\d+/g).map(Number);
            legend[item.dataset.device] = '#' + [r, g, b].map(
                c => c.toString(16).padStart(2, '0')).join('');
        }
        const transfers = [...panel.querySelectorAll('.dtfnb-transfer')].map(
            li => [li.dataset.tensor, li.dataset.consumers]);
        return [chips, legend, transfers];
    }""")
    # replica_device_setter puts the variables round-robin on the ps tasks and the
    # rest on the worker.
    assert chips["dnn/w"][0] == PS0
    assert chips["dnn/b"][0] == PS1
    assert chips["dnn/MatMul"][0] == WORKER0
    assert chips["loss"][0] == WORKER0
    # Each op wears its device's legend colour, and the devices differ in colour.
    assert {PS0, PS1, WORKER0} <= set(legend)
    assert len(set(legend.values())) == len(legend)
    for name, (device, colour) in chips.items():
        assert colour == legend[device], name
    # w/read and b/read (on the ps tasks) feed the worker's MatMul and add, and the
    # worker's gradients feed the updates on the ps tasks: each a Send/Recv pair.
    assert len(transfers) >= 4
    assert ["dnn/w/read:0", "dnn/MatMul"] in transfers
    # Ops are grouped by name scope.
    expect(panel.locator('.dtfnb-scope[data-scope="dnn"] .dtfnb-op[data-name="dnn/w"]')
           ).to_be_visible()
    screenshot(page, "panel-placement")


def test_queue_bars_move_as_items_are_enqueued(panel, page):
    from playwright.sync_api import expect

    expect(queue_bar(page)).to_have_attribute("data-size", "3", timeout=90_000)
    expect(queue_bar(page)).to_have_attribute("data-capacity", "10")
    monitor = page.locator(".jp-OutputArea table.dtfnb-queues")
    expect(monitor).to_contain_text("3 / 10")
    run_cell(page, ENQUEUE_CELL)
    expect(queue_bar(page)).to_have_attribute("data-size", "6", timeout=30_000)
    expect(queue_bar(page).locator(".dtfnb-bar-text")).to_have_text("6 / 10")
    expect(monitor).to_contain_text("6 / 10")
    fill = panel.evaluate("""panel => {
        const fill = panel.querySelector('.dtfnb-queue[data-queue="q"] .dtfnb-bar-fill');
        return fill.getBoundingClientRect().width / fill.parentElement.clientWidth;
    }""")
    assert fill == pytest.approx(0.6, abs=0.02)
    screenshot(page, "panel-queues")
    if os.environ.get("DTFNB_README_IMAGES"):   # refreshes docs/images/panel.png
        widen_side_panel(page, 160)
        # Pin the training step: the newest run is an enqueue.
        panel.evaluate("""panel => {
            const runs = [...panel.querySelectorAll('.dtfnb-history-run')];
            const ops = run => parseInt(run.textContent.split(' · ').pop());
            runs.sort((a, b) => ops(b) - ops(a))[0].dispatchEvent(
                new PointerEvent('pointerdown', {bubbles: true}));
        }""")
        page.wait_for_timeout(1000)   # the graph redraws
        README_IMAGE.parent.mkdir(parents=True, exist_ok=True)
        clip = panel.evaluate("""panel => {
            const box = panel.getBoundingClientRect();
            const end = panel.querySelector('.dtfnb-body > :last-child').getBoundingClientRect();
            const status = document.querySelector('#jp-main-statusbar').getBoundingClientRect();
            const bottom = Math.min(end.bottom + 12, status.top);
            return {x: box.x, y: box.y, width: box.width, height: bottom - box.y};
        }""")
        README_IMAGE.write_bytes(page.screenshot(clip=clip))


def test_panel_follows_the_active_notebook(panel, lab, page):
    from playwright.sync_api import expect

    open_notebook(lab, page, "gpus.ipynb", GPU_CELLS)
    expect(panel.locator(".dtfnb-source")).to_have_text("gpus.ipynb")
    expect(panel.locator(".dtfnb-body")).to_have_attribute("data-state", "absent",
                                                              timeout=60_000)
    run_all(page, GPU_CELLS)
    expect(panel.locator('.dtfnb-cluster[data-cluster="gpus"] .dtfnb-task')).to_have_count(
        1, timeout=90_000)
    expect(panel.locator('.dtfnb-cluster[data-cluster="cluster"]')).to_have_count(0)
    # The emulated GPU is marked in the legend and on its ops.
    gpu = panel.locator(f'.dtfnb-legend-item[data-device="{GPU0}"]')
    expect(gpu.locator(".dtfnb-tag")).to_have_text("emulated", timeout=30_000)
    expect(panel.locator('.dtfnb-op[data-name="mul"]')).to_have_attribute(
        "data-device", GPU0)
    expect(panel.locator('.dtfnb-op[data-name="mul"]')).to_have_class(
        "dtfnb-op dtfnb-mod-emulated")
    screenshot(page, "panel-emulated-gpu")

    show_tab(page, "panel.ipynb")
    expect(panel.locator(".dtfnb-source")).to_have_text("panel.ipynb")
    expect(panel.locator(".dtfnb-task")).to_have_count(4)


def test_panel_reattaches_after_a_kernel_restart(panel, page):
    from playwright.sync_api import expect

    show_tab(page, "gpus.ipynb")
    expect(panel.locator('.dtfnb-cluster[data-cluster="gpus"]')).to_be_visible()
    active_notebook(page).locator('[data-jp-item-name="restart"]').click()
    page.locator(".jp-Dialog-button.jp-mod-accept").click()
    body = panel.locator(".dtfnb-body")
    # The restarted kernel has no dtfnb: the panel says so, then attaches on %load_ext.
    expect(body).to_have_attribute("data-state", "absent", timeout=60_000)
    expect(body).to_contain_text("dtfnb is not loaded")
    run_cell(page, 0)
    expect(body).to_have_attribute("data-state", "attached", timeout=60_000)
    expect(body).to_contain_text("No clusters")
