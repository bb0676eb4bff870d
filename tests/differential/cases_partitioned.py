"""Partitioned variables: get_variable with a partitioner (names, shapes, slices,
collections, the concat graph, values, reuse and errors), the three partitioners, the
parts' devices under replica_device_setter, and Saver checkpoints written as slices of
one entry per variable, restored into other partitionings."""

import os
import re
import tempfile

import numpy as np
from observe import cluster, node_defs, outcome, placed

INITIAL = np.arange(15, dtype=np.float32).reshape(5, 3)


def _parts(pv):
    """What a PartitionedVariable shows: its own fields and each part's."""
    return {"name": pv.name, "shape": pv.get_shape(), "dtype": pv.dtype, "len": len(pv),
            "partitions": list(pv._get_partitions()),
            "parts": [[v.name, v.get_shape(), v.dtype, v._get_save_slice_info().full_name,
                       v._get_save_slice_info().spec] for v in pv],
            "same_list": [v.name for v in pv._get_variable_list()] == [v.name for v in pv]}


def _collections(tf):
    graph = tf.get_default_graph()
    return {key: [getattr(v, "name", None) for v in graph.get_collection(key)]
            for key in (tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.TRAINABLE_VARIABLES,
                        tf.GraphKeys.LOCAL_VARIABLES, tf.GraphKeys.REGULARIZATION_LOSSES)}


def fixed_size_parts_and_their_graph(tf):
    w = tf.get_variable("w", [5, 3], partitioner=tf.fixed_size_partitioner(3),
                        initializer=tf.ones_initializer())
    x = tf.placeholder(tf.float32, [None, 5], name="x")
    y = tf.matmul(x, w, name="y")
    again = w.as_tensor()
    return _parts(w), _collections(tf), node_defs(tf.get_default_graph()), y, again


def parts_along_axis_1_from_a_tensor(tf):
    w = tf.get_variable("w", initializer=tf.constant(INITIAL),
                        partitioner=tf.fixed_size_partitioner(2, axis=1))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return (_parts(w), node_defs(tf.get_default_graph()),
                sess.run([w.as_tensor(), list(w)]))


def parts_from_a_value_and_an_initializer(tf):
    a = tf.get_variable("a", [5, 3], initializer=INITIAL,
                        partitioner=tf.fixed_size_partitioner(2))
    b = tf.get_variable("b", [4, 2], tf.int32, initializer=tf.constant_initializer(7),
                        partitioner=tf.fixed_size_partitioner(4))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return _parts(a), _parts(b), sess.run([tf.convert_to_tensor(a), b.as_tensor()])


def assign_split_along_the_parts(tf):
    w = tf.get_variable("w", initializer=tf.constant(INITIAL),
                        partitioner=tf.fixed_size_partitioner(2))
    assigned = w.assign(INITIAL * 2)
    added = w.assign_add(tf.ones([5, 3]))
    subtracted = w.assign_sub([tf.ones([3, 3]), tf.ones([2, 3])])
    through_tf = [tf.assign(w, INITIAL), tf.assign_add(w, INITIAL), tf.assign_sub(w, INITIAL)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return (assigned, added, subtracted, through_tf, sess.run(assigned), sess.run(added),
                sess.run(subtracted), sess.run(w.as_tensor()),
                [sess.run(ops) for ops in through_tf])


def glorot_limits_are_those_of_the_full_shape(tf):
    w = tf.get_variable("w", [6, 4], partitioner=tf.fixed_size_partitioner(3))
    graph = tf.get_default_graph()
    limits = [graph.get_tensor_by_name(f"w/part_{i}/Initializer/random_uniform/max:0")
              for i in range(3)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        value = sess.run(w.as_tensor())
        found = sess.run(limits)
    return found, value.shape, bool(np.all(np.abs(value) <= found[0]))


def partitioners(tf):
    shapes = [tf.TensorShape([10, 8]), tf.TensorShape([3, 2]), tf.TensorShape([1000, 64])]
    made = [tf.fixed_size_partitioner(5), tf.fixed_size_partitioner(3, axis=1),
            tf.variable_axis_size_partitioner(100), tf.variable_axis_size_partitioner(
                100, axis=1, max_shards=3), tf.variable_axis_size_partitioner(1 << 14),
            tf.min_max_variable_partitioner(4, min_slice_size=64),
            tf.min_max_variable_partitioner(40, min_slice_size=64),
            tf.min_max_variable_partitioner(100)]
    return ([[p(shape=s, dtype=d) for s in shapes for d in (tf.float32, tf.float64,
                                                              tf.string)] for p in made],
            outcome(tf.variable_axis_size_partitioner, 0),
            outcome(tf.variable_axis_size_partitioner, 10, bytes_per_string_element=0),
            outcome(tf.variable_axis_size_partitioner(100), [10, 8], tf.float32),
            outcome(tf.min_max_variable_partitioner(4, axis=2), tf.TensorShape([10, 8]),
                    tf.float64))


def bad_partitioner_output_and_shapes(tf):
    def get(name, shape, partitioner, **kwargs):
        return outcome(tf.get_variable, name, shape, partitioner=partitioner, **kwargs)

    return [get("a", [4, 3], lambda shape, dtype: [2, 2]),
            get("b", [4, 3], lambda shape, dtype: [2]),
            get("c", [4, 3], lambda shape, dtype: [0, 1]),
            get("d", [4, 3], lambda shape, dtype: 2),
            get("e", [None, 3], tf.fixed_size_partitioner(2)),
            get("f", None, tf.fixed_size_partitioner(2)),
            get("g", [4, 3], 5),
            get("h", None, tf.fixed_size_partitioner(2), initializer=INITIAL)]


def a_scalar_is_never_partitioned(tf):
    s = tf.get_variable("s", [], partitioner=tf.fixed_size_partitioner(2))
    one = tf.get_variable("one", [1, 3], partitioner=tf.fixed_size_partitioner(2))
    return s.name, hasattr(s, "_get_partitions"), _parts(one), node_defs(tf.get_default_graph())


def reuse(tf):
    w = tf.get_variable("w", [4, 3], partitioner=tf.fixed_size_partitioner(2))
    plain = tf.get_variable("plain", [2])
    seen = [outcome(tf.get_variable, "w", [4, 3], partitioner=tf.fixed_size_partitioner(2)),
            outcome(tf.get_variable, "w", [4, 3]),
            outcome(tf.get_variable, "plain", [2], partitioner=tf.fixed_size_partitioner(2))]
    with tf.variable_scope("", reuse=True):
        seen += [tf.get_variable("w") is w,
                 tf.get_variable("w", [4, 3], partitioner=tf.fixed_size_partitioner(2)) is w,
                 outcome(tf.get_variable, "w", [4, 3],
                         partitioner=tf.fixed_size_partitioner(3)),
                 outcome(tf.get_variable, "w", [5, 3],
                         partitioner=tf.fixed_size_partitioner(2)),
                 outcome(tf.get_variable, "w", [4, 3], tf.int32,
                         partitioner=tf.fixed_size_partitioner(2)),
                 outcome(tf.get_variable, "zz", [4, 3],
                         partitioner=tf.fixed_size_partitioner(2)),
                 tf.get_variable("w/part_1") is list(w)[1]]
    with tf.variable_scope("", reuse=tf.AUTO_REUSE):
        seen.append(tf.get_variable("w", [4, 3],
                                    partitioner=tf.fixed_size_partitioner(2)) is w)
    seen.append(outcome(tf.convert_to_tensor, w, dtype=tf.int32))
    return seen, plain.name, _collections(tf)


def variable_scope_partitioner_and_regularizer(tf):
    with tf.variable_scope("layer", partitioner=tf.fixed_size_partitioner(2),
                           regularizer=lambda t: tf.reduce_sum(t, name="l")) as scope:
        w = tf.get_variable("w", [6, 2])
        with tf.variable_scope("inner"):
            v = tf.get_variable("v", [3, 4], partitioner=tf.fixed_size_partitioner(3))
            u = tf.get_variable("u", [4])
        scope.reuse_variables()
        same = tf.get_variable("w") is w
    return (_parts(w), _parts(v), _parts(u), same, _collections(tf),
            tf.get_variable_scope().partitioner is None)


def parts_round_robin_on_two_ps_tasks(tf):
    servers = cluster(tf, ps=2, workers=2)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2,
                                                  worker_device="/job:worker/task:0")):
        w = tf.get_variable("w", [5, 2], initializer=tf.ones_initializer(),
                            partitioner=tf.fixed_size_partitioner(3))
        b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
        e = tf.get_variable("e", [4, 2], initializer=tf.ones_initializer(),
                            partitioner=tf.fixed_size_partitioner(2))
        x = tf.constant(np.ones([1, 5], np.float32), name="x")
        y = tf.add(tf.matmul(x, w), b, name="y")
        total = tf.reduce_sum(e.as_tensor(), name="total")
    graph = tf.get_default_graph()
    requested = {op.name: op.device for op in graph.get_operations()}
    with tf.Session(servers["worker"][1].target) as sess:
        sess.run(tf.global_variables_initializer())
        # (TensorFlow's graph optimizer removes the identities and folds the constants)
        ran = {node: device for node, device in placed(tf, sess, [y, total]).items()
               if node.endswith(("part_0", "part_1", "part_2", "read", "concat"))
               or node in ("y", "total")}
        values = sess.run([y, total])
    return [v.device for v in (*w, b, *e)], requested, ran, values


def gradients_reach_each_part_as_its_slice(tf):
    w = tf.get_variable("w", initializer=tf.constant(INITIAL),
                        partitioner=tf.fixed_size_partitioner(2, axis=1))
    x = tf.constant(np.ones([2, 5], np.float32), name="x")
    loss = tf.reduce_sum(tf.matmul(x, w) ** 2, name="loss")
    grads = tf.gradients(loss, list(w))
    graph = tf.get_default_graph()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return (grads, sess.run(grads),
                node_defs(graph, skip={op.name for op in graph.get_operations()
                                       if "concat_grad" not in op.name}))


def concat_gradients_of_unknown_shapes_and_many_inputs(tf):
    """ConcatOffset from ShapeN when a shape is unknown; a SplitV past 16 inputs."""
    a = tf.placeholder(tf.float32, [None, 2], name="a")
    b = tf.placeholder(tf.float32, [None, 3], name="b")
    joined = tf.concat([a, b], -1, name="joined")
    many = [tf.constant(np.full([1, 2], i, np.float32), name=f"c{i}") for i in range(17)]
    stacked = tf.concat(many, 0, name="stacked")
    up = [tf.placeholder(tf.float32, [None, 5], name="up0"),
          tf.placeholder(tf.float32, [17, 2], name="up1")]
    grads = tf.gradients([joined, stacked], [a, b] + many, grad_ys=up)
    feed = {a: np.ones([2, 2], np.float32), b: np.ones([2, 3], np.float32),
            up[0]: np.arange(10, dtype=np.float32).reshape(2, 5),
            up[1]: np.arange(34, dtype=np.float32).reshape(17, 2)}
    shapes = tf.shape_n([a, b, many[0]], out_type=tf.int64, name="shapes")
    with tf.Session() as sess:
        values = sess.run(grads + shapes, feed)
    graph = tf.get_default_graph()
    inside = ("gradients/joined_grad/", "gradients/stacked_grad/")
    # (inputs from outside the two gradients as such: TensorFlow wraps grad_ys in Identities)
    return values, sorted([op.name, op.type, [i if i.startswith(inside + ("joined", "stacked"))
                                              else "outside" for i in op.node_def.input]]
                          for op in graph.get_operations() if op.name.startswith(inside))


def autopacked_lists_are_named_by_the_input_and_their_index(tf):
    """(The gradient past 16 parts slices at [axis, 0]: TensorFlow names such a packed
    list by the op's input and its constants by their index.)"""
    a = tf.placeholder(tf.int32, [], name="a")
    packed = [tf.convert_to_tensor([[1, 2], [a, 3]]),
              tf.convert_to_tensor(((a, 4), [6, 7], [a, a])),
              tf.reshape(tf.zeros([4]), [a, -1]), tf.slice(tf.zeros([4, 4]), [a, 0], [1, -1]),
              tf.convert_to_tensor([a, 5], name="named")]
    with tf.Session() as sess:
        values = sess.run(packed, {a: 2})
    return values, node_defs(tf.get_default_graph())


def embedding_lookup_in_a_partitioned_table(tf):
    """The table in 3 parts on 2 ps tasks: rows looked up by both strategies, the
    gradient an IndexedSlices per part, and only the rows looked up trained."""
    servers = cluster(tf, ps=2, workers=2)
    table_value = np.arange(14, dtype=np.float32).reshape(7, 2)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2,
                                                  worker_device="/job:worker/task:0")):
        table = tf.get_variable("table", initializer=tf.constant(table_value),
                                partitioner=tf.fixed_size_partitioner(3))
        ids = tf.constant([6, 0, 3, 6], name="ids")
        rows = {strategy: tf.nn.embedding_lookup(table, ids, partition_strategy=strategy,
                                                 name=strategy)
                for strategy in ("mod", "div")}
        loss = tf.reduce_sum(rows["div"] ** 2, name="loss")
        grads = tf.gradients(loss, list(table))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session(servers["worker"][1].target) as sess:
        sess.run(tf.global_variables_initializer())
        looked_up = sess.run(rows)
        seen_grads = [[type(g).__name__, sess.run([g.indices, g.values])] for g in grads]
        sess.run(train)
        trained = sess.run(table.as_tensor())
    return (looked_up, seen_grads, trained,
            {op.name: op.device for op in tf.get_default_graph().get_operations()
             if op.type in ("GatherV2", "Gather", "ScatterSub", "DynamicPartition",
                            "ParallelDynamicStitch")})


def optimizer_slots_of_parts(tf):
    """Slots are never partitioned themselves, but saved as slices like their parts."""
    seen = []
    for make in (lambda: tf.train.MomentumOptimizer(0.1, 0.9),
                 lambda: tf.train.AdamOptimizer(0.1), lambda: tf.train.AdagradOptimizer(0.1),
                 lambda: tf.train.RMSPropOptimizer(0.1)):
        tf.reset_default_graph()
        with tf.variable_scope("m", partitioner=tf.fixed_size_partitioner(2)):
            w = tf.get_variable("w", initializer=tf.constant(INITIAL))
            loss = tf.reduce_sum(tf.square(w.as_tensor()))
            optimizer = make()
            train = optimizer.minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                sess.run(train)
            seen.append([[v.name, v.get_shape(), v._save_slice_info and [
                v._save_slice_info.full_name, v._save_slice_info.spec]]
                for v in tf.global_variables()])
            seen.append(sess.run([w.as_tensor()] + [optimizer.get_slot(part, name)
                                                    for name in optimizer.get_slot_names()
                                                    for part in w]))
    return seen


def momentum_slots_saved_as_slices(tf):
    def model(parts):
        def make(tf):
            w = tf.get_variable("w", [5, 3], initializer=tf.zeros_initializer(),
                                partitioner=tf.fixed_size_partitioner(parts))
            tf.train.MomentumOptimizer(0.1, 0.9).minimize(tf.reduce_sum(w.as_tensor() ** 2))
            return w
        return make

    folder = tempfile.mkdtemp()
    w = model(2)(tf)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(w.assign(INITIAL))
        sess.run(tf.get_default_graph().get_operation_by_name("Momentum"))
        path = saver.save(sess, os.path.join(folder, "model"))
    tf.reset_default_graph()
    w = model(3)(tf)
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, path)
        return sess.run([w.as_tensor()] + [v for v in tf.global_variables()
                                           if "Momentum" in v.name])


def create_partitioned_variables(tf):
    first = tf.create_partitioned_variables([5, 3], [2, 1], tf.constant(INITIAL))
    with tf.variable_scope("outer", initializer=tf.ones_initializer()):
        named = tf.create_partitioned_variables([4, 6], [1, 3], tf.zeros_initializer(),
                                                dtype=tf.int32, name="grid", trainable=False)
        again = tf.create_partitioned_variables([4], [2], tf.ones_initializer())
    errors = [outcome(tf.create_partitioned_variables, [4, 3], [2], tf.ones_initializer()),
              outcome(tf.create_partitioned_variables, [], [], tf.ones_initializer()),
              outcome(tf.create_partitioned_variables, [4, 3], [2, 1], tf.ones_initializer(),
                      name="grid_2", reuse=True)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run([first, named, again])
    return ([[v.name, v.get_shape(), v._get_save_slice_info().spec] for v in
             first + named + again], values, errors, _collections(tf),
            node_defs(tf.get_default_graph()))


# Saver: one entry per variable, written as slices --------------------------------------


def _save(tf, make, values=None, **saver_args):
    """Builds `make(tf)` (a PartitionedVariable or a Variable), gives it `values` (the
    INITIAL by default), saves it; the checkpoint's prefix."""
    folder = tempfile.mkdtemp()
    tf.reset_default_graph()
    var = make(tf)
    saver = tf.train.Saver(**saver_args)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(var.assign(INITIAL if values is None else values))
        return saver.save(sess, os.path.join(folder, "model"))


def _restore(tf, path, make):
    """What `make(tf)`'s variable holds after a Saver restored it from `path`, or the
    error's class and TensorFlow's kernel line."""
    tf.reset_default_graph()
    var = make(tf)
    saver = tf.train.Saver([var])
    with tf.Session() as sess:
        try:
            saver.restore(sess, path)
        except Exception as err:  # the error is what is compared
            line = re.search(r"tensor_name = [^\n]*|Assign requires[^\n]*|Key [^\n]*",
                             str(err))
            return type(err).__name__, line.group(0) if line else str(err)
        return sess.run(var.as_tensor() if hasattr(var, "as_tensor") else var)


def _partitioned(parts, axis=0, shape=(5, 3), dtype="float32"):
    return lambda tf: tf.get_variable("w", list(shape), getattr(tf, dtype),
                                      initializer=tf.zeros_initializer(),
                                      partitioner=tf.fixed_size_partitioner(parts, axis))


def _whole(shape=(5, 3)):
    return lambda tf: tf.get_variable("w", list(shape), initializer=tf.zeros_initializer())


def saver_round_trips(tf):
    """Saved as 2 parts along axis 0: restored as 2, 3 or 5 parts, along axis 1, whole;
    and a whole variable restored into parts."""
    sliced = _save(tf, _partitioned(2))
    whole = _save(tf, _whole())
    return ([_restore(tf, sliced, make) for make in (
                _partitioned(2), _partitioned(3), _partitioned(5), _partitioned(3, axis=1),
                _whole())],
            [_restore(tf, whole, make) for make in (_partitioned(2), _partitioned(2, 1))])


def saver_restore_errors(tf):
    sliced = _save(tf, _partitioned(2))
    return [_restore(tf, sliced, make) for make in (
        _partitioned(2, shape=(6, 3)), _partitioned(2, dtype="int32"), _whole((6, 3)))]


def saver_var_lists(tf):
    w = tf.get_variable("w", [4, 3], partitioner=tf.fixed_size_partitioner(2))
    u = tf.get_variable("u", [4, 3], partitioner=tf.fixed_size_partitioner(2))
    v = tf.get_variable("v", [2])
    built = [outcome(tf.train.Saver, var_list)
             for var_list in ({"x": w}, {"x": list(w)}, list(w)[:1], [w, list(w)[0]], [w, v],
                              [w, w], {"x": [list(w)[0], v]}, {"x": [list(w)[0], list(u)[1]]})]
    return [made if isinstance(made, Exception) else made.saver_def.restore_op_name
            for made in built]


def saver_of_parts_on_two_ps_tasks(tf):
    """sharded=True under replica_device_setter: each ps task writes its own parts."""
    servers = cluster(tf, ps=2, workers=2)
    folder = tempfile.mkdtemp()
    with tf.device(tf.train.replica_device_setter(ps_tasks=2,
                                                  worker_device="/job:worker/task:0")):
        w = tf.get_variable("w", initializer=tf.constant(INITIAL),
                            partitioner=tf.fixed_size_partitioner(3))
    saver = tf.train.Saver(sharded=True)
    target = servers["worker"][0].target
    with tf.Session(target) as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, os.path.join(folder, "model"))
        sess.run(w.assign(np.zeros([5, 3], np.float32)))
        saver.restore(sess, path)
        restored = sess.run(w.as_tensor())
    return restored, len([f for f in os.listdir(folder) if ".data-" in f])


CASES = {name: fn for name, fn in list(globals().items())
         if callable(fn) and not name.startswith("_") and fn.__module__ == __name__}
