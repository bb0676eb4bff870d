"""How dtfnb's objects look in a notebook: HTML, and text where Python's default would
show a memory address.

The core classes know nothing of Jupyter: `register(shell)` adds these as IPython
display formatters (done by `%load_ext dtfnb`), and `unregister(shell)` removes them.
The text forms name no address, port, pid or time, so saved outputs compare equal.
"""

from dtfnb.client.session import BaseSession
from dtfnb.distributed_runtime.cluster import ClusterSpec
from dtfnb.distributed_runtime.server_lib import Server, task_name
from dtfnb.framework.graph import Graph
from dtfnb.framework.operation import Operation
from dtfnb.framework.tensor import Tensor
from dtfnb.launch import Cluster
from dtfnb.notebook.widgets.base import escape
from dtfnb.ops.data_flow_ops import QueueBase

_OPS_SHOWN = 50


def _table(header, rows, cls):
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f'<table class="{cls}" style="font-size:12px"><tr>{head}</tr>{body}</table>'


def cluster_spec_html(spec):
    """A tf.train.ClusterSpec as an HTML table of its jobs, tasks and addresses."""
    rows = [(job, index, spec.task_address(job, index))
            for job in spec.jobs for index in spec.task_indices(job)]
    return "<b>tf.train.ClusterSpec</b>" + _table(("job", "task", "address"), rows,
                                                  "dtfnb-cluster-spec")


def cluster_html(cluster):
    """A Cluster as HTML: its tasks, their states and targets, and their emulated
    conditions if any has some."""
    emulated = any(task.emulated for task in cluster.tasks)
    rows = [(task.name, task.state, f"grpc://{task.address}",
             *([task.emulated or "none"] if emulated else [])) for task in cluster.tasks]
    header = ("task", "state", "target", *(["emulated link · slowness"] if emulated else []))
    devices = f"{cluster.cpus} CPU" + (f", {cluster.gpus} emulated GPU" if cluster.gpus else "")
    return (f"<b>{type(cluster).__name__} {escape(cluster.name)}</b> ({escape(devices)} per task)"
            + _table(header, rows, "dtfnb-local-cluster"))


def server_html(server):
    """A tf.train.Server as one line of HTML: its task, target and state."""
    server_def = server.server_def
    task = task_name(server_def.job_name, server_def.task_index)
    state = "stopped" if server.stopped.is_set() else "serving"
    return (f"<b>tf.train.Server</b> {escape(task)} at <code>{escape(server.target)}</code>: "
            f"{state}")


def session_text(session):
    """A tf.Session's plain-text repr: the size of its graph and where it runs."""
    where = "this process" if not session.sess_str else "a cluster master"
    closed = ", closed" if session._closed else ""
    return f"<tf.Session of a graph of {len(session.graph.get_operations())} ops, on {where}" \
           f"{closed}>"


def session_html(session):
    """A tf.Session as one line of HTML: its target and the size of its graph."""
    target = session.sess_str or "in-process"
    return (f"<b>tf.Session</b> on <code>{escape(target)}</code>, graph of "
            f"{len(session.graph.get_operations())} ops{', closed' if session._closed else ''}")


def graph_text(graph):
    """A tf.Graph's plain-text repr: its number of ops."""
    return f"<tf.Graph of {len(graph.get_operations())} ops>"


def graph_html(graph):
    """A tf.Graph as HTML: a table of its first ops, with their types and devices."""
    ops = graph.get_operations()
    rows = [(op.name, op.type, op.device) for op in ops[:_OPS_SHOWN]]
    more = f"<i>... and {len(ops) - _OPS_SHOWN} more</i>" if len(ops) > _OPS_SHOWN else ""
    return (f"<b>tf.Graph</b> of {len(ops)} ops"
            + _table(("name", "type", "device"), rows, "dtfnb-graph") + more)


def operation_html(op):
    """A tf.Operation as HTML: its name, type, device, inputs and outputs."""
    inputs = ", ".join(t.name for t in op.inputs) or "none"
    outputs = ", ".join(f"{t.name} {t.dtype.name} {t.shape}" for t in op.outputs) or "none"
    return (f"<b>tf.Operation</b> <code>{escape(op.name)}</code> ({escape(op.type)}) on "
            f"<code>{escape(op.device or 'any device')}</code><br>inputs: {escape(inputs)}"
            f"<br>outputs: {escape(outputs)}")


def tensor_html(tensor):
    """A tf.Tensor as one line of HTML: its name, dtype, shape, producer and device."""
    return (f"<b>tf.Tensor</b> <code>{escape(tensor.name)}</code> {escape(tensor.dtype.name)}"
            f" shape {escape(tensor.shape)} from {escape(tensor.op.type)} on "
            f"<code>{escape(tensor.device or 'any device')}</code>")


def queue_text(queue):
    """A queue's plain-text repr: its class, name and component dtypes."""
    dtypes = ", ".join(d.name for d in queue.dtypes)
    return f"<tf.{type(queue).__name__} '{queue.name}' dtypes=[{dtypes}]>"


def queue_html(queue):
    """A queue as HTML: its name, device and a table of its components."""
    components = [(queue.names[i] if queue.names else i, d.name, queue.shapes[i])
                  for i, d in enumerate(queue.dtypes)]
    return (f"<b>tf.{type(queue).__name__}</b> <code>{escape(queue.name)}</code> on "
            f"<code>{escape(queue.queue_ref.device or 'any device')}</code>"
            + _table(("component", "dtype", "shape"), components, "dtfnb-queue"))


HTML = {ClusterSpec: cluster_spec_html, Cluster: cluster_html, Server: server_html,
        BaseSession: session_html, Graph: graph_html, Operation: operation_html,
        Tensor: tensor_html, QueueBase: queue_html}
TEXT = {BaseSession: lambda s, p, cycle: p.text(session_text(s)),
        Graph: lambda g, p, cycle: p.text(graph_text(g)),
        QueueBase: lambda q, p, cycle: p.text(queue_text(q))}


def register(shell):
    """Makes IPython display dtfnb's objects with the renderers of HTML and TEXT."""
    formatters = shell.display_formatter.formatters
    for cls, render in HTML.items():
        formatters["text/html"].for_type(cls, render)
    for cls, render in TEXT.items():
        formatters["text/plain"].for_type(cls, render)


def unregister(shell):
    """Removes the renderers `register` added."""
    formatters = shell.display_formatter.formatters
    for mime, table in (("text/html", HTML), ("text/plain", TEXT)):
        for cls in table:
            formatters[mime].pop(cls, None)
