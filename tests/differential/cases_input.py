"""Input producers, conditional batching, QueueRunner and Coordinator: the ops built,
the values drained until OutOfRange, TensorFlow's errors for bad input, QueueRunnerDefs
and thread names."""

import threading

from observe import node_defs, outcome


def _drain(tf, fetch, runs=50):
    """Every value `fetch` gives (local variables initialized, queue runners under a
    coordinator) until OutOfRange, and how it ended."""
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        values, end = [], None
        for _ in range(runs):
            try:
                values.append(sess.run(fetch))
            except tf.errors.OutOfRangeError as err:
                end = type(err).__name__
                break
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        return values, end


def _graph(tf, out):
    graph = tf.get_default_graph()
    return out, node_defs(graph), graph.get_collection(tf.GraphKeys.SUMMARIES)


# -- producers --------------------------------------------------------------------------

def string_producer(capacity, epochs):
    def case(tf):
        q = tf.train.string_input_producer(["a", "b", "c"], num_epochs=epochs, shuffle=False,
                                           capacity=capacity)
        return _graph(tf, q.name), _drain(tf, q.dequeue())
    return case


def range_producer(capacity, epochs):
    def case(tf):
        q = tf.train.range_input_producer(4, num_epochs=epochs, shuffle=False,
                                          capacity=capacity, name="counter")
        return _graph(tf, q.name), _drain(tf, q.dequeue())
    return case


def slice_producer(epochs):
    def case(tf):
        out = tf.train.slice_input_producer([tf.constant([1, 2, 3]),
                                             tf.constant([[1.0], [2.0], [3.0]])],
                                            num_epochs=epochs, shuffle=False)
        return _graph(tf, out), _drain(tf, out)
    return case


def input_producer_rows(tf):
    q = tf.train.input_producer(tf.constant([[1, 2], [3, 4]]), num_epochs=2, shuffle=False,
                                summary_name="rows")
    return _graph(tf, q.name), _drain(tf, q.dequeue_many(2))


def input_producer_element_shape(tf):
    x = tf.placeholder_with_default([[1, 2]], shape=[None, None])
    q = tf.train.input_producer(x, element_shape=[2], shuffle=False)
    return q.shapes, outcome(tf.train.input_producer, x, shuffle=False)


def limit_epochs_runs(tf):
    x = tf.train.limit_epochs(tf.constant(7), num_epochs=2)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        return node_defs(tf.get_default_graph()), [outcome(sess.run, x) for _ in range(3)]


def limit_epochs_errors(tf):
    return (outcome(tf.train.limit_epochs, tf.constant(1), num_epochs=0),
            tf.train.limit_epochs(tf.constant(1)))


def string_producer_empty(tf):
    return (outcome(tf.train.string_input_producer, []),
            _drain(tf, tf.train.string_input_producer(
                tf.placeholder_with_default([""], [None])[:0]).dequeue()))


def slice_producer_empty(tf):
    return outcome(tf.train.slice_input_producer, [])


def match_filenames(tf):
    v = tf.train.match_filenames_once("/nonexistent-dir/*.txt")
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        return v.name, sess.run(v), [x.name for x in tf.local_variables()]


# -- conditional batching ----------------------------------------------------------------

def keep_vector(batcher):
    def case(tf):
        x = tf.train.limit_epochs(tf.range(6), num_epochs=1)
        keep = tf.constant([True, False, True, True, False, True])
        out = {"maybe_batch": lambda: tf.train.maybe_batch(
            [x], keep, 2, enqueue_many=True, allow_smaller_final_batch=True),
            "maybe_batch_join": lambda: tf.train.maybe_batch_join(
            [[x]], keep, 2, enqueue_many=True, allow_smaller_final_batch=True)}[batcher]()
        return _graph(tf, out), _drain(tf, out)
    return case


def keep_computed(batcher):
    def case(tf):
        x = tf.train.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
        keep = tf.equal(tf.floormod(x, 2), 0)
        out = {"maybe_batch": lambda: tf.train.maybe_batch(
            [x], keep, 2, allow_smaller_final_batch=True),
            "maybe_batch_join": lambda: tf.train.maybe_batch_join(
            [[x]], keep, 2, allow_smaller_final_batch=True)}[batcher]()
        return out, _drain(tf, out)
    return case


def keep_false_graph(tf):
    out = tf.train.maybe_batch({"x": tf.constant(1)}, False, 2)
    return _graph(tf, out)


BAD_BATCHES = {
    "empty_list": lambda tf: tf.train.batch([], 2),
    "no_lists": lambda tf: tf.train.batch_join([], 2),
    "dict_keys": lambda tf: tf.train.batch_join([{"a": tf.constant(1)},
                                                 {"b": tf.constant(2)}], 2),
    "dict_keys_shuffle": lambda tf: tf.train.shuffle_batch_join(
        [{"a": tf.constant(1)}, {"a": tf.constant(2), "b": tf.constant(3)}], 2, 8, 2),
    "types": lambda tf: tf.train.batch_join([[tf.constant(1)], [tf.constant(1.0)]], 2),
    "types_shuffle": lambda tf: tf.train.shuffle_batch_join(
        [[tf.constant(1), tf.constant("a")], [tf.constant(1), tf.constant(2)]], 2, 8, 2),
    "shapes_join": lambda tf: tf.train.batch_join([[tf.constant([1, 2])],
                                                   [tf.constant([1, 2, 3])]], 2),
    "many_rank0": lambda tf: tf.train.batch([tf.constant(1)], 2, enqueue_many=True),
    "unknown_rank": lambda tf: tf.train.batch([tf.placeholder(tf.int32)], 2),
    "unknown_dim": lambda tf: tf.train.batch([tf.placeholder(tf.int32, [None])], 2),
    "capacity": lambda tf: tf.train.shuffle_batch([tf.constant(1)], 2, 4, 4),
    "capacity_join": lambda tf: tf.train.shuffle_batch_join([[tf.constant(1)]], 2, 3, 5),
    "keep_vector": lambda tf: tf.train.maybe_batch([tf.constant(1)], [True], 2),
    "keep_matrix": lambda tf: tf.train.maybe_shuffle_batch(
        [tf.constant([1])], 2, 8, 2, [[True]], enqueue_many=True),
    "keep_unknown": lambda tf: tf.train.maybe_batch_join(
        [[tf.constant([1])]], tf.placeholder(tf.bool), 2, enqueue_many=True),
}


def bad_batch(make):
    def case(tf):
        return outcome(make, tf), [op.name for op in tf.get_default_graph().get_operations()]
    return case


def explicit_shapes(tf):
    x = tf.placeholder(tf.int32, [None])
    return (tf.train.batch([x], 3, shapes=[[2]]),
            tf.train.batch_join([[x], [x]], 3, shapes=[[4]], dynamic_pad=True),
            tf.train.shuffle_batch([x, x], 3, 9, 1, shapes=[[1], [1]], seed=3))


def named_and_shared(tf):
    out = tf.train.batch({"a": tf.constant([1.0])}, 4, num_threads=3, capacity=7,
                         shared_name="shared", name="my_batch")
    qr = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[0]
    return _graph(tf, out), qr.name, [op.name for op in qr.enqueue_ops]


# -- QueueRunner -------------------------------------------------------------------------

def _runner(tf, **kwargs):
    with tf.name_scope("scope"):
        q = tf.FIFOQueue(3, tf.float32, name="q")
        enqueue = q.enqueue(1.0)
    return tf.train.QueueRunner(q, [enqueue, enqueue], **kwargs)


def _fields(proto):
    return None if proto is None else (
        proto.queue_name, list(proto.enqueue_op_name), proto.close_op_name,
        proto.cancel_op_name, list(proto.queue_closed_exception_types))


def runner_to_proto(tf):
    qr = _runner(tf, queue_closed_exception_types=(tf.errors.OutOfRangeError,
                                                   tf.errors.CancelledError))
    return [_fields(qr.to_proto(scope)) for scope in (None, "scope", "scope/", "other")]


def runner_from_proto(tf):
    qr = _runner(tf)
    back = tf.train.QueueRunner.from_proto(qr.to_proto())
    return (back.name, back.queue.name, [op.name for op in back.enqueue_ops],
            back.close_op.name, back.cancel_op.name,
            [t.__name__ for t in back.queue_closed_exception_types])


def runner_from_proto_scoped(tf):
    qr = _runner(tf)
    proto = qr.to_proto("scope")
    with tf.name_scope("copy"):
        tf.FIFOQueue(3, tf.float32, name="q").enqueue(1.0)
    return _fields(tf.train.QueueRunner(queue_runner_def=proto, import_scope="copy")
                   .to_proto())


def runner_bad_args(tf):
    q = tf.FIFOQueue(3, tf.float32)
    e = q.enqueue(1.0)
    return [outcome(tf.train.QueueRunner, **kwargs) for kwargs in (
        {}, {"queue": q}, {"queue": q, "enqueue_ops": []},
        {"queue": q, "enqueue_ops": [e], "queue_closed_exception_types": [ValueError]},
        {"queue": q, "enqueue_ops": [e], "queue_closed_exception_types": (ValueError,)},
        {"queue": q, "enqueue_ops": [e], "queue_closed_exception_types": ()})]


def runner_thread_names(tf):
    qr = _runner(tf)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = qr.create_threads(sess, coord=coord)
        again = qr.create_threads(sess, coord=coord)
        alone = _runner(tf).create_threads(sess, daemon=True)
        coord.request_stop()
        for t in threads:
            t.start()
        coord.join(threads)
        return ([(t.name, t.daemon) for t in threads], again,
                [(t.name, t.daemon) for t in alone])


def runner_fills_and_closes(tf):
    q = tf.FIFOQueue(10, tf.int64)
    x = tf.train.limit_epochs(tf.constant(5, tf.int64), num_epochs=4)
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(x)]))
    return _drain(tf, q.dequeue())


def runner_records_exception(tf):
    q = tf.FIFOQueue(10, tf.float32)
    bad = q.enqueue(tf.placeholder(tf.float32))
    qr = tf.train.QueueRunner(q, [bad])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = qr.create_threads(sess, coord=coord, start=True)
        joined = outcome(coord.join, threads, stop_grace_period_secs=5)
        return coord.should_stop(), type(joined).__name__, qr.exceptions_raised


def start_runners_bad_session(tf):
    return (outcome(tf.train.start_queue_runners, sess=3),
            outcome(tf.train.start_queue_runners))


# -- Coordinator -------------------------------------------------------------------------

def coordinator_first_exception(tf):
    coord = tf.train.Coordinator()
    states = [coord.should_stop()]
    for message in ("first", "second"):
        try:
            raise ValueError(message)
        except ValueError:
            coord.request_stop(ex=__import__("sys").exc_info())
    states.append(coord.should_stop())
    raised = outcome(coord.join)
    late = outcome(coord.request_stop, (ValueError, ValueError("late"), None))
    coord.clear_stop()
    return states, raised, late, coord.should_stop(), coord.joined


def coordinator_clean_stop(tf):
    coord = tf.train.Coordinator()
    try:
        raise tf.errors.OutOfRangeError(None, None, "done")
    except tf.errors.OutOfRangeError as err:
        coord.request_stop(err)
    return coord.should_stop(), outcome(coord.join), coord.joined


def coordinator_stop_on_exception(tf):
    coord = tf.train.Coordinator(clean_stop_exception_types=())
    with coord.stop_on_exception():
        raise tf.errors.OutOfRangeError(None, None, "not clean here")
    return coord.should_stop(), outcome(coord.raise_requested_exception)


def coordinator_stragglers(tf):
    coord = tf.train.Coordinator()
    release = threading.Event()
    thread = threading.Thread(target=release.wait, name="straggler")
    thread.start()
    coord.request_stop()
    raised = outcome(coord.join, [thread], stop_grace_period_secs=0.01)
    ignored = outcome(coord.join, [thread], stop_grace_period_secs=0.01,
                      ignore_live_threads=True)
    release.set()
    thread.join()
    return raised, ignored


def coordinator_thread_exception(tf):
    coord = tf.train.Coordinator()

    def body():
        with coord.stop_on_exception():
            raise RuntimeError("in a thread")

    threads = [threading.Thread(target=body)]
    for t in threads:
        t.start()
    return outcome(coord.join, threads), coord.wait_for_stop(0.01)


def looper_thread(tf):
    coord = tf.train.Coordinator()
    calls = []

    def body(n):
        calls.append(n)
        if len(calls) == 3:
            coord.request_stop()

    looper = tf.train.LooperThread(coord, None, target=body, args=(7,))
    looper.start()
    coord.join()
    return calls, looper.daemon, outcome(tf.train.LooperThread, "not a coordinator", 1), \
        outcome(tf.train.LooperThread, coord, 1, args=(1,))


def looper_thread_error(tf):
    coord = tf.train.Coordinator()

    def body():
        raise ValueError("loop body failed")

    tf.train.LooperThread.loop(coord, 0.001, target=body)
    return outcome(coord.join, stop_grace_period_secs=5)


CASES = {
    **{f"string_producer_cap{c}_epochs{e}": string_producer(c, e)
       for c in (2, 32) for e in (1, 2)},
    **{f"range_producer_cap{c}_epochs{e}": range_producer(c, e) for c in (3, 32) for e in (1, 3)},
    **{f"slice_producer_epochs{e}": slice_producer(e) for e in (1, 2)},
    **{f"keep_vector_{b}": keep_vector(b) for b in ("maybe_batch", "maybe_batch_join")},
    **{f"keep_computed_{b}": keep_computed(b) for b in ("maybe_batch", "maybe_batch_join")},
    **{f"bad_batch_{name}": bad_batch(make) for name, make in BAD_BATCHES.items()},
}
CASES.update({f.__name__: f for f in (
    input_producer_rows, input_producer_element_shape, limit_epochs_runs,
    limit_epochs_errors, string_producer_empty, slice_producer_empty, match_filenames,
    keep_false_graph, explicit_shapes, named_and_shared, runner_to_proto, runner_from_proto,
    runner_from_proto_scoped, runner_bad_args, runner_thread_names, runner_fills_and_closes,
    runner_records_exception, start_runners_bad_session, coordinator_first_exception,
    coordinator_clean_stop, coordinator_stop_on_exception, coordinator_stragglers,
    coordinator_thread_exception, looper_thread, looper_thread_error)})
