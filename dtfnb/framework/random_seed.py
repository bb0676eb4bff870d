"""The seeds of random ops: TensorFlow 1's graph-level plus op-level seed rules."""

import weakref

from dtfnb.framework.graph import get_default_graph

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
_op_seeds_given = weakref.WeakKeyDictionary()   # graph: op seeds it made up so far


def _truncate_seed(seed):
    return seed % _MAXINT32  # seeds travel as int32-range attrs, as in TensorFlow


def get_seed(op_seed):
    """Returns the (graph seed, op seed) pair a random op stores as its seed and seed2 attrs.

    - graph seed set, op seed set: both, so the op repeats its sequence in every session;
    - graph seed set, op seed None: the op seed counts such ops in the graph (0, 1,
      ...), so the ops of one graph differ from each other but a rebuilt graph repeats
      them (TensorFlow 2's rule; TensorFlow 1 took the graph's op count);
    - graph seed None, op seed set: the default graph seed with the op seed;
    - neither: (None, None), a nondeterministic op.
    """
    graph = get_default_graph()
    global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = _op_seeds_given.get(graph, 0)
            _op_seeds_given[graph] = op_seed + 1
        seeds = _truncate_seed(global_seed), _truncate_seed(op_seed)
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, _truncate_seed(op_seed)
    else:
        seeds = None, None
    # (0, 0) means "nondeterministic" to the kernels, so avoid it for explicit seeds.
    if seeds == (0, 0):
        return 0, _MAXINT32
    return seeds


def seed_attrs(seed):
    """The `seed`/`seed2` attrs for an op created now with op-level `seed`."""
    seed1, seed2 = get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}
