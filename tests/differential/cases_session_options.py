"""Sessions: what their protos say and what their options do: GraphDef versions,
origins of errors, GraphOptions, CallableOptions, inter-op thread pools."""

import sys

import numpy as np
from observe import outcome

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# -- GraphDef versions ---------------------------------------------------------------

def _versions(graph_def):
    return {"fields": sorted(f.name for f, _ in graph_def.ListFields()),
            "producer": graph_def.versions.producer,
            "min_consumer": graph_def.versions.min_consumer,
            "nodes": len(graph_def.node)}


@case
def graph_def_versions_of_an_empty_graph(tf):
    with tf.Session() as sess:
        return _versions(sess.graph_def), str(sess.graph_def)


@case
def graph_def_versions_as_the_graph_grows(tf):
    seen = []
    with tf.Session() as sess:
        for value in (5.0, 6.0):
            seen.append(_versions(sess.graph_def))
            sess.run(tf.constant(value))
        seen.append(_versions(tf.get_default_graph().as_graph_def()))
    return seen


@case
def graph_def_versions_of_the_graph(tf):
    versions = tf.get_default_graph().graph_def_versions
    return versions.producer, versions.min_consumer, list(versions.bad_consumers)


@case
def graph_def_versions_of_partition_graphs(tf):
    c = tf.constant(1.0)
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(c, options=tf.RunOptions(output_partition_graphs=True),
                 run_metadata=metadata)
    return [str(graph.versions) for graph in metadata.partition_graphs]


@case
def graph_def_versions_survive_import(tf):
    graph_def = tf.Graph().as_graph_def()
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        return _versions(g.as_graph_def()), outcome(lambda: g.version)


# -- origins of ops (Graph._original_op) ---------------------------------------------

@case
def ops_record_the_op_they_were_made_from(tf):
    g = tf.get_default_graph()
    a = tf.constant(0.0, shape=[2, 3])
    with g._original_op(a.op):
        b = tf.identity(a, name="id")
        with g._original_op(b.op):
            c = tf.placeholder(tf.float32)
        d = tf.identity(b)
    e = tf.identity(d)

    def origin(op):
        return op._original_op and op._original_op.name

    with tf.Session() as sess:
        try:
            sess.run(c)
        except tf.errors.InvalidArgumentError as err:
            failed = (err.op.name, origin(err.op), origin(err.op._original_op))
    return [origin(x.op) for x in (a, b, c, d, e)], failed


# -- GraphOptions --------------------------------------------------------------------

def _output_shapes(graph_def):
    return {node.name: [None if s.unknown_rank else [d.size for d in s.dim]
                        for s in node.attr["_output_shapes"].list.shape]
            if "_output_shapes" in node.attr else "absent" for node in graph_def.node}


for _infer in (False, True):
    def _infer_shapes_case(tf, infer=_infer):
        config = tf.ConfigProto(graph_options=tf.GraphOptions(infer_shapes=infer))
        a = tf.placeholder(tf.float32, shape=[None, 2], name="a")
        tf.identity(a[0], name="s")
        tf.no_op(name="nothing")
        tf.placeholder(tf.int32, name="unknown")
        with tf.Session(config=config) as sess:
            return _output_shapes(sess.graph_def)
    CASES[f"graph_options_infer_shapes_{_infer}"] = _infer_shapes_case


def _cost_of(cost_graph, name):
    """A node of a cost graph: its device, and what it produced. (TensorFlow's graph
    optimizations rewrite other nodes, so only the fetched one is compared.)"""
    node, = [node for node in cost_graph.node if node.name == name]
    return (node.device, [(o.size, o.alias_input_port, [d.size for d in o.shape.dim], o.dtype)
                          for o in node.output_info], node.compute_cost >= 0)


for _every, _after in ((1, 0), (3, 0), (2, 3), (0, 0)):
    def _build_cost_model_case(tf, every=_every, after=_after):
        config = tf.ConfigProto(graph_options=tf.GraphOptions(
            build_cost_model=every, build_cost_model_after=after))
        a = tf.placeholder(tf.float32, shape=[2], name="a")
        b = tf.add(a, a, name="b")
        d = tf.multiply(b, tf.cast(tf.constant([1, 2], name="k"), tf.float32), name="d")
        steps, graphs = [], []
        with tf.Session(config=config) as sess:
            for step in range(7):
                metadata = tf.RunMetadata()
                sess.run(d, {a: [1.0, 2.0]}, run_metadata=metadata)
                if metadata.HasField("cost_graph"):
                    steps.append(step)
                    graphs.append(_cost_of(metadata.cost_graph, "d"))
            sess.run(b, {a: [1.0, 2.0]})  # another signature, counted apart
            metadata = tf.RunMetadata()
            sess.run(d, {a: [1.0, 2.0]}, run_metadata=metadata)
            steps.append(metadata.HasField("cost_graph"))
        return steps, graphs[:1]
    CASES[f"graph_options_build_cost_model_every_{_every}_after_{_after}"] = \
        _build_cost_model_case


@case
def graph_options_other_fields_are_accepted(tf):
    options = tf.GraphOptions(enable_recv_scheduling=True, place_pruned_graph=True,
                              enable_bfloat16_sendrecv=True, timeline_step=2)
    with tf.Session(config=tf.ConfigProto(graph_options=options)) as sess:
        return sess.run(tf.constant(3) * 2)


# -- CallableOptions (Session._make_callable_from_options) ---------------------------

def _config_pb2(tf):
    """The module of TensorFlow's config protos: CallableOptions is not in tf.*."""
    return sys.modules[tf.ConfigProto.__module__]


def _callable_graph(tf):
    ph = tf.placeholder(tf.float32, name="ph")
    a = tf.add(ph, 1.0, name="a")
    v = tf.Variable(0, name="v")
    tf.assign_add(v, 1, name="inc")
    return ph, a, v


@case
def callable_from_options_feeds_fetches_and_targets(tf):
    ph, a, v = _callable_graph(tf)
    options = _config_pb2(tf).CallableOptions(feed=[ph.name], fetch=[a.name, a.name],
                                              target=["inc"])
    with tf.Session() as sess:
        sess.run(v.initializer)
        call = sess._make_callable_from_options(options)
        results = [call(np.array(x, np.float32)) for x in (1.0, [2.0, 3.0])]
        only_targets = sess._make_callable_from_options(
            _config_pb2(tf).CallableOptions(target=["inc"]))
        return results, only_targets(), sess.run(v)


_BAD_CALLS = {
    "python_float": lambda call: call(2.0),
    "int32_array": lambda call: call(np.array([1, 2], np.int32)),
    "list": lambda call: call([2.0]),
    "too_few": lambda call: call(),
    "too_many": lambda call: call(np.float32(1), np.float32(2)),
}

for _name, _bad in _BAD_CALLS.items():
    def _bad_call_case(tf, bad=_bad):
        ph, a, _ = _callable_graph(tf)
        options = _config_pb2(tf).CallableOptions(feed=[ph.name], fetch=[a.name])
        with tf.Session() as sess:
            return bad(sess._make_callable_from_options(options))
    CASES[f"callable_from_options_bad_call_{_name}"] = _bad_call_case


@case
def callable_from_options_unknown_or_unfed_tensors(tf):
    ph, a, _ = _callable_graph(tf)
    config_pb2 = _config_pb2(tf)
    with tf.Session() as sess:
        unknown = outcome(sess._make_callable_from_options,
                          config_pb2.CallableOptions(fetch=["nope:0"]))
        unfed = sess._make_callable_from_options(config_pb2.CallableOptions(fetch=["a:0"]))
        return unknown, outcome(unfed)


@case
def callable_from_options_run_options_trace(tf):
    ph, a, _ = _callable_graph(tf)
    options = _config_pb2(tf).CallableOptions(feed=[ph.name], fetch=[a.name])
    options.run_options.trace_level = tf.RunOptions.FULL_TRACE
    with tf.Session() as sess:
        call = sess._make_callable_from_options(options)
        metadata = tf.RunMetadata()
        value = call(np.float32(1.0), run_metadata=metadata)
        untraced = tf.RunMetadata()
        sess._make_callable_from_options(_config_pb2(tf).CallableOptions(
            feed=[ph.name], fetch=[a.name]))(np.float32(1.0), run_metadata=untraced)
        return value, len(metadata.step_stats.dev_stats) > 0, len(untraced.step_stats.dev_stats)
