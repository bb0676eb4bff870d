"""place(): TensorFlow's simple placer as a pure function.

Rules: nodes placed earlier keep their device; a colocation group (ref, resource and
variant edges, then explicit `_class: loc:@x` attrs; see _Colocation) is placed as one,
on the first device that matches its (partial) request and has kernels for all its
members, in TensorFlow's order: GPU before CPU, then the master's task, then by name; a lone
generator (a Const, …) is placed last, with its consumers when they share a device. An
impossible pin fails with InvalidArgumentError, or with soft placement falls back
to a supported device of the same task.
"""

from dtfnb.base import dtypes
from dtfnb.base.device_spec import DeviceSpec
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.kernels import registry as kernel_registry

_TYPE_PREFERENCE = {"GPU": 0, "CPU": 1}


_NOUNS = {"job": "jobs", "replica": "replicas", "task": "tasks", "device_type": "types",
          "device_index": "ids"}


def _parse_request(node):
    try:
        return DeviceSpec.from_string(node.requested_device)
    except ValueError:
        raise InvalidArgumentError(None, None, f"Malformed device specification "
                                   f"'{node.requested_device}' in node: {node.name}") from None


def _compatible(a, b):
    return all(getattr(a, f) is None or getattr(b, f) is None or getattr(a, f) == getattr(b, f)
               for f in DeviceSpec.__slots__)


def _merge_devices(target, other, allow_soft_placement):
    """TensorFlow's MergeDevNames: the fields of both; a job, replica or task that differs
    fails, and so do a device type or index, unless soft placement drops them."""
    merged = target.copy()
    for field in DeviceSpec.__slots__:
        mine, theirs = getattr(merged, field), getattr(other, field)
        if theirs is None or mine == theirs:
            continue
        if mine is None:
            setattr(merged, field, theirs)
        elif field in ("device_type", "device_index") and allow_soft_placement:
            merged.device_index = None
            if field == "device_type":
                merged.device_type = None
                return merged
        else:
            raise ValueError(f"Cannot merge devices with incompatible {_NOUNS[field]}: "
                             f"'{target.to_string()}' and '{other.to_string()}'")
    return merged


def _uses_resource(source, index, consumer=None):
    """Whether an edge carries a ref its consumer uses in place (as Assign does), or a
    resource. (A variant, a tf.data dataset, is a Python object: it never leaves its
    device either.)"""
    if index >= len(source.output_types):
        return False
    dtype = dtypes.as_dtype(source.output_types[index])
    if dtype.is_ref_dtype:
        return consumer is None or kernel_registry.takes_refs(consumer.op)
    return dtype.base_dtype in (dtypes.resource, dtypes.variant)


def _is_resource_generator(node):
    """A node that makes a ref or a resource (a variable, a queue): its requested device is
    where the resource lives, which its users cannot override."""
    return not node.inputs and len(node.output_types) == 1 and _uses_resource(node, 0)


class _Colocation:
    """TensorFlow's colocation graph: groups of nodes placed together, each with the device
    its members request (merged) and the device of the resources it holds.

    First every edge that carries a ref or a resource joins its consumer's group to its
    source's; where the two requests conflict, the consumer's group takes the source's (an
    enqueue built under /job:worker runs on the queue's /job:ps). Then `_class: loc:@x`
    attrs join the nodes of each class; there a conflict fails, or with soft placement the
    node stays apart.
    """

    def __init__(self, nodes, allow_soft_placement):
        self._soft = allow_soft_placement
        self._parent, self._rank = {}, {}
        self._request = {n.name: _parse_request(n) for n in nodes}
        self._resource = {n.name: self._request[n.name] for n in nodes
                          if _is_resource_generator(n) and n.requested_device}
        self._pinned_by = {n.name: n for n in nodes if n.requested_device}
        by_name = {n.name: n for n in nodes}
        for node in nodes:
            for src, index in node.inputs:
                if _uses_resource(by_name[src], index, node):
                    self._join_across_resource_edge(src, node.name)
        roots = {}
        for node in nodes:
            for entry in node.attrs.get("_class", ()):
                if entry.startswith("loc:@"):
                    self._join_class(roots, entry[5:], node.name)
            self._join_class(roots, node.name, node.name)
        self.groups = {}
        for node in nodes:
            self.groups.setdefault(self.find(node.name), []).append(node)

    def find(self, name):
        root = name
        while self._parent.get(root, root) != root:
            root = self._parent[root]
        self._parent[name] = root
        return root

    def request(self, root):
        """The merged request of a group, and the node whose request it is."""
        return self._request[root], self._pinned_by.get(root)

    def _join_across_resource_edge(self, src, dst):
        source, target = self.find(src), self.find(dst)
        if source == target:
            return
        resource, own = self._resource.get(source), self._resource.get(target)
        if resource and own and not _compatible(resource, own):
            raise InvalidArgumentError(
                None, None, "Cannot place the graph because a reference or resource edge "
                "connects colocation groups with incompatible resource devices: "
                f"{resource.to_string()} vs {own.to_string()}. The edge src node is {src} , "
                f"and the dst node is {dst}")
        if not _compatible(self._request[source], self._request[target]):
            self._request[target] = self._request[source]  # the resource's device wins
            self._pinned_by[target] = self._pinned_by.get(source)
        try:
            self._join(source, target)
        except ValueError as err:
            raise InvalidArgumentError(
                None, None, "Nodes were connected by a reference connection (requiring them "
                "to be on the same device), but the two nodes were assigned two different "
                f"devices: Cannot colocate nodes {{{{colocation_node {src}}}}} and "
                f"{{{{colocation_node {dst}}}}}: {err}") from None

    def _join_class(self, roots, group, name):
        first = roots.setdefault(group, name)
        try:
            self._join(self.find(name), self.find(first))
        except ValueError as err:
            if not self._soft:
                raise InvalidArgumentError(
                    None, None, f"Cannot colocate nodes {{{{colocation_node {name}}}}} and "
                    f"{{{{colocation_node {first}}}}}: {err}") from None

    def _join(self, x, y):
        """Joins two groups by their roots, the deeper one staying root as in TensorFlow
        (whose request comes first in a message); ValueError where the requests conflict."""
        if x == y:
            return
        if self._rank.get(x, 0) < self._rank.get(y, 0):
            x, y = y, x
        elif self._rank.get(x, 0) == self._rank.get(y, 0):
            self._rank[x] = self._rank.get(x, 0) + 1
        self._request[x] = _merge_devices(self._request[x], self._request[y], self._soft)
        if x not in self._resource and y in self._resource:
            self._resource[x] = self._resource[y]
        if self._pinned_by.get(x) is None:
            self._pinned_by[x] = self._pinned_by.get(y)
        self._parent[y] = x


def _matches(device_spec, wanted):
    return all(getattr(wanted, f) is None or getattr(wanted, f) == getattr(device_spec, f)
               for f in DeviceSpec.__slots__)


def _best(candidates, master_task):
    """TensorFlow's order: the preferred device type, then the master's own task, then
    the device name (so "/job:ps" is ps task 0, "/job:worker" the master's if a worker)."""
    return min(candidates, key=lambda d: (_TYPE_PREFERENCE.get(d.device_type, 2),
                                          not _matches(d.spec, master_task), d.name))


def _supports(group, device, has_kernel):
    return all(has_kernel(n.op, device.device_type, n.attrs) for n in group)


def _no_device_message(node, wanted, devices):
    names = ", ".join(sorted(d.name for d in devices))
    requested = DeviceSpec.from_string(node.requested_device).to_string()
    message = (f"Cannot assign a device for operation {node.name}: {{{{node {node.name}}}}} "
               f"was explicitly assigned to {requested} but available devices are [ {names} ]."
               " Make sure the device specification refers to a valid device.")
    if wanted.device_type == "GPU" and not any(d.device_type == "GPU" for d in devices):
        message += " The requested device appears to be a GPU, but CUDA is not enabled."
    return message


def place(nodes, devices, default_task, placement, allow_soft_placement=False,
          has_kernel=kernel_registry.has_kernel):
    """Places every node of `nodes` not yet in `placement` (name → device name).

    `devices` have `.name`, `.spec`, `.device_type` and `.index`; `default_task` is the
    master's task as a DeviceSpec; `has_kernel(op, device_type, attrs)` asks the kernel
    table. Updates and returns `placement`.
    """
    colocation = _Colocation(nodes, allow_soft_placement)
    groups = list(colocation.groups.values())
    # TensorFlow places "generators" (a lone node with no inputs and one non-ref output,
    # e.g. a Const) last, next to their consumers when those agree on a device. So an
    # error names the variable `i`, not `i/initial_value`.
    generators = [g for g in groups if len(g) == 1 and _is_generator(g[0])]
    consumers = _consumers(nodes) if generators else {}
    generator_ids = {id(g) for g in generators}
    for group in [g for g in groups if id(g) not in generator_ids] + generators:
        if all(n.name in placement for n in group):
            continue
        placed = [placement[n.name] for n in group if n.name in placement]
        if placed:
            for node in group:
                placement.setdefault(node.name, placed[0])
            continue
        request, pinned_by = colocation.request(colocation.find(group[0].name))
        wanted = request
        candidates = [d for d in devices if _matches(d.spec, wanted)]
        supported = [d for d in candidates if _supports(group, d, has_kernel)]
        if not supported:
            relaxed = DeviceSpec(wanted.job, wanted.replica, wanted.task)
            if not allow_soft_placement or not any(_matches(d.spec, relaxed) for d in devices):
                raise InvalidArgumentError(None, None, _placement_error(
                    group, pinned_by, wanted, candidates, devices, has_kernel))
            supported = [d for d in devices if _matches(d.spec, relaxed)
                         and _supports(group, d, has_kernel)]
            if not supported:
                raise InvalidArgumentError(None, None, _placement_error(
                    group, pinned_by, relaxed, [], devices, has_kernel))
        device = _best(supported, default_task)
        if id(group) in generator_ids:
            device = _with_consumers(group[0], consumers, placement, supported) or device
        for node in group:
            placement[node.name] = device.name
    return placement


def _is_generator(node):
    return (not node.inputs and len(node.output_types) == 1
            and not dtypes.as_dtype(node.output_types[0]).is_ref_dtype)


def _consumers(nodes):
    result = {}
    for node in nodes:
        for src in {s for s, _ in node.inputs} | set(node.control_inputs):
            result.setdefault(src, []).append(node.name)
    return result


def _with_consumers(node, consumers, placement, supported):
    """The device all of `node`'s consumers are on, if it is one of `supported`."""
    devices = {placement.get(name) for name in consumers.get(node.name, ())}
    if len(devices) == 1:
        (name,) = devices
        return next((d for d in supported if d.name == name), None)
    return None


def _placement_error(group, pinned_by, wanted, candidates, devices, has_kernel):
    node = pinned_by or group[0]
    if not candidates and pinned_by is not None:
        return _no_device_message(node, wanted, devices)
    for member in group:
        types = [t for t in ("CPU", "GPU") if has_kernel(member.op, t, member.attrs)]
        if not types:
            return (f"No OpKernel was registered to support Op '{member.op}' used by "
                    f"{{{{node {member.name}}}}}")
    kind = wanted.device_type or "any"
    requested = DeviceSpec.from_string(node.requested_device).to_string() or wanted.to_string()
    return (f"Cannot assign a device for operation {node.name}: Could not satisfy explicit "
            f"device specification '{requested}' because no supported kernel for {kind} "
            f"devices is available.")
