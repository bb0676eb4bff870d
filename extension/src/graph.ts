import { launchIcon } from '@jupyterlab/ui-components';
import { ISignal, Signal } from '@lumino/signaling';

import { element, text } from './dom';
import { formatBytes, plural } from './format';
import { EDGE_LABEL_HEIGHT, fitLabel, ILayout, layout, LABEL_PX, TITLE_HEIGHT } from './layout';
import { IDevice, IRun, IRunPlacement, ITransfer } from './protocol';
import { IScope, IShown, Item, opOf, scopeId, scopeName, scopeTree, shown } from './scopes';

const SVG = 'http://www.w3.org/2000/svg';
const ZOOM_STEP = 1.25;
const MIN_SCALE = 0.1;
const MAX_SCALE = 4;
/** A device the kernel sent no colour for (it should not happen): grey. */
const UNKNOWN: IDevice = { name: '', short: '?', colour: '#9e9e9e', emulated: false, stopped_at: null };

/** The event (bubbling, its detail the graph) of a graph's "open in a tab" button: index.ts opens the tab. */
export const OPEN_IN_TAB = 'dtfnb-open-in-tab';

let instances = 0;

/** A zoom and pan: screen = graph * scale + (x, y); `height`: the graph's on screen. */
interface IView {
  scale: number;
  x: number;
  y: number;
  height: number;
}

/** Where a clicked item was on screen (`x`, `y`), to find its box again after the relayout. */
interface IAnchor {
  ids: string[]; // the item's id, or (a group opened) the ids of what it became
  x: number;
  y: number;
}

/**
 * One run's placement drawn as a graph: a header (step, cell, target, failed,
 * stopped), a legend of devices, the graph of the executed ops in their name
 * scopes (layout.ts) coloured by device, and the list of cross-device
 * transfers. The side panel and the placement cell output both draw with it.
 *
 * What the user did to the view (opened or folded scopes, zoom and pan)
 * survives new data: `update` redraws the same view of the new run.
 */
export class PlacementGraph {
  /** The root element; `data-render-ms` on it is how long the last drawing took. */
  readonly node = element('div', 'dtfnb-placement');

  /**
   * `minLabelPx`: the smallest a label is drawn when the graph is fitted to the
   * width (the rest is panned to); `maxHeight`: how tall the drawing grows, null
   * to fill its container (a main-area tab); `openable`: with a button that
   * opens the same graph in a main-area tab (OPEN_IN_TAB).
   */
  constructor(options: { minLabelPx: number; maxHeight: number | null; openable: boolean }) {
    this._minScale = options.minLabelPx / LABEL_PX;
    this._maxHeight = options.maxHeight;
    this._id = `dtfnb-graph-${++instances}`;
    this._viewport.appendChild(this._svg);
    this.node.append(this._header, this._legend, this._toolbar(options.openable), this._viewport, this._transfers);
    this.node.classList.toggle('dtfnb-mod-fill', options.maxHeight === null);
    this._panAndZoom();
    new ResizeObserver(() => this._place()).observe(this._viewport);
  }

  /** The placement drawn last, null before the first. */
  get placement(): IRunPlacement | null {
    return this._placement;
  }

  /** A new placement to draw: what a tab opened from this graph follows. */
  get updated(): ISignal<this, IRunPlacement> {
    return this._updated;
  }

  /** Draws `placement` (nothing when it is the one drawn); resolves once it is on screen. */
  async update(placement: IRunPlacement): Promise<void> {
    const json = JSON.stringify(placement);
    if (json === this._json) {
      return this._drawn;
    }
    this._json = json;
    const started = performance.now();
    if (placement.nodes !== this._placement?.nodes) {
      this._tree = scopeTree(placement.nodes);
    }
    this._placement = placement;
    this._devices = new Map(placement.devices.map(device => [device.name, device]));
    this._header.replaceChildren(...header(placement));
    this._legend.replaceChildren(...legend(placement, this._devices));
    this._transfers.replaceChildren(...transferList(placement, this._devices, this._listOpen));
    this._drawn = this._draw(started);
    this._updated.emit(placement);
    return this._drawn;
  }

  private async _draw(started = performance.now()): Promise<void> {
    const placement = this._placement!;
    const draw = ++this._draws;
    const view = shown(this._tree!, placement.transfers, this._open);
    const placed = await layout(view);
    if (draw !== this._draws) {
      return; // a newer drawing started meanwhile
    }
    // A new step of the same plan moves the same tensors: keep the drawing (and a click on it).
    const paint = JSON.stringify([placement.nodes, placement.devices, placement.transfers]);
    if (placed !== this._layout || paint !== this._paint) {
      this._layout = placed;
      this._paint = paint;
      this._svg.replaceChildren(this._defs(), this._graph(view, placed));
    }
    if (this._anchor) {
      this._zoom = this._anchored(this._anchor, placed);
      this._anchor = null;
    }
    this._place();
    this.node.dataset.items = String(placed.boxes.size);
    this.node.dataset.renderMs = (performance.now() - started).toFixed(1);
  }

  private _graph(view: IShown, placed: ILayout): SVGElement {
    const group = svg('g', { class: 'dtfnb-view' });
    const edges = svg('g', { class: 'dtfnb-edges' });
    for (const edge of view.edges) {
      const at = placed.edges.get(edge.id);
      if (!at) {
        continue;
      }
      const points = at.points.map(p => `${p.x},${p.y}`).join(' ');
      const line = svg('polyline', { points, 'marker-end': `url(#${this._id}-arrow)` });
      const drawn = svg('g', { class: 'dtfnb-edge' });
      drawn.appendChild(line);
      if (edge.control) {
        drawn.classList.add('dtfnb-mod-control');
      }
      if (edge.transfers.length > 0) {
        this._transferEnds(drawn, edge.transfers.map(i => this._placement!.transfers[i]), at.points);
      }
      if (at.label) {
        const label = svg('text', {
          class: 'dtfnb-bytes',
          x: at.label.x + at.label.width / 2,
          y: at.label.y + EDGE_LABEL_HEIGHT - 3
        });
        label.textContent = at.label.text;
        drawn.appendChild(label);
      }
      edges.appendChild(drawn);
    }
    group.appendChild(edges);
    for (const item of view.items) {
      group.appendChild(this._item(item, placed));
    }
    return group;
  }

  /** A Send/Recv pair: thick and dashed, a dot of the sender's colour at one end and the receiver's at the other. */
  private _transferEnds(drawn: SVGElement, transfers: ITransfer[], points: { x: number; y: number }[]): void {
    drawn.classList.add('dtfnb-mod-transfer');
    const first = transfers[0];
    const send = points[0];
    const recv = points[points.length - 1];
    drawn.append(
      svg('circle', { class: 'dtfnb-send', cx: send.x, cy: send.y, r: 4, fill: this._device(first.src).colour }),
      svg('circle', { class: 'dtfnb-recv', cx: recv.x, cy: recv.y, r: 4, fill: this._device(first.dst).colour })
    );
    drawn.dataset.tensors = transfers.map(t => t.tensor).join(' ');
    drawn.appendChild(title(transfers.map(t => transferText(t, this._devices)).join('\n')));
  }

  private _item(item: Item, placed: ILayout): SVGElement {
    const box = placed.boxes.get(item.id)!;
    if (item.kind === 'scope') {
      const group = svg('g', { class: 'dtfnb-scope', 'data-scope': scopeName(item.id) });
      const frame = svg('rect', { class: 'dtfnb-scope-box', x: box.x, y: box.y, width: box.width, height: box.height, rx: 6 });
      const heading = svg('g', { class: 'dtfnb-scope-title' });
      const name = svg('text', { x: box.x + 8, y: box.y + TITLE_HEIGHT - 6 });
      name.textContent = fitLabel(item.label);
      heading.append(
        svg('rect', { x: box.x, y: box.y, width: box.width, height: TITLE_HEIGHT, fill: 'transparent' }),
        name,
        title(`${item.id} (${plural(item.scope.size, 'op')}): click to fold`)
      );
      heading.addEventListener('click', () => this._toggle(item.id, false, [item.scope]));
      group.append(frame, heading);
      for (const child of item.items) {
        group.appendChild(this._item(child, placed));
      }
      return group;
    }
    if (item.kind === 'op') {
      const node = item.node;
      const device = this._device(node.device);
      const group = svg('g', { class: 'dtfnb-op', 'data-name': node.name, 'data-device': node.device });
      const requested = node.requested ? `\nrequested: ${node.requested}` : '';
      group.append(
        title(`${node.name}\n${node.op}\n${node.device}${requested}`),
        ...this._body(box, device),
        label(fitLabel(item.label), box.x + box.width / 2, box.y + box.height / 2 + 4, device.colour)
      );
      if (device.emulated) {
        group.classList.add('dtfnb-mod-emulated');
      }
      return group;
    }
    const scopes = item.scopes.map(scope => scope.path);
    const group = svg('g', { class: 'dtfnb-folded', 'data-scope': scopeName(item.id), 'data-size': item.size });
    group.append(
      title(`${scopes.join('\n')}\n${plural(item.size, 'op')}: ${mix(item.devices, this._devices)}\nclick to open`),
      svg('rect', { class: 'dtfnb-folded-box', x: box.x, y: box.y, width: box.width, height: box.height, rx: 6 }),
      textAt('dtfnb-folded-name', fitLabel(item.label), box.x + box.width / 2, box.y + 15),
      textAt('dtfnb-folded-count', plural(item.size, 'op'), box.x + box.width / 2, box.y + 28),
      this._deviceBar(item.devices, { x: box.x + 6, y: box.y + box.height - 8, width: box.width - 12, height: 5 })
    );
    group.addEventListener('click', () => this._toggle(item.id, true, item.scopes));
    return group;
  }

  /** An op's rectangle in its device's colour, hatched for an emulated GPU. */
  private _body(box: { x: number; y: number; width: number; height: number }, device: IDevice): SVGElement[] {
    const shape = { x: box.x, y: box.y, width: box.width, height: box.height, rx: 4 };
    const body = [svg('rect', { ...shape, class: 'dtfnb-op-box', fill: device.colour })];
    if (device.emulated) {
      body.push(svg('rect', { ...shape, fill: `url(#${this._id}-hatch)`, class: 'dtfnb-hatch' }));
    }
    return body;
  }

  /** The ops of a folded node by device: one stacked bar in palette order. */
  private _deviceBar(devices: Map<string, number>, at: { x: number; y: number; width: number; height: number }): SVGElement {
    const bar = svg('g', { class: 'dtfnb-device-bar' });
    const total = [...devices.values()].reduce((a, b) => a + b, 0);
    let x = at.x;
    for (const name of this._inPaletteOrder(devices)) {
      const width = (at.width * devices.get(name)!) / total;
      const device = this._device(name);
      bar.appendChild(svg('rect', { x, y: at.y, width, height: at.height, fill: device.colour, 'data-device': name }));
      if (device.emulated) {
        bar.appendChild(svg('rect', { x, y: at.y, width, height: at.height, fill: `url(#${this._id}-hatch)` }));
      }
      x += width;
    }
    return bar;
  }

  private _inPaletteOrder(devices: Map<string, number>): string[] {
    const order = this._placement!.devices.map(device => device.name);
    const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
    return [...devices.keys()].sort((a, b) => rank(a) - rank(b));
  }

  private _device(name: string): IDevice {
    return this._devices.get(name) ?? { ...UNKNOWN, name, short: name };
  }

  private _defs(): SVGElement {
    const defs = svg('defs', {});
    const hatch = svg('pattern', {
      id: `${this._id}-hatch`,
      width: 6,
      height: 6,
      patternUnits: 'userSpaceOnUse',
      patternTransform: 'rotate(45)'
    });
    hatch.appendChild(svg('rect', { width: 3, height: 6, fill: 'rgba(255, 255, 255, 0.45)' }));
    const arrow = svg('marker', {
      id: `${this._id}-arrow`,
      viewBox: '0 0 8 8',
      refX: 8,
      refY: 4,
      markerWidth: 7,
      markerHeight: 7,
      orient: 'auto-start-reverse',
      markerUnits: 'userSpaceOnUse'
    });
    arrow.appendChild(svg('path', { d: 'M0,0 L8,4 L0,8 z', class: 'dtfnb-arrow' }));
    defs.append(hatch, arrow);
    return defs;
  }

  /** Opens or folds item `id` (a group opens into `scopes`), keeping it where it was on screen. */
  private _toggle(id: string, open: boolean, scopes: IScope[]): void {
    if (this._panned) {
      return; // the end of a drag, not a click
    }
    const box = this._layout?.boxes.get(id);
    if (box) {
      const view = this._view();
      const ids = [id, ...scopes.map(scope => scopeId(scope.path))];
      this._anchor = { ids, x: view.x + box.x * view.scale, y: view.y + box.y * view.scale };
    }
    this._open.set(id, open);
    void this._draw();
  }

  /**
   * The view of `placed` that keeps the anchored item where it was clicked, at
   * the same scale (or the fitted one), moved just enough to show its whole
   * box; null (fitted) when the whole graph fits anyway.
   */
  private _anchored(anchor: IAnchor, placed: ILayout): IView | null {
    const boxes = anchor.ids.map(id => placed.boxes.get(id)).filter(box => box !== undefined);
    if (boxes.length === 0) {
      return this._zoom;
    }
    const left = Math.min(...boxes.map(box => box.x));
    const top = Math.min(...boxes.map(box => box.y));
    const right = Math.max(...boxes.map(box => box.x + box.width));
    const bottom = Math.max(...boxes.map(box => box.y + box.height));
    const scale = this._zoom?.scale ?? this._fitScale(placed);
    const width = this._viewport.clientWidth || placed.width * scale;
    // The drawing is as tall as the graph, up to maxHeight (or the tab's height).
    const height = Math.min(this._maxHeight ?? this._viewport.clientHeight, placed.height * scale);
    if (!this._zoom && placed.width * scale <= width && placed.height * scale <= height) {
      return null;
    }
    return {
      scale,
      x: inView(anchor.x - left * scale, left * scale, (right - left) * scale, width, placed.width * scale),
      y: inView(anchor.y - top * scale, top * scale, (bottom - top) * scale, height, placed.height * scale),
      height: placed.height * scale
    };
  }

  /** A row above the drawing (never over it): open in a tab; zoom out, in, and fit the whole graph. */
  private _toolbar(openable: boolean): HTMLElement {
    const toolbar = element('div', 'dtfnb-graph-toolbar');
    const button = (label: string, hint: string, act: () => void) => {
      const b = text('button', 'dtfnb-zoom-button jp-Button jp-mod-minimal', label);
      b.title = hint;
      b.addEventListener('click', act);
      toolbar.appendChild(b);
      return b;
    };
    if (openable) {
      const open = button('Open in tab', 'Open this graph in a main-area tab, big', () =>
        this.node.dispatchEvent(new CustomEvent(OPEN_IN_TAB, { bubbles: true, detail: this }))
      );
      open.classList.replace('dtfnb-zoom-button', 'dtfnb-open-tab');
      open.prepend(launchIcon.element({ tag: 'span', className: 'dtfnb-open-tab-icon' }));
    }
    const width = () => this._viewport.clientWidth;
    const height = () => this._viewport.clientHeight;
    button('\u2212', 'Zoom out (or Ctrl + wheel)', () => this._zoomAt(1 / ZOOM_STEP, width() / 2, height() / 2));
    button('+', 'Zoom in (or Ctrl + wheel)', () => this._zoomAt(ZOOM_STEP, width() / 2, height() / 2));
    button('fit', 'Show the whole graph', () => this._fitAll());
    return toolbar;
  }

  /** Drag to pan; Ctrl (or ⌘) + wheel, or a pinch, zooms about the pointer: a plain wheel scrolls the page. */
  private _panAndZoom(): void {
    let from: { x: number; y: number; tx: number; ty: number } | null = null;
    this._svg.addEventListener('pointerdown', event => {
      if (event.button !== 0) {
        return;
      }
      const view = this._view();
      from = { x: event.clientX, y: event.clientY, tx: view.x, ty: view.y };
      this._panned = false;
    });
    this._svg.addEventListener('pointermove', event => {
      if (!from) {
        return;
      }
      const dx = event.clientX - from.x;
      const dy = event.clientY - from.y;
      if (!this._panned && Math.hypot(dx, dy) < 4) {
        return;
      }
      if (!this._panned) {
        this._panned = true;
        this._svg.setPointerCapture(event.pointerId);
      }
      this._zoom = { ...this._view(), x: from.tx + dx, y: from.ty + dy };
      this._place();
    });
    const end = () => {
      from = null;
      // The click that ends a drag comes after pointerup: let it see the drag, then forget it.
      setTimeout(() => (this._panned = false));
    };
    this._svg.addEventListener('pointerup', end);
    this._svg.addEventListener('pointercancel', end);
    this._viewport.addEventListener(
      'wheel',
      event => {
        if (!(event.ctrlKey || event.metaKey)) {
          return;
        }
        event.preventDefault();
        const box = this._viewport.getBoundingClientRect();
        this._zoomAt(Math.exp(-event.deltaY / 300), event.clientX - box.left, event.clientY - box.top);
      },
      { passive: false }
    );
  }

  private _zoomAt(factor: number, x: number, y: number): void {
    const view = this._view();
    const scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, view.scale * factor));
    const k = scale / view.scale;
    this._zoom = { scale, x: x - (x - view.x) * k, y: y - (y - view.y) * k, height: view.height };
    this._place();
  }

  private _fitAll(): void {
    if (!this._layout) {
      return;
    }
    const width = this._viewport.clientWidth || this._layout.width;
    const height = this._maxHeight ?? this._viewport.clientHeight;
    const scale = Math.min(1, width / this._layout.width, height / this._layout.height);
    this._zoom = { scale, x: (width - this._layout.width * scale) / 2, y: 0, height: this._layout.height * scale };
    this._place();
  }

  /** The scale that fits `graph` to the viewport's width, labels no smaller than minLabelPx. */
  private _fitScale(graph: { width: number }): number {
    const width = this._viewport.clientWidth || graph.width;
    return Math.max(this._minScale, Math.min(1, width / graph.width));
  }

  /** The user's zoom and pan, or the fitted view: the width of the viewport, labels kept readable. */
  private _view(): IView {
    if (this._zoom) {
      return this._zoom;
    }
    const graph = this._layout ?? { width: 1, height: 0 };
    const width = this._viewport.clientWidth || graph.width;
    const scale = this._fitScale(graph);
    return { scale, x: Math.max(0, (width - graph.width * scale) / 2), y: 0, height: graph.height * scale };
  }

  private _place(): void {
    const view = this._view();
    // Filling a tab, the drawing is as tall as the tab leaves it (CSS).
    if (this._maxHeight !== null) {
      this._svg.style.height = `${Math.max(60, Math.min(this._maxHeight, view.height))}px`;
    }
    this._svg.querySelector('.dtfnb-view')?.setAttribute('transform', `translate(${view.x},${view.y}) scale(${view.scale})`);
    this.node.dataset.scale = view.scale.toFixed(3);
  }

  private _minScale: number;
  private _maxHeight: number | null;
  private _id: string;
  private _updated = new Signal<this, IRunPlacement>(this);
  private _header = element('div', 'dtfnb-run');
  private _legend = element('ul', 'dtfnb-legend');
  private _viewport = element('div', 'dtfnb-graph');
  private _svg = svg('svg', { class: 'dtfnb-svg', width: '100%' }) as SVGSVGElement;
  private _transfers = element('div', 'dtfnb-transfers');
  private _json = '';
  private _drawn: Promise<void> = Promise.resolve();
  private _draws = 0;
  private _placement: IRunPlacement | null = null;
  private _tree: IScope | null = null;
  private _devices = new Map<string, IDevice>();
  private _layout: ILayout | null = null;
  private _paint = '';
  private _open = new Map<string, boolean>();
  private _zoom: IView | null = null;
  private _anchor: IAnchor | null = null;
  private _panned = false;
  private _listOpen: { user: boolean | null } = { user: null };
}

/**
 * The offset that keeps a box (`start`, `size`) of a drawing `total` long in a
 * viewport `room` long, moving `offset` as little as it can: a drawing that
 * fits is centred, a box too big for the room shows its start.
 */
function inView(offset: number, start: number, size: number, room: number, total: number): number {
  if (total <= room) {
    return (room - total) / 2;
  }
  const kept = size > room ? -start : Math.min(-start, Math.max(room - start - size, offset));
  return Math.min(0, Math.max(room - total, kept));
}

function svg(tag: string, attributes: { [name: string]: string | number }): SVGElement {
  const node = document.createElementNS(SVG, tag) as SVGElement;
  for (const [name, value] of Object.entries(attributes)) {
    node.setAttribute(name, String(value));
  }
  return node;
}

function title(content: string): SVGElement {
  const node = svg('title', {});
  node.textContent = content;
  return node;
}

function textAt(className: string, content: string, x: number, y: number): SVGElement {
  const node = svg('text', { class: className, x, y, 'text-anchor': 'middle' });
  node.textContent = content;
  return node;
}

/** A label that reads on its background: dark on light colours, white on dark ones. */
function label(content: string, x: number, y: number, background: string): SVGElement {
  const node = textAt('dtfnb-op-label', content, x, y);
  node.setAttribute('fill', luminance(background) > 0.5 ? '#1a1a1a' : '#ffffff');
  return node;
}

function luminance(hex: string): number {
  const match = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!match) {
    return 0;
  }
  const [r, g, b] = match.slice(1).map(part => parseInt(part, 16) / 255);
  return 0.299 * r + 0.587 * g + 0.114 * b;
}

/** "run 12": the session's 12th step the kernel saw ("planned" for a plan seen before any run). */
export function runName(run: IRun): string {
  return run.number > 0 ? `run ${run.number}` : 'planned';
}

/** "ps:0 CPU:0 ×12, worker:0 CPU:0 ×30" */
function mix(devices: Map<string, number>, known: Map<string, IDevice>): string {
  return [...devices].map(([name, n]) => `${known.get(name)?.short ?? name} ×${n}`).join(', ');
}

/** "run 12 · [5] · grpc://127.0.0.1:2222 · ok", with "failed" and "stopped at 14:02" when so. */
function header(placement: IRunPlacement): HTMLElement[] {
  const run = placement.run;
  const name = text('span', 'dtfnb-run-step', runName(run));
  name.title = `step id ${run.id.slice(run.id.lastIndexOf('/') + 1)}`;
  const parts = [
    name,
    text('span', 'dtfnb-run-cell', run.cell === null ? '[ ]' : `[${run.cell}]`),
    text('span', 'dtfnb-run-target', run.target)
  ];
  const status = text('span', 'dtfnb-run-status', run.error ? 'failed' : 'ok');
  status.dataset.failed = String(Boolean(run.error));
  if (run.error) {
    status.title = run.error;
  }
  parts.push(status);
  const stopped = placement.devices.map(device => device.stopped_at).filter(at => at !== null).sort();
  if (stopped.length > 0) {
    parts.push(text('span', 'dtfnb-stopped', `stopped at ${stopped[0]}`));
  }
  parts.forEach(part => part.classList.add('dtfnb-run-part'));
  return parts;
}

function legend(placement: IRunPlacement, devices: Map<string, IDevice>): HTMLElement[] {
  const counts = new Map<string, number>();
  for (const node of placement.nodes) {
    counts.set(node.device, (counts.get(node.device) ?? 0) + 1);
  }
  return [...devices.values()].map(device => {
    const item = element('li', 'dtfnb-legend-item');
    item.dataset.device = device.name;
    item.title = device.name;
    const swatch = element('span', 'dtfnb-swatch');
    swatch.style.backgroundColor = device.colour;
    item.append(swatch, text('span', 'dtfnb-legend-name', device.short));
    if (device.emulated) {
      swatch.classList.add('dtfnb-mod-emulated');
      item.appendChild(text('span', 'dtfnb-tag', 'emulated'));
    }
    if (device.stopped_at) {
      item.classList.add('dtfnb-mod-stopped');
    }
    item.appendChild(text('span', 'dtfnb-count', plural(counts.get(device.name) ?? 0, 'op')));
    return item;
  });
}

/** "dnn/w/read (ps:0 CPU:0) → dnn/MatMul (worker:0 CPU:0), 12 B" */
function transferText(transfer: ITransfer, devices: Map<string, IDevice>): string {
  const short = (name: string) => devices.get(name)?.short ?? name;
  const tensor = transfer.tensor.replace(/:0$/, '');
  const bytes = transfer.bytes === null ? '' : `, ${formatBytes(transfer.bytes)}`;
  return `${tensor} (${short(transfer.src)}) \u2192 ${transfer.consumers.join(', ')} (${short(transfer.dst)})${bytes}`;
}

/** The transfers as a list, open while short unless the user said otherwise (`open`, kept across redraws). */
function transferList(
  placement: IRunPlacement,
  devices: Map<string, IDevice>,
  open: { user: boolean | null }
): HTMLElement[] {
  const transfers = placement.transfers;
  if (transfers.length === 0) {
    return [text('p', 'dtfnb-note', 'No tensor crossed devices.')];
  }
  const known = transfers.filter(t => t.bytes !== null);
  const total = known.length > 0 ? `, ${formatBytes(known.reduce((sum, t) => sum + t.bytes!, 0))}` : '';
  const details = element('details', 'dtfnb-transfer-list') as HTMLDetailsElement;
  details.open = open.user ?? transfers.length <= 12;
  const summary = text('summary', 'dtfnb-transfer-summary', `${plural(transfers.length, 'cross-device transfer')} (Send/Recv)${total}`);
  // A click on the summary is the user's choice (a toggle event also comes from setting `open`).
  summary.addEventListener('click', () => (open.user = !details.open));
  details.appendChild(summary);
  const list = element('ul', 'dtfnb-transfer-items');
  for (const transfer of transfers) {
    const item = text('li', 'dtfnb-transfer', transferText(transfer, devices));
    item.dataset.tensor = transfer.tensor;
    item.dataset.src = transfer.src;
    item.dataset.dst = transfer.dst;
    item.dataset.consumers = transfer.consumers.map(opOf).join(' ');
    list.appendChild(item);
  }
  details.appendChild(list);
  return [details];
}
