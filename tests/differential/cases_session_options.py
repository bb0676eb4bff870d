"""Sessions: what their protos say and what their options do: GraphDef versions,
origins of errors, GraphOptions, CallableOptions, inter-op thread pools."""

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
