"""`python -m dtfnb.tour`: a terminal walk-through of the chapter's examples.

Each stop says what it shows, prints the chapter's code and then that code's real
output: the code is run here, in a fresh default graph, not pasted.
"""

import contextlib
import io
import os
import sys
import textwrap
import traceback

WIDTH = 92

INTRO = """\
Welcome to dtfnb: TensorFlow 1's graphs, sessions and device placement in pure Python.
This tour runs the examples of "Distributing TensorFlow Across Devices
and Servers" (Hands-On Machine Learning, ch. 12) with `import dtfnb as tf`. Every output
below is produced now, by the code printed above it."""

STOPS = [
    ("Pinning operations to a device, and logging placements", """\
Ops built inside `with tf.device(...)` are pinned to that device; `c` is built outside,
so the placer chooses for it: GPU:0 if there is one, else CPU:0. With log_device_placement
the session prints one line per op, `name: (OpType): device`, when it places the graph.""",
     """\
with tf.device("/cpu:0"):
    a = tf.Variable(3.0)
    b = tf.constant(4.0)

c = a * b

config = tf.ConfigProto()
config.log_device_placement = True
sess = tf.Session(config=config)
a.initializer.run(session=sess)
print(sess.run(c))
sess.close()"""),

    ("Unpinned ops go to the first GPU", """\
The same graph on a machine with a GPU: `mul` is not pinned and has a GPU kernel, so it
goes to /gpu:0, as in the book's log. Without CUDA, dtfnb can emulate GPUs: they obey
GPU kernel rules but compute with numpy, and the log says so.""",
     """\
with tf.device("/cpu:0"):
    a = tf.Variable(3.0)
    b = tf.constant(4.0)

c = a * b

config = tf.ConfigProto(emulated_gpus=1, log_device_placement=True)
with tf.Session(config=config) as sess:
    a.initializer.run()
    print(sess.run(c))"""),

    ("Dynamic placement with a function", """\
`tf.device` also takes a function, called for each op created in the block; it returns
the device. The book tests `op.type == "Variable"`, but TensorFlow 1's variable op is
"VariableV2", so the test is never true and everything goes to /gpu:0.""",
     """\
def variables_on_cpu(op):
    if op.type == "Variable":
        return "/cpu:0"
    else:
        return "/gpu:0"

with tf.device(variables_on_cpu):
    a = tf.Variable(3.0)
    b = tf.constant(4.0)
    c = a * b

print("a.op.type:", a.op.type)
config = tf.ConfigProto(emulated_gpus=1, log_device_placement=True)
with tf.Session(config=config) as sess:
    a.initializer.run()
    print(sess.run(c))"""),

    ("...and the corrected function", """\
Testing for "VariableV2" keeps the variable (and its read and assign ops, which are
colocated with it) on the CPU, and sends the rest to the GPU.""",
     """\
def variables_on_cpu(op):
    if op.type == "VariableV2":
        return "/cpu:0"
    else:
        return "/gpu:0"

with tf.device(variables_on_cpu):
    a = tf.Variable(3.0)
    b = tf.constant(4.0)
    c = a * b

config = tf.ConfigProto(emulated_gpus=1, log_device_placement=True)
with tf.Session(config=config) as sess:
    a.initializer.run()
    print(sess.run(c))"""),

    ("Operations and kernels: soft placement", """\
An op can run on a device only if it has a kernel for it. There is no GPU kernel for
int32 variables, so pinning one to /gpu:0 fails when the graph is placed, unless
allow_soft_placement lets the placer fall back to the CPU.""",
     """\
with tf.device("/gpu:0"):
    i = tf.Variable(3)

sess = tf.Session(config=tf.ConfigProto(emulated_gpus=1))
try:
    sess.run(i.initializer)
except tf.errors.InvalidArgumentError as e:
    print("InvalidArgumentError:", e.message.splitlines()[0])
sess.close()

config = tf.ConfigProto(emulated_gpus=1)
config.allow_soft_placement = True
sess = tf.Session(config=config)
sess.run(i.initializer)  # the placer runs and falls back to /cpu:0
print("i =", sess.run(i))
sess.close()"""),

    ("Parallel execution", """\
The executor counts each op's unfinished inputs; ops whose inputs are ready run at once,
on the device's inter-op thread pool. The two MatMuls below do not depend on each other,
so they run at the same time on two threads. RunMetadata's step stats show it.""",
     """\
x = tf.constant(np.random.rand(1000, 1000).astype(np.float32))
y = tf.constant(np.random.rand(1000, 1000).astype(np.float32))
first = tf.matmul(x, y)
second = tf.matmul(y, x)
total = tf.reduce_sum(first) + tf.reduce_sum(second)

config = tf.ConfigProto(inter_op_parallelism_threads=2)
options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
metadata = tf.RunMetadata()
with tf.Session(config=config) as sess:
    sess.run(total, options=options, run_metadata=metadata)

stats = sorted((n for n in metadata.step_stats.dev_stats[0].node_stats
                if n.node_name in (first.op.name, second.op.name)),
               key=lambda n: n.all_start_micros)
t0 = stats[0].all_start_micros
threads = {}
for n in stats:
    thread = threads.setdefault(n.thread_id, len(threads) + 1)
    start = (n.all_start_micros - t0) / 1000
    end = start + n.all_end_rel_micros / 1000
    print(f"{n.node_name:9} thread {thread}  from {start:5.1f} ms to {end:5.1f} ms")"""),

    ("Control dependencies", """\
Ops created inside `tf.control_dependencies([a, b])` run only after a and b, even
though they take no input from them: a way to postpone memory-hungry work.""",
     """\
a = tf.constant(1.0)
b = a + 2.0

with tf.control_dependencies([a, b]):
    x = tf.constant(3.0)
    y = tf.constant(4.0)

z = x + y

print("x waits for:", [op.name for op in x.op.control_inputs])
with tf.Session() as sess:
    print("z =", sess.run(z))"""),

    ("Preloading the data into a variable", """\
A big training set can be loaded once into a non-trainable variable, initialized from
a fed placeholder. Its first dimension is unknown, so the book's code fails with
TensorFlow's ValueError; validate_shape=False is the fix.""",
     """\
n_features = 3
training_set_init = tf.placeholder(tf.float32, shape=(None, n_features))
try:
    training_set = tf.Variable(training_set_init, trainable=False, collections=[],
                               name="training_set")
except ValueError as e:
    print("ValueError:", e)

training_set = tf.Variable(training_set_init, trainable=False, collections=[],
                           name="training_set", validate_shape=False)
with tf.Session() as sess:
    data = np.arange(12, dtype=np.float32).reshape(4, n_features)
    sess.run(training_set.initializer, feed_dict={training_set_init: data})
    print(sess.run(training_set))"""),
    ("Multiple devices across multiple servers", """\
A cluster is a set of tasks, grouped in jobs; each task runs a server, here five in this
process on ports the OS picked (in the book: one per machine). A session may be opened
on any task; "/job:ps" means task 0 of job ps, and an op with no job goes to the task
whose master runs the session.""",
     """\
ps, workers = local_addresses(2), local_addresses(3)
cluster_spec = tf.train.ClusterSpec({"ps": ps, "worker": workers})
servers = [tf.train.Server(cluster_spec, job_name=job, task_index=i)
           for job in ("ps", "worker") for i in range(cluster_spec.num_tasks(job))]

with tf.device("/job:ps"):
    a = tf.Variable(1.0, name="a")
with tf.device("/job:worker"):
    b = a + 2
with tf.device("/job:worker/task:1"):
    c = a + b

metadata = tf.RunMetadata()
with tf.Session("grpc://" + workers[0]) as sess:
    sess.run(a.initializer)
    print("c =", sess.run(c, options=tf.RunOptions(output_partition_graphs=True),
                          run_metadata=metadata))
placed = {n.name: n.device for g in metadata.partition_graphs for n in g.node}
for name in ("a", "add", "add_1"):
    print(f"{name:5} ran on {placed[name]}")"""),

    ("Sharing state across sessions: resource containers", """\
Variables live in the task they are placed on and outlive sessions: a second session
(another client, on another task) sees what the first one did. Session.reset frees a
container on every task of the cluster; reading afterwards needs a new initialization.""",
     """\
with tf.container("my_problem_1"), tf.device("/job:ps/task:0"):
    x = tf.Variable(0.0, name="x")
increment_x = tf.assign(x, x + 1)

with tf.Session(servers[2].target) as sess:   # worker 0
    sess.run(x.initializer)
    print("client 1:", sess.run(increment_x))
with tf.Session(servers[3].target) as sess:   # worker 1
    print("client 2:", sess.run(increment_x))

tf.Session.reset(servers[2].target, ["my_problem_1"])
with tf.Session(servers[3].target) as sess:
    try:
        sess.run(x)
    except tf.errors.FailedPreconditionError as e:
        print("FailedPreconditionError:", e.message.splitlines()[0])"""),

    ("Sharding variables across ps tasks: replica_device_setter", """\
replica_device_setter places every variable round-robin on the ps tasks and every other
op on the workers; inner device blocks still override it field by field.""",
     """\
with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
    v1 = tf.Variable(1.0, name="v1")
    v2 = tf.Variable(2.0, name="v2")
    v3 = tf.Variable(3.0, name="v3")
    s = v1 + v2
    with tf.device("/task:1"):
        p1 = 2 * s
        with tf.device("/cpu:0"):
            p2 = 3 * s

for op in (v1.op, v2.op, v3.op, s.op, p1.op, p2.op):
    print(f"{op.name:6} {op.device}")

with tf.Session(servers[2].target) as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run([p1, p2]))
for server in servers:
    server.stop()"""),
]

OUTRO = """\
That is the chapter up to its clusters of servers. tests/local/test_chapter_single_machine.py
checks each of these outputs; in Jupyter, the same code runs cell by cell."""


def _style(code):
    """ANSI styling on a terminal (and not under NO_COLOR); plain text otherwise."""
    if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        return lambda text: f"\033[{code}m{text}\033[0m"
    return lambda text: text


def _wrap(line, indent):
    if len(line) + len(indent) <= WIDTH:
        return indent + line
    return "\n".join(textwrap.wrap(line, WIDTH, initial_indent=indent,
                                   subsequent_indent=indent + "    ",
                                   break_on_hyphens=False))


def _run(code):
    """Runs `code` in a fresh default graph; returns what it printed (and any error)."""
    import numpy as np

    import dtfnb as tf
    from dtfnb.distributed_runtime.cluster import local_addresses

    _namespace.update(tf=tf, np=np, local_addresses=local_addresses, __name__="tour")
    tf.reset_default_graph()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(code, "<tour>", "exec"), _namespace)
        except Exception:  # show the failure as the stop's output, then go on
            print(traceback.format_exc(limit=0).strip())
    tf.reset_default_graph()
    return out.getvalue()


# One namespace for every stop, as in a notebook: later stops use earlier servers.
_namespace = {}


def _machine():
    import dtfnb as tf

    with tf.Session() as sess:
        devices = sess.list_devices()
    names = [d.name.rsplit("device:", 1)[-1] for d in devices]
    text = "This machine offers " + ", ".join(names) + "."
    if not any(d.device_type == "GPU" for d in devices):
        text += (" It has no CUDA GPU, so the stops that need one ask for an emulated GPU "
                 "with tf.ConfigProto(emulated_gpus=1).")
    return textwrap.fill(text, WIDTH)


def main():
    """Prints each stop of the tour: what it shows, its code, and that code's output."""
    bold, dim, title = _style("1"), _style("2"), _style("1;36")
    print(title("dtfnb tour: the chapter's examples"))
    print()
    print(INTRO)
    print(_machine())
    for number, (heading, explanation, code) in enumerate(STOPS, 1):
        print()
        print(title(f"── {number}/{len(STOPS)}  {heading} ".ljust(WIDTH, "─")))
        print(explanation)
        print()
        for line in code.splitlines():
            print(dim("    │ ") + line)
        print()
        print(bold("  output:"))
        for line in _run(code).rstrip("\n").splitlines():
            print(_wrap(line, "    "))
    print()
    print(OUTRO)


if __name__ == "__main__":
    main()
