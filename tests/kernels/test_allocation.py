"""Outputs too big for memory fail before they are allocated, as TensorFlow's allocator fails.

Every case asks for terabytes from small inputs. They run in one child process whose
address space is capped a little above what it uses, so a kernel that allocated first
would get numpy's MemoryError instead of the check's message (and could never take
the machine's memory); `python tests/kernels/test_allocation.py` is that child.
"""

import json
import resource
import subprocess
import sys

import pytest

import dtfnb as tf

N = 10**6
VIEW = 10**8  # elements of a broadcast view: it takes no memory, its copies would

CASES = {  # name: (build, node, shape, type)
    "tile": (lambda: tf.tile(tf.ones([1000, 1000]), [1000, 1000]),
             "Tile", [N, N], "float"),
    "fill": (lambda: tf.fill([N, N], 1.0), "Fill", [N, N], "float"),
    "zeros": (lambda: tf.zeros([N, N]), "zeros", [N, N], "float"),
    "ones_of_a_fed_shape": (lambda: tf.ones(tf.placeholder_with_default([N, N], [2]),
                                            tf.int64),
                            "ones", [N, N], "int64"),
    "broadcast_to": (lambda: tf.broadcast_to(1.0, [N, N]), "BroadcastTo", [N, N], "float"),
    "pad": (lambda: tf.pad(tf.ones([2, 2]), [[0, N], [0, N]]),
            "Pad", [N + 2, N + 2], "float"),
    "pad_with_a_value": (lambda: tf.pad(tf.ones([2, 2]), [[0, N], [0, N]], constant_values=1.0),
                         "PadV2", [N + 2, N + 2], "float"),
    "mirror_pad": (lambda: tf.pad(tf.ones([2] * 16), [[2, 2]] * 16, mode="SYMMETRIC"),
                   "MirrorPad", [6] * 16, "float"),
    "one_hot": (lambda: tf.one_hot(tf.zeros([N], tf.int32), N), "one_hot", [N, N], "float"),
    "range": (lambda: tf.range(tf.constant(10**13, tf.int64)), "range", [10**13], "int64"),
    "random_uniform": (lambda: tf.random_uniform([N, N]),
                       "random_uniform/RandomUniform", [N, N], "float"),
    "random_uniform_int": (lambda: tf.random_uniform([N, N], maxval=9, dtype=tf.int32),
                           "random_uniform", [N, N], "int32"),
    "random_normal": (lambda: tf.random_normal([N, N]),
                      "random_normal/RandomStandardNormal", [N, N], "float"),
    "truncated_normal": (lambda: tf.truncated_normal([N, N]),
                         "truncated_normal/TruncatedNormal", [N, N], "float"),
    "concat_of_many": (lambda: tf.concat([tf.broadcast_to(1.0, [VIEW])] * 10**4, 0),
                       "concat", [VIEW * 10**4], "float"),
    "stack_of_many": (lambda: tf.stack([tf.broadcast_to(1.0, [VIEW])] * 10**4),
                      "stack", [10**4, VIEW], "float"),
    "gather": (lambda: tf.gather(tf.ones([1, 10**5]), tf.zeros([10**7], tf.int32)),
               "GatherV2", [10**7, 10**5], "float"),
    "unsorted_segment_sum": (lambda: tf.unsorted_segment_sum(
        tf.ones([1]), [0], tf.constant(10**12, tf.int64)),
                             "UnsortedSegmentSum", [10**12], "float"),
    "matmul": (lambda: tf.matmul(tf.ones([N, 1]), tf.ones([1, N])), "MatMul", [N, N], "float"),
    "batch_matmul": (lambda: tf.matmul(tf.ones([2, N, 1]), tf.ones([2, 1, N])),
                     "MatMul", [2, N, N], "float"),
    "broadcasting_add": (lambda: tf.ones([N]) + tf.ones([N, 1]), "add", [N, N], "float"),
}


def _run_cases():
    """In the child: each case in its own graph; one JSON line of outcomes."""
    outcomes = {}
    for name, (build, *_) in CASES.items():
        with tf.Graph().as_default():
            output = build()
            with tf.Session() as sess:
                try:
                    sess.run(output.op)
                    outcomes[name] = ["ran"]
                except tf.errors.OpError as err:
                    outcomes[name] = [type(err).__name__, err.op.name if err.op else None,
                                      err.message]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"outcomes": outcomes, "peak_rss": peak}))


@pytest.fixture(scope="module")
def outcomes():
    done = subprocess.run([sys.executable, __file__], capture_output=True, text=True,
                          timeout=100)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["peak_rss"] < 2 << 30
    return report["outcomes"]


@pytest.mark.parametrize("name", CASES)
def test_an_output_too_big_for_memory_fails_before_it_is_allocated(outcomes, name):
    _, node, shape, type_name = CASES[name]
    kind, failed_node, message = outcomes[name]
    assert (kind, failed_node) == ("ResourceExhaustedError", node)
    assert message.startswith(
        f"OOM when allocating tensor with shape[{','.join(map(str, shape))}] and type "
        f"{type_name} on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu\n")


def test_add_n_needs_inputs_of_one_shape():
    total = tf.add_n([tf.ones([N]), tf.placeholder_with_default(tf.ones([N, 1]), None)])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Inputs to operation AddN of type AddN must have the same "
                                 r"size and shape.  Input 0: \[1000000\] != input 1: "
                                 r"\[1000000,1\]"):
            sess.run(total)


if __name__ == "__main__":
    with open("/proc/self/statm") as statm:
        in_use = int(statm.read().split()[0]) * resource.getpagesize()
    headroom = in_use + (2 << 30)
    resource.setrlimit(resource.RLIMIT_AS, (headroom, headroom))
    _run_cases()
