"""A session's inter-op thread pools: which threads run a step's ops, shared global
pools, and pools that end with their sessions."""

import threading

import numpy as np
import pytest

import dtfnb as tf

WIDTH = 8  # independent matmuls in a step: more than any pool below has threads


def _products():
    a = tf.constant(np.arange(16, dtype=np.float32).reshape(4, 4))
    return tf.add_n([tf.matmul(a, a + float(k), name=f"product{k}") for k in range(WIDTH)])


def _config(*pools):
    config = tf.ConfigProto()
    for num_threads, global_name in pools:
        config.session_inter_op_thread_pool.add(num_threads=num_threads,
                                                global_name=global_name)
    return config


def _matmul_threads(sess, fetch, index):
    """The threads (by name) that ran the step's MatMuls with inter_op_thread_pool=index."""
    metadata = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, inter_op_thread_pool=index,
                            timeout_in_ms=10000)
    sess.run(fetch, options=options, run_metadata=metadata)
    names = {t.ident & 0xFFFFFFFF: t.name for t in threading.enumerate()}
    return {names[node.thread_id] for dev in metadata.step_stats.dev_stats
            for node in dev.node_stats if node.node_name.startswith("product")}


def _pool_of(thread_name):
    return thread_name.rpartition("_")[0]


def test_each_step_runs_its_ops_on_the_pool_it_chose():
    total = _products()
    caller = threading.current_thread().name
    with tf.Session(config=_config((1, ""), (3, ""))) as sess:
        on_first = _matmul_threads(sess, total, 0)
        on_second = _matmul_threads(sess, total, 1)
        on_caller = _matmul_threads(sess, total, -1)
    # The step's first ready matmul runs on the caller, the others on the pool.
    assert on_first - {caller} == {"dtfnb-compute0_0"}  # its one thread
    assert {_pool_of(n) for n in on_second - {caller}} == {"dtfnb-compute1"}
    assert len(on_second - {caller}) <= 3
    assert on_caller == {caller}


def test_a_global_pool_is_shared_by_sessions_at_its_first_size():
    total = _products()
    first = tf.Session(config=_config((1, "test-shared-pool")))
    try:
        # The second asks for four threads: it gets the first session's one.
        with tf.Session(config=_config((4, "test-shared-pool"))) as second:
            threads = _matmul_threads(first, total, 0) | _matmul_threads(second, total, 0)
    finally:
        first.close()
    assert threads - {threading.current_thread().name} == {"dtfnb-test-shared-pool_0"}


def test_pools_end_with_their_sessions():
    """The guard in conftest.py fails a test whose threads outlive it: the session's own
    pools and a global pool no session holds any more must both end."""
    total = _products()
    with tf.Session(config=_config((2, ""), (2, "test-ending-pool"))) as sess:
        for index in (0, 1):
            sess.run(total, options=tf.RunOptions(inter_op_thread_pool=index))


def test_one_thread_pool_runs_two_waiting_dequeues_and_their_enqueue():
    """Kernels that wait hold threads of their own, never the inter-op pool's (as
    TensorFlow's asynchronous queue kernels hold none), so one thread is enough."""
    queue = tf.FIFOQueue(4, tf.float32, shapes=[])
    first, second = queue.dequeue(), queue.dequeue()
    enqueue = queue.enqueue_many([[1.0, 2.0]])
    with tf.Session(config=_config((1, ""))) as sess:
        options = tf.RunOptions(inter_op_thread_pool=0, timeout_in_ms=5000)
        values = sess.run([first, second, enqueue], options=options)
    assert sorted(values[:2]) == [1.0, 2.0]


def test_negative_pool_size_is_refused():
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_threads must be at least 0"):
        tf.Session(config=_config((-1, "")))


def test_distributed_session_on_a_server_of_this_process(cluster):
    server = cluster({"local": 1})["local", 0]
    total = _products()
    with tf.Session(server.target, config=_config((1, ""))) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Distributed session does "
                           "not support session thread pool options"):
            sess.run(total)
    with tf.Session(server.target) as sess:
        assert sess.run(total, options=tf.RunOptions(inter_op_thread_pool=7)).shape == (4, 4)
