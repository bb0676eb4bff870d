"""A session's inter-op thread pools: ConfigProto.session_inter_op_thread_pool and
RunOptions.inter_op_thread_pool, on local and distributed sessions."""

import numpy as np
from observe import cluster, outcome

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _config(tf, *pools):
    """A ConfigProto with one pool per (num_threads, global_name)."""
    config = tf.ConfigProto()
    for num_threads, global_name in pools:
        config.session_inter_op_thread_pool.add(num_threads=num_threads,
                                                global_name=global_name)
    return config


def _independent_products(tf):
    """Matmuls that do not depend on each other: what an inter-op pool runs side by side."""
    a = tf.constant(np.arange(16, dtype=np.float32).reshape(4, 4))
    products = [tf.matmul(a, a + float(k)) for k in range(4)]
    return tf.add_n(products), products


def _run_on_each(tf, config, indexes):
    total, products = _independent_products(tf)
    with tf.Session(config=config) as sess:
        return [outcome(sess.run, [total] + products,
                        options=tf.RunOptions(inter_op_thread_pool=i)) for i in indexes]


POOLS = {"none": (), "one_default": ((0, ""),), "one_thread": ((1, ""),),
         "three": ((0, ""), (1, ""), (2, "")),
         "global": ((1, "pools-case-global"), (2, ""))}

for _name, _pools in POOLS.items():
    def _values(tf, pools=_pools):
        count = max(1, len(pools))
        # Every valid index, the caller's thread (-1), then the first ones out of range.
        return _run_on_each(tf, _config(tf, *pools), [*range(count), -1, count, -2, 99])
    CASES[f"pool_index_on_{_name}_pools"] = _values


@case
def pool_chosen_without_options_is_the_first(tf):
    total, _ = _independent_products(tf)
    with tf.Session(config=_config(tf, (1, ""), (2, ""))) as sess:
        return sess.run(total)


@case
def a_global_pool_asked_with_another_size_is_shared(tf):
    """TensorFlow's Python sessions never see its 'configured previously' error."""
    total, _ = _independent_products(tf)
    seen = []
    for num_threads in (2, 3, 0):
        config = _config(tf, (num_threads, "pools-case-resized"))
        with tf.Session(config=config) as sess:
            seen.append(outcome(sess.run, total,
                                options=tf.RunOptions(inter_op_thread_pool=0)))
    return seen


@case
def pools_with_inter_op_parallelism_threads(tf):
    config = _config(tf, (0, ""), (1, ""))
    config.inter_op_parallelism_threads = 2
    return _run_on_each(tf, config, [0, 1, 2])


@case
def one_thread_pool_runs_two_waiting_dequeues_and_their_enqueue(tf):
    """Waiting kernels hold no inter-op thread (TensorFlow's are asynchronous)."""
    queue = tf.FIFOQueue(4, tf.float32, shapes=[])
    first, second = queue.dequeue(), queue.dequeue()
    enqueue = queue.enqueue_many([[1.0, 2.0]])
    with tf.Session(config=_config(tf, (1, ""))) as sess:
        options = tf.RunOptions(inter_op_thread_pool=0, timeout_in_ms=5000)
        values = sess.run([first, second, enqueue], options=options)
    return sorted(values[:2])


@case
def client_checks_come_before_the_pool_index(tf):
    """An empty run never reaches the session; an unknown fetch fails in the client."""
    tf.constant(1.0)
    with tf.Session(config=_config(tf, (1, ""))) as sess:
        options = tf.RunOptions(inter_op_thread_pool=1)
        return outcome(sess.run, [], options=options), outcome(
            sess.run, "no_such_op", options=options)


@case
def bad_index_of_a_callable(tf):
    total, _ = _independent_products(tf)
    with tf.Session(config=_config(tf, (1, ""))) as sess:
        run = sess.make_callable(total, accept_options=True)
        return [outcome(run, options=tf.RunOptions(inter_op_thread_pool=i))
                for i in (0, -1, 1)]


@case
def distributed_session_refuses_pools_at_each_run(tf):
    servers = cluster(tf)
    total, _ = _independent_products(tf)
    seen = []
    for config in (_config(tf, (1, "")), tf.ConfigProto(use_per_session_threads=True)):
        with tf.Session(servers["worker"][0].target, config=config) as sess:
            seen.append([outcome(sess.run, total) for _ in range(2)])
    return seen


@case
def distributed_session_ignores_the_pool_index(tf):
    servers = cluster(tf)
    total, _ = _independent_products(tf)
    with tf.Session(servers["worker"][0].target) as sess:
        return [outcome(sess.run, total, options=tf.RunOptions(inter_op_thread_pool=i))
                for i in (0, 1, -1, -2)]
