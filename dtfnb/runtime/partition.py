"""prune() and partition(): from a (feeds, fetches, targets) signature to per-device graphs.

Both are pure functions over runtime Nodes. Fed tensors become `_Feed` nodes
(so the op that produced them does not run unless needed otherwise), fetched
ones end in `_Fetch` nodes, and every edge between devices becomes a `_Send` on
the producer's device and a `_Recv` on the consumer's, under the rendezvous key
"<src device>;<dst device>;<tensor>" ("node:index" of the graph, or "^node"), and
"...;<tensor>;<reader>" for a variable's ref read by a node on another device.

The nodes a step adds are named as TensorFlow names them, since step stats and
partition graphs show them. A local session (TensorFlow's DirectSession) feeds and
fetches through `_Arg` and `_Retval` nodes on the client's device, named
"_arg_<node>_<output>_<position>" with positions in the sorted feeds (fetches), and
names a transfer "<producer>/_<n>". A session on a cluster (TensorFlow's
MasterSession) receives feeds from the client and sends fetches back to it through
client-terminated transfers, "_recv_<node>_<output>" and "_send_<node>_<output>", and
names a transfer "<producer>_S<n>".
"""

import itertools

from dtfnb.base.errors import InvalidArgumentError, UnimplementedError
from dtfnb.runtime.frames import CONTROL_FLOW_OPS, ENTERS, EXITS, MERGES, NEXT_ITERATIONS
from dtfnb.runtime.nodes import Node, is_ref_type

# The ops that `partition` adds to a step's graph: none is an op of the client's graph.
_STEP_OPS = frozenset(("_Feed", "_Fetch", "_Send", "_Recv"))


def tensor_key(name, index):
    """The name of output `index` of node `name`, as feeds and fetches key it."""
    return f"{name}:{index}"


def _fed_placeholder(name, by_name, feeds):
    """Whether node `name` is a Placeholder whose value is fed: TensorFlow's feed rewrite
    moves its outgoing control edges to the feed, so that it does not run."""
    return by_name[name].op == "Placeholder" and tensor_key(name, 0) in feeds


def _controls(node, by_name, feeds):
    """The control inputs of `node` a run waits for: all but fed Placeholders."""
    return [c for c in node.control_inputs if not _fed_placeholder(c, by_name, feeds)]


def prune(by_name, feeds, fetches, targets):
    """Names of the nodes a run needs, in topological order.

    `feeds` is a set of tensor names; `fetches` a list of (node, index); `targets` node
    names. An edge from a fed tensor is cut, so its producer runs only if needed by
    another path; so is a control edge from a fed Placeholder. Raises
    InvalidArgumentError on a cycle.
    """
    needed, stack = set(), [name for name, _ in fetches] + list(targets)
    for name, index in fetches:
        if tensor_key(name, index) in feeds:
            stack.remove(name)
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        node = by_name[name]
        for src, index in node.inputs:
            if tensor_key(src, index) not in feeds:
                stack.append(src)
        stack.extend(_controls(node, by_name, feeds))
    return _topological(needed, by_name, feeds)


def _topological(needed, by_name, feeds):
    pending, consumers = {}, {}
    for name in needed:
        node = by_name[name]
        # A loop's back edge (NextIteration → Merge) closes the only cycle allowed.
        deps = {s for s, i in node.inputs if tensor_key(s, i) not in feeds
                and not (node.op in MERGES and by_name[s].op in NEXT_ITERATIONS)}
        deps.update(_controls(node, by_name, feeds))
        pending[name] = len(deps)
        for dep in deps:
            consumers.setdefault(dep, []).append(name)
    ready = sorted((n for n, count in pending.items() if count == 0), key=_order(by_name))
    order = []
    while ready:
        name = ready.pop()
        order.append(name)
        for consumer in consumers.get(name, ()):
            pending[consumer] -= 1
            if pending[consumer] == 0:
                ready.append(consumer)
    if len(order) != len(needed):
        stuck = sorted(n for n in needed if n not in order)
        raise InvalidArgumentError(None, None, f"Graph has a cycle: it involves node "
                                   f"'{stuck[0]}' (and {len(stuck) - 1} other nodes)")
    return order


def _order(by_name):
    index = {name: i for i, name in enumerate(by_name)}
    return lambda name: -index[name]


def partition(order, by_name, placement, feeds, fetches, client_device=None):
    """Splits the pruned nodes by device. Returns {device name: [Node, ...]}.

    `feeds` maps a fed tensor name to its dtype; `fetches` lists (node, index) and each
    `_Fetch` node carries its position in the attr `index`. `_Send` and `_Fetch` nodes
    name the node whose value they carry in `source_node`, so errors name that node.
    `client_device`: in a local session, the device its feeds and fetches run on; None
    in a session on a cluster, where they run on the device of the tensor and are
    `client_terminated` (step stats leave them out, as TensorFlow's transfers).
    """
    parts = {}
    if client_device is None:
        feed_name, fetch_name = _named("_recv_"), _named("_send_")
        transfer_name = "{}_S{}".format
        client_attrs = {"client_terminated": True}
    else:
        feed_name = _numbered("_arg_", feeds)
        fetch_name = _numbered("_retval_", (tensor_key(*f) for f in fetches))
        transfer_name = "{}/_{}".format
        client_attrs = {}
    feed_nodes, feed_by_name, transfers = {}, {}, {}
    pairs = itertools.count(0, 2)   # a transfer's _Send is named with n, its _Recv n + 1
    # With control flow a transfer may carry a dead value: its receiver must expect one.
    dead_ok = any(by_name[name].op in CONTROL_FLOW_OPS for name in order)
    if dead_ok:
        _check_frames(order, by_name, placement)
    transfer_attrs = {"dead_ok": True} if dead_ok else {}

    def add(device, node):
        parts.setdefault(device, []).append(node)

    def source(src, index, device, reader=None):
        """The (node, index) that delivers tensor src:index on `device` (to `reader`)."""
        key = tensor_key(src, index)
        if key in feeds:
            if key not in feed_nodes:
                # no ':' in the name: it must survive a NodeDef's "node:index" inputs
                feed = Node(feed_name(key), "_Feed", attrs={"tensor_name": key, **client_attrs},
                            output_types=[feeds[key]])
                feed_nodes[key] = feed_by_name[feed.name] = feed
                add(client_device or placement[src], feed)
            src, index = feed_nodes[key].name, 0
            src_device = client_device or placement[key.rpartition(":")[0]]
        else:
            src_device = placement[src]
        if src_device == device:
            return src, index
        if (reader is not None and reader.op not in CONTROL_FLOW_OPS
                and is_ref_type(_output_type(src, index))):
            return _read(src, index, src_device, device, key, reader)
        return _transfer(src, index, src_device, device, key)

    def _read(src, index, src_device, device, tensor, reader):
        """A variable's ref read on another device, as TensorFlow's partitioner makes it:
        a transfer of its own (never shared), sent once the reader's other inputs are
        ready, so it carries the value the reader would read then: a read_value() under
        an update's control dependency sees the update. (A control-flow op's ref input,
        such as cond's Switch of a variable, keeps the shared transfer: its frames carry
        dead values, and TensorFlow moves that Switch to the variable's device.)"""
        ready = [s for s, i in reader.inputs if (s, i) != (src, index)
                 and tensor_key(s, i) not in feeds] + list(reader.control_inputs)
        number = next(pairs)
        key = f"{src_device};{device};{tensor};{reader.name}"
        send = Node(transfer_name(src, number), "_Send", [(src, index)],
                    [control_source(c, src_device) for c in dict.fromkeys(ready)],
                    attrs={"key": key, "source_node": src, **transfer_attrs})
        recv = Node(transfer_name(src, number + 1), "_Recv", attrs={"key": key, **transfer_attrs},
                    output_types=[_output_type(src, index)])
        add(src_device, send)
        add(device, recv)
        return recv.name, 0

    def _transfer(src, index, src_device, device, tensor):
        link = (src, index, device)
        if link not in transfers:
            # keyed by the graph's tensor (the fed one, not its _Feed), as views name it
            key = f"{src_device};{device};{tensor}"
            dtype = _output_type(src, index)
            number = next(pairs)
            send = Node(transfer_name(src, number), "_Send", [(src, index)],
                        attrs={"key": key, "source_node": src, **transfer_attrs})
            recv = Node(transfer_name(src, number + 1), "_Recv",
                        attrs={"key": key, **transfer_attrs}, output_types=[dtype])
            add(src_device, send)
            add(device, recv)
            transfers[link] = recv.name
        return transfers[link], 0

    def _output_type(src, index):
        return (by_name.get(src) or feed_by_name[src]).output_types[index]

    def control_source(src, device):
        if placement[src] == device:
            return src
        link = (src, None, device)
        if link not in transfers:
            key = f"{placement[src]};{device};^{src}"
            number = next(pairs)
            add(placement[src], Node(transfer_name(src, number), "_Send",
                                     control_inputs=[src],
                                     attrs={"key": key, **transfer_attrs}))
            recv = Node(transfer_name(src, number + 1), "_Recv",
                        attrs={"key": key, **transfer_attrs})
            add(device, recv)
            transfers[link] = recv.name
        return transfers[link]

    for name in order:
        node = by_name[name]
        device = placement[name]
        controls = [source(c, 0, device)[0] if _fed_placeholder(c, by_name, feeds)
                    else control_source(c, device) for c in node.control_inputs]
        add(device, Node(name, node.op,
                         [source(s, i, device, node) for s, i in node.inputs],
                         controls, node.requested_device, node.attrs, node.output_types))
    for position, (name, index) in enumerate(fetches):
        device = client_device or placement[name]
        src, src_index = source(name, index, device)
        add(device, Node(fetch_name(tensor_key(name, index)), "_Fetch", [(src, src_index)],
                         attrs={"index": position, "source_node": name, **client_attrs}))
    return parts


def transfers(parts):
    """The tensors that cross devices in `parts` (from `partition`), one per _Send/_Recv
    pair, device by device: [(rendezvous key, the names of the graph's nodes that read
    it on the receiving device)]; none read one that only a fetch takes."""
    found = []
    for nodes in parts.values():
        readers = {}
        for node in nodes:
            if node.op not in _STEP_OPS:
                for src in [s for s, _ in node.inputs] + node.control_inputs:
                    readers.setdefault(src, []).append(node.name)
        found.extend((node.attrs["key"], readers.get(node.name, []))
                     for node in nodes if node.op == "_Recv")
    return found


def _named(prefix):
    """key -> "<prefix><node>_<output>" (TensorFlow's MasterSession's client transfers)."""
    return lambda key: prefix + key.replace(":", "_")


def _numbered(prefix, keys):
    """key -> "<prefix><node>_<output>_<position>", positions in the sorted distinct keys
    (the order TensorFlow's DirectSession gives its _Arg and _Retval nodes)."""
    position = {key: i for i, key in enumerate(sorted(set(keys)))}
    return lambda key: f"{prefix}{key.replace(':', '_')}_{position[key]}"


def _check_frames(order, by_name, placement):
    """Checks that each node's inputs come from one loop frame, and refuses a while loop
    whose frame spans devices. TensorFlow runs such a loop by adding a control loop to
    each partition that holds part of the frame; dtfnb does not (yet), so a loop's ops,
    and the variables its body updates, must share one device."""
    frame_of = {}  # node → the loop frames it runs in, outermost first
    for name in order:
        node = by_name[name]
        frame = first = None
        for src in [s for s, _ in node.inputs] + node.control_inputs:
            if node.op in MERGES and by_name[src].op in NEXT_ITERATIONS:
                continue
            src_frame = _output_frame(by_name[src], frame_of.get(src, ()))
            if frame is None:
                frame, first = src_frame, src
            elif src_frame != frame:
                raise InvalidArgumentError(
                    None, None, f"{{{{node {name}}}}} has inputs from different frames. The "
                    f"input {{{{node {src}}}}} is in frame '{_frame_name(src_frame)}'. The "
                    f"input {{{{node {first}}}}} is in frame '{_frame_name(frame)}'.")
        frame_of[name] = frame = frame or ()
        if not frame:
            continue
        for src in [s for s, _ in node.inputs] + node.control_inputs:
            if src in placement and placement[src] != placement[name]:
                raise UnimplementedError(
                    None, None, f"The while loop '{frame[-1]}' spans devices: its node "
                    f"'{name}' on {placement[name]} takes an input from '{src}' on "
                    f"{placement[src]}. dtfnb runs a loop within one device: place the "
                    f"loop's ops, and the variables its body updates, on one device.")


def _frame_name(frame):
    return frame[-1] if frame else ""


def _output_frame(node, frame):
    """The frames `node`'s outputs live in, when it runs in `frame`."""
    if node.op in ENTERS:
        return frame + (node.attrs["frame_name"],)
    if node.op in EXITS:
        return frame[:-1]
    return frame
