"""place(): TensorFlow's simple placer as a pure function.

Rules: nodes placed earlier keep their device; a colocation group (explicit
`_class: loc:@x` attrs, plus ref, resource and variant edges) is placed as one; a pinned
group goes where pinned, filling unspecified fields from the master's task; an
unpinned group goes to GPU:0 when every member has a GPU kernel, else CPU:0; a lone
generator (a Const, …) is placed last, with its consumers when they share a device. An
impossible pin fails with InvalidArgumentError, or with soft placement falls back
to a supported device of the same task.
"""

from dtfnb.base import dtypes
from dtfnb.base.device_spec import DeviceSpec
from dtfnb.base.errors import InvalidArgumentError
from dtfnb.kernels import registry as kernel_registry
from dtfnb.runtime.frames import VALUE_ONLY_OPS

_TYPE_PREFERENCE = {"GPU": 0, "CPU": 1}


class _UnionFind:
    def __init__(self):
        self.parent = {}

    def find(self, x):
        root = x
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        self.parent[x] = root
        return root

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _parse_request(node):
    try:
        return DeviceSpec.from_string(node.requested_device)
    except ValueError:
        raise InvalidArgumentError(None, None, f"Malformed device specification "
                                   f"'{node.requested_device}' in node: {node.name}") from None


def _colocation_groups(nodes, by_name):
    groups = _UnionFind()
    for node in nodes:
        for entry in node.attrs.get("_class", ()):
            if entry.startswith("loc:@") and entry[5:] in by_name:
                groups.union(entry[5:], node.name)
        for src, index in [] if node.op in VALUE_ONLY_OPS else node.inputs:
            source = by_name[src]
            if index < len(source.output_types):
                dtype = dtypes.as_dtype(source.output_types[index])
                # a variant (a tf.data dataset) is a Python object: it never leaves its device
                if dtype.is_ref_dtype or dtype.base_dtype in (dtypes.resource, dtypes.variant):
                    groups.union(src, node.name)
    members = {}
    for node in nodes:
        members.setdefault(groups.find(node.name), []).append(node)
    return list(members.values())


def _merge_requests(group):
    merged, pinned_by = DeviceSpec(), None
    for node in group:
        request = _parse_request(node)
        for field in DeviceSpec.__slots__:
            value, current = getattr(request, field), getattr(merged, field)
            if value is not None and current is not None and value != current:
                raise InvalidArgumentError(
                    None, None, f"Cannot colocate nodes {{{{node {pinned_by.name}}}}} and "
                    f"{{{{node {node.name}}}}}: Cannot merge devices with incompatible "
                    f"{field}s: '{pinned_by.requested_device}' and '{node.requested_device}'")
            if value is not None:
                setattr(merged, field, value)
        if node.requested_device and pinned_by is None:
            pinned_by = node
    return merged, pinned_by


def _resolve(request, default):
    """Fills a partial request from the master's task, as the chapter describes."""
    job = request.job if request.job is not None else default.job
    if request.task is not None:
        task = request.task
    else:
        task = default.task if job == default.job else 0
    replica = request.replica if request.replica is not None else 0
    return DeviceSpec(job, replica, task, request.device_type, request.device_index)


def _matches(device_spec, wanted):
    return all(getattr(wanted, f) is None or getattr(wanted, f) == getattr(device_spec, f)
               for f in DeviceSpec.__slots__)


def _best(candidates):
    return min(candidates, key=lambda d: (_TYPE_PREFERENCE.get(d.device_type, 2), d.index))


def _supports(group, device, has_kernel):
    return all(has_kernel(n.op, device.device_type, n.attrs) for n in group)


def _no_device_message(node, wanted, devices):
    names = ", ".join(d.name for d in devices)
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
    by_name = {n.name: n for n in nodes}
    groups = _colocation_groups(nodes, by_name)
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
        request, pinned_by = _merge_requests(group)
        wanted = _resolve(request, default_task)
        candidates = [d for d in devices if _matches(d.spec, wanted)]
        supported = [d for d in candidates if _supports(group, d, has_kernel)]
        if not supported:
            if not allow_soft_placement or (candidates == [] and not any(
                    d.spec.job == wanted.job for d in devices)):
                raise InvalidArgumentError(None, None, _placement_error(
                    group, pinned_by, wanted, candidates, devices, has_kernel))
            relaxed = DeviceSpec(wanted.job, wanted.replica, wanted.task)
            supported = [d for d in devices if _matches(d.spec, relaxed)
                         and _supports(group, d, has_kernel)]
            if not supported:
                raise InvalidArgumentError(None, None, _placement_error(
                    group, pinned_by, relaxed, [], devices, has_kernel))
        device = _best(supported)
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
