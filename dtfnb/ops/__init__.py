"""Op families: for each op its definition (shape function, statefulness), builder and gradient.

Below every family sit the helpers they share, which import no family: `building` (the
graph, name scope and operands of an op being built) and `shape_util` (static shapes for
shape functions). The core families are ordered array_ops < joining_ops < unary_ops <
math_ops < slicing_ops: each imports the ones before it, and every other family imports
what it uses at module level. An op goes in the lowest family whose ops its builder
needs.

No family imports another inside a function, with one exception: a gradient body may
import a higher family (the gradient of Fill, an array op, is a Sum from math_ops).
Gradients are built by tf.gradients once every family has loaded, so this adds no cycle
at import time. tests/test_architecture.py holds the rule.
"""
