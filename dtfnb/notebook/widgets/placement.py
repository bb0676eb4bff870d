"""PlacementView: the graph of the last placed session, drawn by device."""

import collections

from dtfnb.client.session import BaseSession
from dtfnb.notebook.state import Placement
from dtfnb.notebook.widgets.base import EventWidget, colour, escape, plural

_COLUMN, _ROW, _RADIUS, _MARGIN = 90, 26, 7, 12
_LABELS_UP_TO = 80    # nodes; beyond, names only show on hover


class PlacementView(EventWidget):
    """The nodes of a session in one lane per device, coloured by the device the placer
    chose, from the task's PlacementEvents. Nodes of one name scope are boxed together;
    edges between devices (each a Send/Recv pair at run time) are drawn thick and red;
    emulated GPUs are marked.

    `source`: a tf.Session (its own placement), a LocalCluster, a tf.train.Server or a
    target; `session`: the session handle to follow (default: the latest placed).
    """

    kinds = ("placement",)

    def __init__(self, source, session=None):
        if session is None and isinstance(source, BaseSession):
            session = source._handle
        self.placement = Placement(session)
        super().__init__(source)

    def _apply(self, event):
        self.placement.apply(event)

    def _text(self):
        placement = self.placement
        if placement.session is None:
            return "PlacementView: no placement yet"
        devices = placement.devices()
        counts = collections.Counter(n.assigned_device for n in placement.nodes.values())
        lines = [f"PlacementView: {plural(len(placement.nodes), 'node')} on "
                 f"{plural(len(devices), 'device')}, "
                 f"{plural(len(placement.cross_device_edges()), 'edge')} across devices"]
        lines += [f"  {device}{_emulated(device, placement)}: {plural(counts[device], 'node')}"
                  for device in devices]
        return "\n".join(lines)

    def _draw(self):
        return svg(self.placement)


def _emulated(device, placement):
    return " (emulated)" if device in placement.emulated else ""


def _depths(placement):
    """Each node's column: the longest path to it from a node without placed inputs."""
    inputs = collections.defaultdict(list)
    for source, destination, _ in placement.edges():
        inputs[destination].append(source)
    depth = {}
    for name in placement.nodes:
        stack = [name]
        while stack:
            node = stack[-1]
            todo = [i for i in inputs[node] if i not in depth and i not in stack]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            depth[node] = 1 + max((depth.get(i, 0) for i in inputs[node]), default=-1)
    return depth


def svg(placement):
    """The placement as an SVG document (an empty note before the first run)."""
    if placement.session is None:
        return "<p><i>No placement yet: run a step.</i></p>"
    devices = placement.devices()
    depth = _depths(placement)
    position, lanes, top = {}, [], _MARGIN
    for index, device in enumerate(devices):
        cells = collections.defaultdict(list)
        for node in sorted(n for n in placement.nodes if
                           placement.nodes[n].assigned_device == device):
            cells[depth[node]].append(node)
        rows = max(len(column) for column in cells.values())
        for column, names in cells.items():
            for row, name in enumerate(names):
                position[name] = (_MARGIN + _COLUMN // 2 + column * _COLUMN,
                                  top + _ROW + row * _ROW)
        height = (rows + 1) * _ROW
        lanes.append((device, index, top, height))
        top += height + _MARGIN
    width = _MARGIN * 2 + (max(depth.values()) + 1) * _COLUMN
    parts = []
    for device, index, lane_top, height in lanes:
        parts.append(f'<rect x="2" y="{lane_top}" width="{width - 4}" height="{height}" '
                     f'fill="{colour(index)}" fill-opacity="0.08" stroke="{colour(index)}"/>'
                     f'<text x="8" y="{lane_top + 14}" font-size="11" fill="#333">'
                     f'{escape(device)}{escape(_emulated(device, placement))}</text>')
    parts += _scope_boxes(placement, position)
    for source, destination, control in placement.edges():
        (x1, y1), (x2, y2) = position[source], position[destination]
        if placement.nodes[source].assigned_device != placement.nodes[destination].assigned_device:
            style = 'stroke="#d62728" stroke-width="2.5"'
        elif control:
            style = 'stroke="#999" stroke-dasharray="3,3"'
        else:
            style = 'stroke="#777"'
        parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" {style} '
                     'marker-end="url(#arrow)"/>')
    labels = len(placement.nodes) <= _LABELS_UP_TO
    for name, (x, y) in position.items():
        node = placement.nodes[name]
        index = devices.index(node.assigned_device)
        dash = ' stroke-dasharray="2,2"' if node.assigned_device in placement.emulated else ""
        tip = f"{name} ({node.op}) on {node.assigned_device}"
        if node.requested_device:
            tip += f", asked for {node.requested_device}"
        parts.append(f'<circle cx="{x}" cy="{y}" r="{_RADIUS}" fill="{colour(index)}" '
                     f'stroke="#222"{dash}><title>{escape(tip)}</title></circle>')
        if labels:
            parts.append(f'<text x="{x}" y="{y + _RADIUS + 10}" font-size="9" '
                         f'text-anchor="middle">{escape(name.rsplit("/", 1)[-1][:14])}</text>')
    arrow = ('<defs><marker id="arrow" viewBox="0 0 10 10" refX="16" refY="5" '
             'markerWidth="6" markerHeight="6" orient="auto-start-reverse">'
             '<path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>')
    return (f'<div class="dtfnb-placement"><svg xmlns="http://www.w3.org/2000/svg" '
            f'width="{width}" height="{top}" font-family="sans-serif">{arrow}'
            f'{"".join(parts)}</svg>{_legend(placement, devices)}</div>')


def _scope_boxes(placement, position):
    """A dashed box around the nodes of each top-level name scope, per device."""
    groups = collections.defaultdict(list)
    for name, node in placement.nodes.items():
        if "/" in name:
            groups[(node.assigned_device, name.split("/")[0])].append(position[name])
    boxes = []
    for (_, scope), points in sorted(groups.items()):
        xs, ys = [x for x, _ in points], [y for _, y in points]
        x, y = min(xs) - _RADIUS - 4, min(ys) - _RADIUS - 4
        boxes.append(f'<rect x="{x}" y="{y}" width="{max(xs) - x + _RADIUS + 4}" '
                     f'height="{max(ys) - y + _RADIUS + 14}" rx="6" fill="none" '
                     f'stroke="#888" stroke-dasharray="4,3"><title>{escape(scope)}</title>'
                     '</rect>')
    return boxes


def _legend(placement, devices):
    counts = collections.Counter(n.assigned_device for n in placement.nodes.values())
    items = "".join(
        f'<li><span style="display:inline-block;width:10px;height:10px;'
        f'background:{colour(i)};margin-right:4px"></span>{escape(device)}'
        f'{escape(_emulated(device, placement))}: {counts[device]}</li>'
        for i, device in enumerate(devices))
    cut = len(placement.cross_device_edges())
    return (f'<ul style="list-style:none;padding-left:4px;font-size:12px">{items}'
            f'<li><span style="color:#d62728">&#9473;</span> {cut} edges across devices '
            '(Send/Recv)</li></ul>')
