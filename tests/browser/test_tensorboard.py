"""The real TensorBoard shows where dtfnb's ops ran: a graph trained on 1 ps + 1 worker
(task processes), written by tf.summary.FileWriter, in TensorBoard's Graphs dashboard
coloured by device (a headless TensorBoard on 127.0.0.1, as `%board` starts it); and
`%board` in a real JupyterLab shows TensorBoard under its cell. Screenshots:
test-artifacts/tensorboard-devices.png and tensorboard-in-lab.png."""

import numpy as np
import pytest

import dtfnb as tf
from dtfnb.notebook.board import TensorBoard
from tests.browser.conftest import chromium_page, needs
from tests.browser.notebook_ui import (
    open_notebook,
    run_cell,
    screenshot,
    wait_for_kernel,
    wait_until_idle,
)

# The devices as TensorBoard's legend names them, without their "/job:"
PS, WORKER = "ps/replica:0/task:0/device:CPU:0", "worker/replica:0/task:0/device:CPU:0"


@pytest.fixture(scope="module")
def page():
    """A chromium page; only the JupyterLab test starts a JupyterLab (`lab`)."""
    needs("tensorboard")
    with chromium_page() as page:
        yield page


def write_trained_graph(logdir, tasks):
    """Trains a linear regression, its variables on the ps, on the worker's session, with
    a FileWriter of the graph open from the start, as a TensorFlow 1 user writes it."""
    X = np.random.RandomState(0).rand(32, 3).astype(np.float32)
    with tf.Graph().as_default() as graph, tf.device(
            tf.train.replica_device_setter(cluster=tasks.spec)):
        w = tf.Variable(tf.zeros([3, 1]), name="w")
        predictions = tf.matmul(X, w, name="predictions")
        mse = tf.reduce_mean(tf.square(predictions - X.sum(axis=1, keepdims=True)), name="mse")
        training_op = tf.train.GradientDescentOptimizer(0.1).minimize(mse)
        with tf.Session(tasks.target("worker", 0)) as sess, \
                tf.summary.FileWriter(str(logdir), graph):
            sess.run(w.initializer)
            for _ in range(3):
                sess.run(training_op)
    placed = {node.name: node.device for node in written_graph(logdir)}
    assert (placed["w"], placed["predictions"]) == (f"/job:{PS}", f"/job:{WORKER}")


def written_graph(logdir):
    """The nodes of the newest graph in `logdir`'s event file, read as TensorBoard does."""
    from tensorboard.backend.event_processing import event_accumulator

    events = event_accumulator.EventAccumulator(str(logdir))
    events.Reload()
    return events.Graph().node


def test_the_graph_dashboard_colours_each_op_by_the_device_it_ran_on(cluster, tmp_path, page):
    from playwright.sync_api import expect

    write_trained_graph(tmp_path / "worker_0", cluster({"ps": 1, "worker": 1}, processes=True))
    board = TensorBoard(tmp_path)
    try:
        page.goto(f"{board.url}#graphs")
        page.locator("g.node").first.wait_for()
        page.locator("paper-radio-button", has_text="Device").click()
        # The legend: a row per device, then "unknown device".
        devices = page.locator(".color-legend-row:visible").filter(has_not_text="unknown device")
        expect(devices).to_have_count(2, timeout=15_000)
        colours = {row.locator(".color-legend-value").inner_text():
                   row.locator("tf-graph-icon rect").evaluate("e => getComputedStyle(e).fill")
                   for row in devices.all()}
        assert set(colours) == {PS, WORKER}
        assert len(set(colours.values())) == 2

        def colour_of(node):   # its fill is a gradient of the devices its ops ran on
            stops = page.locator(f'linearGradient[id="device-{node}"] stop')
            return set(stops.evaluate_all("stops => stops.map(s => s.getAttribute('stop-color'))"))

        assert colour_of("w") == {colours[PS]}
        assert colour_of("predictions") == {colours[WORKER]}
        screenshot(page, "tensorboard-devices")
    finally:
        board.stop()


def test_board_shows_tensorboard_under_its_cell_in_jupyterlab(lab, page):
    from playwright.sync_api import expect

    with tf.Graph().as_default():
        loss = tf.summary.scalar("loss", tf.constant(0.5))
        with tf.Session() as sess, \
                tf.summary.FileWriter(str(lab.root / "logs/worker_0")) as writer:
            writer.add_summary(sess.run(loss), global_step=1)
    open_notebook(lab, page, "board.ipynb", ["%load_ext dtfnb\n%board logs"])
    wait_for_kernel(page)
    run_cell(page, 0)
    wait_until_idle(page, 0)
    # TensorBoard's own frame, its scalar card of `loss` with the value of each run
    frame = page.frame_locator("iframe[id^='tensorboard-frame-']")
    card = frame.locator("scalar-card",
                         has=frame.locator("tb-truncated-path.tag", has_text="loss"))
    header, row = card.locator("tb-data-table-header-cell"), card.locator(
        "tb-data-table-content-row")
    expect(row).to_have_count(1, timeout=30_000)
    values = dict(zip(header.all_inner_texts(),
                      row.locator("tb-data-table-content-cell").all_inner_texts()))
    assert (values["Run"], values["Step"], values["Value"]) == ("worker_0", "1", "0.5")
    screenshot(page, "tensorboard-in-lab")
