"""progress() in a terminal, and the rich displays registered with an IPython shell."""

import io

import pytest

import dtfnb as tf
from dtfnb.notebook import progress
from dtfnb.notebook.launcher import LocalCluster


def test_text_progress_over_an_iterable_and_a_total():
    out = io.StringIO()
    assert list(progress(range(4), "epochs", file=out)) == [0, 1, 2, 3]
    lines = out.getvalue()
    assert lines.startswith("\repochs: [" + "." * 30 + "] 0/4")
    assert lines.endswith("\repochs: [" + "#" * 30 + "] 4/4\n")
    out = io.StringIO()
    with progress(10, file=out) as bar:
        bar.update(5)
        assert repr(bar) == "<progress '' of 10>" and len(bar) == 10
    assert out.getvalue().endswith("[" + "#" * 15 + "." * 15 + "] 5/10\n")
    assert list(progress(3, file=io.StringIO())) == [0, 1, 2]
    out = io.StringIO()
    assert sum(progress((i for i in range(3)), "items", file=out)) == 3
    assert out.getvalue().endswith("\ritems: 3\n")


@pytest.fixture
def html(shell):
    formatter = shell.display_formatter.formatters["text/html"]
    text = shell.display_formatter.formatters["text/plain"]
    yield formatter, text
    shell.run_line_magic("unload_ext", "dtfnb")
    assert formatter(tf.Graph()) is None
    shell.run_line_magic("load_ext", "dtfnb")


def test_html_and_text_of_the_core_classes(html, cluster):
    formatter, text = html
    spec = tf.train.ClusterSpec({"ps": ["127.0.0.1:2221"], "worker": ["127.0.0.1:2222"]})
    assert "<td>worker</td><td>0</td><td>127.0.0.1:2222</td>" in formatter(spec)
    with tf.name_scope("layer"), tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.reduce_sum(x * 2, name="y")
    q = tf.PaddingFIFOQueue(5, [tf.float32], shapes=[[None]], names=["pixels"], name="q")
    graph = tf.get_default_graph()
    assert text(graph) == f"<tf.Graph of {len(graph.get_operations())} ops>"
    assert "<td>layer/y</td><td>Sum</td><td>/device:CPU:0</td>" in formatter(graph)
    assert formatter(y) == ("<b>tf.Tensor</b> <code>layer/y:0</code> float32 shape () from "
                            "Sum on <code>/device:CPU:0</code>")
    assert formatter(x.consumers()[0]).endswith(
        "inputs: layer/x:0, layer/mul/y:0<br>outputs: layer/mul:0 float32 (?, 3)")
    assert text(q) == "<tf.PaddingFIFOQueue 'q' dtypes=[float32]>"
    assert "<td>pixels</td><td>float32</td><td>(?,)</td>" in formatter(q)
    with tf.Session() as sess:
        assert text(sess) == f"<tf.Session of a graph of {len(graph.get_operations())} ops, " \
                             "on this process>"
        assert "on <code>in-process</code>" in formatter(sess)
    assert text(sess).endswith(", closed>")
    server = cluster({"worker": 1})["worker", 0]
    assert "/job:worker/replica:0/task:0" in formatter(server)
    assert formatter(server).endswith(": serving")
    launcher = LocalCluster({"ps": 1}, gpus=2, start=False)
    assert text(launcher) == "<LocalCluster 'cluster' (ps: 1): 1 stopped>"
    assert "(1 CPU, 2 emulated GPU per task)" in formatter(launcher)
