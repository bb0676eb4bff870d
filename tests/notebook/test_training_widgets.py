"""StalenessPlot and ClusterView as a learner sees them: drawn from event streams (hand-fed
EventLogs, a LocalCluster's task processes), and a StalenessPlot redrawn in a real kernel
while the cell that displayed it still trains."""

import json
import re
import time

from matplotlib.colors import to_hex

import dtfnb as tf
from dtfnb.notebook import ClusterView, LocalCluster, StalenessPlot
from dtfnb.notebook.palette import colour
from dtfnb.protos import monitor_pb2
from dtfnb.runtime.events import EventLog
from tests.helpers import poll_for
from tests.notebook.kernel_util import Kernel, outputs, stdout

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
W0, W1 = "/job:worker/replica:0/task:0", "/job:worker/replica:0/task:1"


def _update(worker, computed, applied, dropped=False):
    return monitor_pb2.Event(variable_update=monitor_pb2.VariableUpdateEvent(
        variable="w", worker=worker, computed_at_step=computed, applied_at_step=applied,
        dropped=dropped))


def _loss(value):
    return monitor_pb2.Event(step=monitor_pb2.StepEvent(start_time=time.time(),
                                                        scalars={"loss:0": value}))


def test_staleness_plot_draws_histograms_losses_and_drops_per_worker_in_its_colour():
    ps, w0, w1 = (EventLog(t) for t in ("/job:ps/replica:0/task:0", W0, W1))
    w0.publish(_loss(2.0))
    ps.publish(_update(W0, 0, 0))
    w1.publish(_loss(1.9))
    ps.publish(_update(W1, 0, 1))
    with StalenessPlot([ps, w0, w1]) as plot:
        first = plot._view.value
        assert 'data-points="2"' in first and "data:image/png;base64," in first
        assert [plot.staleness.histogram(w) for w in (W0, W1)] == [[(0, 1)], [(1, 1)]]
        for worker, log, computed, applied in ((W0, w0, 1, 2), (W1, w1, 1, 3)):
            log.publish(_loss(1.5))
            ps.publish(_update(worker, computed, applied))
        ps.publish(_update(W1, 1, 4, dropped=True))
        assert poll_for(lambda: plot.staleness.dropped == {W1: 1})
        assert poll_for(lambda: 'data-points="4" data-dropped="1"' in plot._view.value)
        assert plot._view.value != first   # redrawn in place
    histogram, loss, dropped = plot.figure.axes   # as close() drew it last
    assert not histogram.lines                    # bars, not dots piled on rows
    assert [to_hex(bar.get_facecolor()) for bar in histogram.patches] == [
        colour(W0), colour(W0), colour(W1), colour(W1)]
    assert [to_hex(line.get_color()) for line in loss.lines] == [colour(W0), colour(W1)]
    assert [bar.get_width() for bar in dropped.patches] == [0, 1]
    (legend,) = plot.figure.legends               # one, beside the axes, none on them
    assert [text.get_text() for text in legend.get_texts()] == ["worker:0", "worker:1"]
    assert all(axes.get_legend() is None for axes in plot.figure.axes)
    data = plot._repr_mimebundle_()
    assert set(data) == {WIDGET_VIEW, "text/html", "text/plain"}
    assert data["text/plain"] == repr(plot) == (
        "StalenessPlot: staleness, loss and dropped gradients per worker")
    assert data["text/html"].startswith('<div class="dtfnb-staleness" data-workers="2"')


def test_a_staleness_plot_without_losses_says_how_to_get_them():
    ps = EventLog("/job:ps/replica:0/task:0")
    ps.publish(_update(W0, 0, 0))
    with StalenessPlot(ps) as plot:
        pass
    texts = [t.get_text() for t in plot.figure.axes[1].texts + plot.figure.axes[2].texts]
    assert texts == ['none yet: fetch a scalar named "loss"', "none"]


def test_cluster_view_shows_work_per_task_one_timeline_and_stopped_tasks():
    with LocalCluster({"ps": 1, "worker": 1}, progress=False, gpus=1) as cluster, \
            ClusterView(cluster) as view:
        assert repr(view) == ("ClusterView 'cluster': 2 tasks\n"
                              "  /job:ps/replica:0/task:0: 2 devices\n"
                              "  /job:worker/replica:0/task:0: 2 devices")
        with tf.device("/job:ps/task:0"):
            a = tf.constant([1.0, 2.0], name="a")
        with tf.device("/job:worker/task:0"):
            b = tf.reduce_sum(a * 2, name="b")
        with tf.Session(cluster.target("worker")) as sess:
            sess.run(b, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=tf.RunMetadata())
        ps, worker = "/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"
        assert poll_for(lambda: view.tasks.timeline().lanes and len(view.tasks.health) == 2
                        and view.tasks.health[ps].graphs_run >= 1
                        and view.tasks.health[worker].steps_run >= 1
                        and "8 B</td><td>0 B" in view._html(), 10)   # the ps's traffic
        html = view._html()
        tasks_table, links_table = html.split("</table>")[:2]
        rows = re.findall(r"<tr>(.*?)</tr>", tasks_table)
        assert len(rows) == 3 and "graphs run" in rows[0]
        cells = {row.split("</td>")[0]: re.findall(r"<td>(.*?)</td>", row) for row in rows[1:]}
        ps_cells, = [c for name, c in cells.items() if ps in name]
        assert "serving" in ps_cells[1] and ps_cells[3] == "0"   # a ps runs no steps
        assert int(ps_cells[4]) >= 1 and ps_cells[5].endswith("B")   # but serves graphs
        assert ps_cells[6:8] == ["8 B", "0 B"]   # `a` each step, per step
        assert re.search(r"ps:0</th><td>&#8212;</td><td>8 B</td>", links_table)   # to the worker
        assert "GPU:0 (emulated)" in html and "last traced step" in html
        lanes = view.tasks.timeline().lanes   # every task's devices, the master's and the ps's
        assert {device.split("/device:")[0] for device in lanes} == {ps, worker}
        trace = json.loads(view.to_chrome_trace())
        processes = {e["args"]["name"] for e in trace["traceEvents"]
                     if e["name"] == "process_name"}
        assert processes == {ps, worker}
        assert "b" in {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"}
        cluster.kill("ps")
        assert poll_for(lambda: re.search(r"dead at \d\d:\d\d", view._html()), 10)
        (dead,) = [row for row in re.findall(r"<tr[^>]*>(.*?)</tr>", view._html())
                   if ps in row]
        assert dead.endswith("<td></td><td></td>")   # no rates, no memory: not live


def test_cluster_view_labels_emulated_conditions_as_the_tasks_report_them():
    with LocalCluster({"ps": 1, "worker": 1}, link="100Mbit,2ms", slow={"worker": "+20ms"},
                      progress=False) as cluster, ClusterView(cluster) as view:
        assert repr(view) == (
            "ClusterView 'cluster': 2 tasks\n"
            "  /job:ps/replica:0/task:0: 1 device; emulated: 100 Mbit/s, 2 ms\n"
            "  /job:worker/replica:0/task:0: 1 device; emulated: 100 Mbit/s, 2 ms · +20 ms/step")
        worker = "/job:worker/replica:0/task:0"
        assert poll_for(lambda: worker in view.tasks.health, 10)
        assert view.tasks.health[worker].emulated == "100 Mbit/s, 2 ms · +20 ms/step"
        assert "emulated: 100 Mbit/s, 2 ms · +20 ms/step</small>" in view._html()


CELL = '''
server = tf.train.Server.create_local_server()
step = tf.train.get_or_create_global_step()
w = tf.Variable([1.0, 2.0], name="w")
loss = tf.reduce_sum(tf.square(w), name="loss")
train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
sess = tf.Session(server.target)
sess.run(tf.global_variables_initializer())
plot = StalenessPlot(server)
display(plot)
shown_at = time.time()
while time.time() < shown_at + 2:
    sess.run([train, loss])
    time.sleep(0.01)
print(repr(time.time()))
'''


def test_a_displayed_staleness_plot_redraws_while_its_cell_still_trains():
    kernel = Kernel()
    try:
        kernel.execute("import time\nimport dtfnb as tf\nfrom dtfnb.notebook import StalenessPlot")
        messages = kernel.execute(CELL)
        trained_until = float(stdout(messages))
        (shown,) = outputs(messages, ("display_data",))
        model = shown[WIDGET_VIEW]["model_id"]
        redrawn = [m for m in messages if m["msg_type"] == "comm_msg"
                   and m["content"]["comm_id"] == model
                   and m["content"]["data"]["method"] == "update"
                   and m["header"]["date"].timestamp() < trained_until]
        assert len(redrawn) >= 2, "the plot must redraw during training, not after it"
        kernel.execute("plot.close(); sess.close(); server.stop()")
    finally:
        kernel.stop()
