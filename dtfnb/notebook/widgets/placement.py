"""PlacementView: what one step ran, on which device, and what crossed devices.

Displayed, it is one cell output of three forms: the placement as data for the
labextension's renderer (`application/vnd.dtfnb.placement+json`, the protocol's
IRunPlacement: the one graph renderer), a device-level SVG for viewers without it, and
deterministic text for nbval. It is updated in place, through its display id, as steps run.
"""

import collections

from dtfnb.client.session import BaseSession
from dtfnb.distributed_runtime.server_lib import Server
from dtfnb.launch import Cluster
from dtfnb.notebook.state import Runs, Stops
from dtfnb.notebook.widgets.base import EventWidget, escape, human_bytes, plural

MIME = "application/vnd.dtfnb.placement+json"
_FOLLOW = ("session", "latest")
_PAIRS_SHOWN = 30            # cross-device pairs in the text form
_BOX_WIDTH, _LINE, _GAP, _SCOPES_SHOWN = 210, 16, 18, 8
_ARC_SPACE, _ARC_STEP = 130, 40   # room beside the boxes for an arc and its label


class PlacementView(EventWidget):
    """The ops one step executed (its pruned plan), coloured by the device each ran on,
    with the tensors that crossed devices and the bytes each moved in that step, from
    the master task's PlanEvents and StepEvents.

    `source`: a tf.Session (its own runs), a LocalCluster, a tf.train.Server or a target.
    `session`: the handle of the session to show (default: a tf.Session source's own, or
    the session of the first run seen); `follow="latest"`: the newest run of any session
    instead (replica threads then take turns); `step`: that step only, kept once shown.
    """

    kinds = ("plan", "step", "health")

    def __init__(self, source, session=None, follow="session", step=None):
        if follow not in _FOLLOW:
            raise ValueError(f"follow must be one of {_FOLLOW}, got {follow!r}")
        if session is None and isinstance(source, BaseSession):
            session = source._handle
        self.runs = Runs(Stops())
        self._session, self._follow, self._step = session, follow, step
        self._pinned = None     # the run of `step`, once seen
        self._target = None     # where every task of the source is, for a single task
        if isinstance(source, BaseSession):
            self.runs.targets[source._handle] = source.sess_str or "in-process"
        elif isinstance(source, Cluster):
            self.runs.addresses.update({task.name: source.target(task.job, task.index)
                                        for task in source.tasks})
        elif isinstance(source, (Server, str)):
            self._target = source.target if isinstance(source, Server) else source
        self._handles = []      # the display handles of where it is shown
        self._bundle = None
        super().__init__(source)

    def _make_view(self):
        return None   # shown as a mimebundle through display ids, not as a widget

    def _apply(self, event):
        self.runs.stops.apply(event)
        self.runs.apply(event)
        if self._target is not None and event.task:
            self.runs.addresses.setdefault(event.task, self._target)

    def run(self):
        """The run shown (a state.Run), or None before one."""
        if self._pinned is not None:
            return self._pinned
        if self._step is not None:
            sessions = [self._session] if self._session else list(self.runs.sessions)
            found = [self.runs.find(s, self._step) for s in sessions]
            self._pinned = next((run for run in found if run is not None), None)
            return self._pinned
        if self._follow == "latest":
            return self.runs.latest()
        if self._session is None:   # the session of the first run seen, from then on
            first = self.runs.latest()
            self._session = first.session if first is not None else None
        return self.runs.latest(self._session) if self._session else None

    def placement(self):
        """The protocol's IRunPlacement of the run shown, or None."""
        with self._lock:
            return self._placement()

    def _placement(self):
        run = self.run()
        return None if run is None else self.runs.run_placement(run)

    def _what(self):
        if self._step is not None:
            return f"step {self._step}"
        return "the latest step" if self._follow == "latest" else "the last step of its session"

    def _draw(self):
        placement = self._placement()
        return {MIME: placement, "image/svg+xml": summary_svg(placement),
                "text/plain": placement_text(placement, self._what())}

    def _text(self):
        return placement_text(self._placement(), self._what())

    def _redraw(self):
        with self._lock:
            bundle = self._draw()
        if bundle == self._bundle:
            return
        self._bundle = bundle
        for handle in self._handles:
            handle.update(_shown(bundle), raw=True)

    def _repr_mimebundle_(self, include=None, exclude=None):
        self._feed.settle()   # the step that just ended, not the one before
        with self._lock:
            return _shown(self._draw())

    def _ipython_display_(self):
        from IPython.display import display

        self._feed.settle()
        with self._lock:
            bundle = self._draw()
        self._handles.append(display(_shown(bundle), raw=True, display_id=True))

    def _html(self):
        return self._repr_mimebundle_()["image/svg+xml"]


def _shown(bundle):
    """The bundle as displayed: no placement data before a run (the text says so)."""
    return {mime: data for mime, data in bundle.items() if data is not None}


def _scope(name):
    return name.split("/", 1)[0]


def placement_text(placement, what):
    """The text form: how many ops ran on how many devices, one line per device, one per
    tensor that crossed devices (to its consumers, or "fetched" by the client); no
    address, time or byte count."""
    if placement is None:
        return "PlacementView: no step has run yet"
    nodes, transfers = placement["nodes"], placement["transfers"]
    devices = placement["devices"]
    run = placement["run"]
    failed = f" failed ({run['error'].split(':', 1)[0]}); it" if run["error"] else ""
    lines = [f"PlacementView: {what}{failed} ran {plural(len(nodes), 'op')} on "
             f"{plural(len(devices), 'device')}; {plural(len(transfers), 'tensor')} crossed "
             "devices"]
    counts = collections.Counter(node["device"] for node in nodes)
    for device in devices:
        notes = [note for note, on in (("emulated", device["emulated"]),
                                       ("stopped", device["stopped_at"])) if on]
        lines.append(f"  {device['short']}{' (' + ', '.join(notes) + ')' if notes else ''}: "
                     f"{plural(counts[device['name']], 'op')}")
    short = {device["name"]: device["short"] for device in devices}
    for transfer in transfers[:_PAIRS_SHOWN]:
        lines.append(f"  {transfer['tensor']} ({short.get(transfer['src'], transfer['src'])})"
                     f" -> {', '.join(transfer['consumers']) or 'fetched'} "
                     f"({short.get(transfer['dst'], transfer['dst'])})")
    if len(transfers) > _PAIRS_SHOWN:
        lines.append(f"  ... and {len(transfers) - _PAIRS_SHOWN} more")
    return "\n".join(lines)


def summary_svg(placement):
    """A device-level picture of a placement, for viewers without the labextension: the
    devices one under another, each a box in its colour (emulated GPUs hatched, stopped
    ones grey) listing its top-level scopes with their op counts; the transfers of each
    pair of devices one arc beside them (downwards on the right, upwards on the left, so
    none crosses a box), labelled with the tensors and the bytes that step moved."""
    if placement is None:
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="240" height="24" '
                'font-family="sans-serif"><text x="4" y="16" font-size="12">No step has run '
                'yet.</text></svg>')
    devices = placement["devices"]
    row = {device["name"]: index for index, device in enumerate(devices)}
    scopes = {device["name"]: collections.Counter() for device in devices}
    for node in placement["nodes"]:
        scopes[node["device"]][_scope(node["name"])] += 1
    listed = {name: counter.most_common()[:_SCOPES_SHOWN] for name, counter in scopes.items()}
    pairs = collections.defaultdict(list)   # (src, dst) -> bytes of each transfer
    for transfer in placement["transfers"]:
        if transfer["src"] in row and transfer["dst"] in row:
            pairs[(transfer["src"], transfer["dst"])].append(transfer["bytes"])
    span = max((abs(row[d] - row[s]) for s, d in pairs), default=0)
    margin = _ARC_SPACE + span * _ARC_STEP   # room for the widest arc and its label
    heights = [26 + min(len(scopes[d["name"]]), _SCOPES_SHOWN + 1) * _LINE + 6
               for d in devices]
    boxes, top = {}, 34
    for device, height in zip(devices, heights):
        boxes[device["name"]] = (margin, top, _BOX_WIDTH, height)
        top += height + _GAP
    parts = [_arc(boxes[src], boxes[dst], abs(row[dst] - row[src]), sizes)
             for (src, dst), sizes in sorted(pairs.items())]
    parts += [_device_box(device, boxes[device["name"]], listed[device["name"]],
                          len(scopes[device["name"]])) for device in devices]
    run = placement["run"]
    title = " · ".join(part for part in (
        f"run {run['number']}" if run["number"] else "planned",
        f"cell [{run['cell']}]" if run["cell"] is not None else "",
        run["target"], "failed" if run["error"] else "") if part)
    hatch = ('<defs><pattern id="dtfnb-hatch" width="6" height="6" patternUnits="userSpaceOnUse"'
             ' patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#fff" '
             'stroke-width="2" stroke-opacity="0.7"/></pattern><marker id="dtfnb-arrow" '
             'viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto"><path d="M 0 0 L 10 5 L 0 10 z" fill="#444"/></marker></defs>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * margin + _BOX_WIDTH}" '
            f'height="{top - _GAP + 10}" font-family="sans-serif" font-size="12">{hatch}'
            f'<text x="10" y="18" font-size="13">{escape(title)}</text>{"".join(parts)}</svg>')


def _arc(src, dst, rows, sizes):
    """The arc from box `src` to box `dst`, `rows` devices apart: on the right side going
    down, on the left going up, as far out as the rows it spans; its label at its tip."""
    down = dst[1] > src[1]
    x = src[0] + src[2] if down else src[0]
    out = (_ARC_SPACE // 2 + (rows - 1) * _ARC_STEP) * (1 if down else -1)
    # Leave and enter each box a little off its middle, so that a pair's two arcs part.
    y1 = src[1] + src[3] / 2 + (6 if down else -6)
    y2 = dst[1] + dst[3] / 2 + (-6 if down else 6)
    tip_x, tip_y = x + out * 0.75, (y1 + y2) / 2
    known = [size for size in sizes if size is not None]
    label = plural(len(sizes), "tensor") + (f", {human_bytes(sum(known))}" if known else "")
    anchor = "start" if down else "end"
    return (f'<path d="M {x} {y1:.1f} C {x + out} {y1:.1f}, {x + out} {y2:.1f}, {x} {y2:.1f}" '
            'fill="none" stroke="#444" stroke-width="1.5" marker-end="url(#dtfnb-arrow)"/>'
            f'<text x="{tip_x + (4 if down else -4):.1f}" y="{tip_y + 4:.1f}" '
            f'text-anchor="{anchor}" font-size="11" fill="#222">{escape(label)}</text>')


def _device_box(device, box, listed, scope_count):
    x, y, width, height = box
    colour = "#bbbbbb" if device["stopped_at"] else device["colour"]
    header = device["short"] + (f" · stopped at {device['stopped_at']}"
                                if device["stopped_at"] else "")
    parts = [f'<rect x="{x}" y="{y}" width="{width}" height="{height}" rx="5" fill="{colour}" '
             f'fill-opacity="0.25" stroke="{colour}" stroke-width="2"><title>'
             f'{escape(device["name"])}</title></rect>']
    if device["emulated"]:
        parts.append(f'<rect x="{x}" y="{y}" width="{width}" height="{height}" rx="5" '
                     'fill="url(#dtfnb-hatch)"/>')
        header += " · emulated"
    parts.append(f'<text x="{x + 8}" y="{y + 17}" font-weight="bold">{escape(header)}</text>')
    lines = [(scope, plural(n, "op")) for scope, n in listed]
    if scope_count > len(listed):
        lines.append((f"... {scope_count - len(listed)} more scopes", ""))
    for i, (scope, count) in enumerate(lines):
        baseline = y + 26 + (i + 1) * _LINE - 4
        parts.append(f'<text x="{x + 10}" y="{baseline}">{escape(scope[:24])}</text>'
                     f'<text x="{x + width - 8}" y="{baseline}" text-anchor="end">{count}</text>')
    return "".join(parts)


