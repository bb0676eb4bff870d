"""Batching: every tf.train batching function × enqueue_many × dynamic_pad ×
allow_smaller_final_batch × list / tuple / dict examples: what it returns, the ops it
builds, and the batches its queue runners produce until the input runs out; and the
maybe_ functions with a keep_input fed at run time (the tf.cond around each enqueue, and
which examples reach the batch, their enqueue ops run by hand)."""

import itertools

from observe import node_defs


def _drain(tf, fetch, sess):
    """Every batch `fetch` gives until OutOfRange, with queue runners under a coordinator."""
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord=coord)
    batches = []
    try:
        while True:
            batches.append(sess.run(fetch))
    except tf.errors.OutOfRangeError as err:
        end = type(err).__name__
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=5)
    return batches, end


def _examples(tf, kind, enqueue_many):
    """One example (or a batch of examples with enqueue_many) of structure `kind`."""
    if enqueue_many:
        i = tf.train.limit_epochs(tf.range(5), num_epochs=1)
    else:
        i = tf.train.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
    x = tf.cast(i, tf.float32) * 0.5
    return {"list1": [i], "list2": [i, x], "tuple": (i, x), "dict": {"b": x, "a": i},
            "dict1": {"k": i}}[kind]


def _padded(tf, enqueue_many):
    i = tf.train.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
    if enqueue_many:
        # (TensorFlow crashes on a padded batch of empty rows given with enqueue_many.)
        return [tf.reshape(tf.range(i * 2 + 2), [2, -1]), tf.fill([2], i)]
    return [tf.range(i), i]


BATCHERS = {
    "batch": lambda tf, ex, **kw: tf.train.batch(ex, 2, **kw),
    "maybe_batch": lambda tf, ex, **kw: tf.train.maybe_batch(ex, True, 2, **kw),
    "batch_join": lambda tf, ex, **kw: tf.train.batch_join([ex], 2, **kw),
    "maybe_batch_join": lambda tf, ex, **kw: tf.train.maybe_batch_join([ex], True, 2, **kw),
    "shuffle_batch": lambda tf, ex, **kw: tf.train.shuffle_batch(ex, 2, 8, 3, seed=7, **kw),
    "maybe_shuffle_batch": lambda tf, ex, **kw: tf.train.maybe_shuffle_batch(
        ex, 2, 8, 3, True, seed=7, **kw),
    "shuffle_batch_join": lambda tf, ex, **kw: tf.train.shuffle_batch_join(
        [ex], 2, 8, 3, seed=7, **kw),
    "maybe_shuffle_batch_join": lambda tf, ex, **kw: tf.train.maybe_shuffle_batch_join(
        [ex], 2, 8, 3, True, seed=7, **kw),
}


def _pads(batcher):
    return (False,) if "shuffle" in batcher else (False, True)


def _sorted_rows(batches, all_rows):
    """Shuffled batches compared without their order: the batch sizes, and every row when
    all of them came out (which ones a dropped final batch leaves out is random)."""
    def rows(batch):
        parts = batch if isinstance(batch, list) else list(batch.values()) \
            if isinstance(batch, dict) else [batch]
        return [tuple(p[k].tolist() for p in parts) for k in range(len(parts[0]))]
    return ([len(rows(b)) for b in batches],
            sorted(r for b in batches for r in rows(b)) if all_rows else None)


def graph_case(batcher, kind, enqueue_many, dynamic_pad, smaller):
    def case(tf):
        kw = {"enqueue_many": enqueue_many, "allow_smaller_final_batch": smaller}
        if dynamic_pad:
            kw["dynamic_pad"] = True
        out = BATCHERS[batcher](tf, _examples(tf, kind, enqueue_many), **kw)
        graph = tf.get_default_graph()
        return out, node_defs(graph), graph.get_collection(tf.GraphKeys.SUMMARIES), [
            (qr.name, [op.name for op in qr.enqueue_ops], qr.close_op.name,
             qr.cancel_op.name) for qr in graph.get_collection(tf.GraphKeys.QUEUE_RUNNERS)]
    return case


def values_case(batcher, kind, enqueue_many, smaller):
    def case(tf):
        out = BATCHERS[batcher](tf, _examples(tf, kind, enqueue_many),
                                enqueue_many=enqueue_many, allow_smaller_final_batch=smaller)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            batches, end = _drain(tf, out, sess)
        return (_sorted_rows(batches, smaller) if "shuffle" in batcher else batches), end
    return case


def padded_case(batcher, enqueue_many, smaller):
    def case(tf):
        out = BATCHERS[batcher](tf, _padded(tf, enqueue_many), enqueue_many=enqueue_many,
                                dynamic_pad=True, allow_smaller_final_batch=smaller)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            return out, _drain(tf, out, sess)
    return case


def _maybe_fed(tf, batcher, examples, keep, enqueue_many):
    """`batcher` (a maybe_ function) on `examples`, with a join given them twice."""
    fn = getattr(tf.train, batcher)
    if "join" in batcher:
        examples = [examples, examples]
    if "shuffle" in batcher:
        return fn(examples, 2, 10, 0, keep, seed=7, enqueue_many=enqueue_many)
    return fn(examples, keep, 2, enqueue_many=enqueue_many)


def keep_fed_graph_case(batcher, enqueue_many):
    def case(tf):
        x = tf.placeholder(tf.int32, [None] if enqueue_many else [])
        keep = tf.placeholder(tf.bool, [])
        out = _maybe_fed(tf, batcher, [x, tf.cast(x, tf.float32)], keep, enqueue_many)
        graph = tf.get_default_graph()
        return out, node_defs(graph), [
            [t.name for t in qr.enqueue_ops]
            for qr in graph.get_collection(tf.GraphKeys.QUEUE_RUNNERS)]
    return case


def keep_fed_values_case(batcher, enqueue_many):
    """Only the examples fed with keep_input True reach the queue."""
    def case(tf):
        x = tf.placeholder(tf.int32, [None] if enqueue_many else [])
        keep = tf.placeholder(tf.bool, [])
        out = _maybe_fed(tf, batcher, [x, tf.cast(x, tf.float32)], keep, enqueue_many)
        runner = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[0]
        # two rows kept: a batch, whichever way a shuffling queue orders them
        fed = [[1, 2], [3], [4]] if enqueue_many else [1, 2, 3, 4]
        with tf.Session() as sess:
            for i, (kept, value) in enumerate(zip([False, True, True, False], fed)):
                sess.run(runner.enqueue_ops[i % len(runner.enqueue_ops)],
                         {x: value, keep: kept})
            size = sess.run(runner.queue.size())
            batch = sess.run(out)
        if "shuffle" in batcher:
            batch = sorted(zip(batch[0].tolist(), batch[1].tolist()))
        return size, batch
    return case


def keep_computed_case(batcher, enqueue_many, smaller):
    """A keep_input computed from the input (its even numbers; with enqueue_many, whether
    the batch holds a 3), under queue-runner threads."""
    def case(tf):
        ex = _examples(tf, "list2", enqueue_many)
        keep = tf.reduce_any(tf.equal(ex[0], 3)) if enqueue_many else tf.equal(ex[0] % 2, 0)
        out = getattr(tf.train, batcher)([ex] if "join" in batcher else ex, keep, 2,
                                         enqueue_many=enqueue_many,
                                         allow_smaller_final_batch=smaller)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            return _drain(tf, out, sess)
    return case


CASES = {}
for _b, _kind, _many, _smaller in itertools.product(
        BATCHERS, ("list1", "list2", "tuple", "dict", "dict1"), (False, True), (False, True)):
    for _pad in _pads(_b):
        CASES[f"graph_{_b}_{_kind}_many{_many:d}_pad{_pad:d}_smaller{_smaller:d}"] = \
            graph_case(_b, _kind, _many, _pad, _smaller)
for _b, _kind, _many, _smaller in itertools.product(
        BATCHERS, ("list1", "list2", "dict"), (False, True), (False, True)):
    CASES[f"values_{_b}_{_kind}_many{_many:d}_smaller{_smaller:d}"] = \
        values_case(_b, _kind, _many, _smaller)
for _b, _many, _smaller in itertools.product(
        ("batch", "maybe_batch", "batch_join", "maybe_batch_join"), (False, True),
        (False, True)):
    CASES[f"padded_{_b}_many{_many:d}_smaller{_smaller:d}"] = padded_case(_b, _many, _smaller)
for _b, _many in itertools.product(
        ("maybe_batch", "maybe_batch_join", "maybe_shuffle_batch", "maybe_shuffle_batch_join"),
        (False, True)):
    CASES[f"keep_fed_graph_{_b}_many{_many:d}"] = keep_fed_graph_case(_b, _many)
    CASES[f"keep_fed_values_{_b}_many{_many:d}"] = keep_fed_values_case(_b, _many)
for _b, _many, _smaller in itertools.product(("maybe_batch", "maybe_batch_join"),
                                           (False, True), (False, True)):
    CASES[f"keep_computed_{_b}_many{_many:d}_smaller{_smaller:d}"] = \
        keep_computed_case(_b, _many, _smaller)
