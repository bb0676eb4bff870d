import { element, text } from './dom';
import { IPlacedNode, IPlacement, shortDevice } from './protocol';

/** Colours for devices in the order the placement lists them (Tableau 10). */
const PALETTE = [
  '#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2',
  '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'
];

/** Scopes with more ops than this start folded (gradients, optimizer slots). */
const FOLD_ABOVE = 24;

/**
 * Draws the placement of the last run: one box per top-level name scope, each
 * op a chip coloured by the device it ran on, with a legend per device.
 * Emulated devices get a hatched, dashed chip and say so in the legend. A line
 * counts the edges that cross devices; hovering an op lights up its neighbours.
 */
export function renderPlacement(placement: IPlacement, unfolded: Map<string, boolean>): HTMLElement {
  const root = element('div', 'dtfnb-placement');
  const colors = deviceColors(placement);
  const emulated = new Set(placement.emulated ?? []);
  root.appendChild(renderLegend(placement, colors, emulated));
  const crossing = crossDeviceEdges(placement.nodes);
  const cut = text(
    'p',
    'dtfnb-note dtfnb-cut',
    `${crossing} ${crossing === 1 ? 'edge crosses' : 'edges cross'} devices (a Send/Recv pair each)`
  );
  cut.dataset.edges = String(crossing);
  root.appendChild(cut);
  for (const [scope, nodes] of groupByScope(placement.nodes)) {
    root.appendChild(renderScope(scope, nodes, colors, emulated, unfolded));
  }
  highlightNeighbours(root, placement.nodes);
  return root;
}

/** "^a" (a control input) and "a:1" (an output of a) both name node a. */
function inputNode(input: string): string {
  return input.replace(/^\^/, '').replace(/:\d+$/, '');
}

function crossDeviceEdges(nodes: IPlacedNode[]): number {
  const device = new Map(nodes.map(node => [node.name, node.device]));
  let crossing = 0;
  for (const node of nodes) {
    for (const input of node.inputs ?? []) {
      const from = device.get(inputNode(input));
      if (!input.startsWith('^') && from !== undefined && from !== node.device) {
        crossing++;
      }
    }
  }
  return crossing;
}

/** Hovering an op lights up its inputs and its consumers: the graph's edges. */
function highlightNeighbours(root: HTMLElement, nodes: IPlacedNode[]): void {
  const neighbours = new Map<string, Set<string>>(nodes.map(node => [node.name, new Set()]));
  for (const node of nodes) {
    for (const input of node.inputs ?? []) {
      const from = inputNode(input);
      neighbours.get(from)?.add(node.name);
      neighbours.get(node.name)?.add(from);
    }
  }
  const mark = (name: string | undefined, on: boolean) => {
    for (const other of neighbours.get(name ?? '') ?? []) {
      root
        .querySelector(`.dtfnb-op[data-name="${CSS.escape(other)}"]`)
        ?.classList.toggle('dtfnb-mod-neighbour', on);
    }
  };
  root.addEventListener('mouseover', event => {
    mark((event.target as HTMLElement).dataset?.name, true);
  });
  root.addEventListener('mouseout', event => {
    mark((event.target as HTMLElement).dataset?.name, false);
  });
}

function deviceColors(placement: IPlacement): Map<string, string> {
  const devices = [...placement.devices];
  for (const node of placement.nodes) {
    if (!devices.includes(node.device)) {
      devices.push(node.device);
    }
  }
  return new Map(devices.map((device, i) => [device, PALETTE[i % PALETTE.length]]));
}

/** Top-level name scope -> its ops, in the order the kernel listed them. */
function groupByScope(nodes: IPlacedNode[]): Map<string, IPlacedNode[]> {
  const groups = new Map<string, IPlacedNode[]>();
  for (const node of nodes) {
    const slash = node.name.indexOf('/');
    const scope = slash < 0 ? '' : node.name.slice(0, slash);
    const group = groups.get(scope) ?? [];
    group.push(node);
    groups.set(scope, group);
  }
  return groups;
}

function renderLegend(
  placement: IPlacement,
  colors: Map<string, string>,
  emulated: Set<string>
): HTMLElement {
  const counts = new Map<string, number>();
  for (const node of placement.nodes) {
    counts.set(node.device, (counts.get(node.device) ?? 0) + 1);
  }
  const legend = element('ul', 'dtfnb-legend');
  for (const [device, color] of colors) {
    const item = element('li', 'dtfnb-legend-item');
    item.dataset.device = device;
    item.title = device;
    const swatch = element('span', 'dtfnb-swatch');
    swatch.style.background = color;
    item.appendChild(swatch);
    item.appendChild(text('span', 'dtfnb-legend-name', shortDevice(device)));
    if (emulated.has(device)) {
      swatch.classList.add('dtfnb-mod-emulated');
      item.appendChild(text('span', 'dtfnb-tag', 'emulated'));
    }
    item.appendChild(text('span', 'dtfnb-count', `${counts.get(device) ?? 0} ops`));
    legend.appendChild(item);
  }
  return legend;
}

function renderScope(
  scope: string,
  nodes: IPlacedNode[],
  colors: Map<string, string>,
  emulated: Set<string>,
  unfolded: Map<string, boolean>
): HTMLElement {
  const box = element('details', 'dtfnb-scope') as HTMLDetailsElement;
  box.dataset.scope = scope;
  box.open = unfolded.get(scope) ?? nodes.length <= FOLD_ABOVE;
  // Each snapshot redraws the panel: keep what the user folded or unfolded.
  box.addEventListener('toggle', () => unfolded.set(scope, box.open));
  const summary = element('summary', 'dtfnb-scope-title');
  summary.appendChild(text('span', 'dtfnb-scope-name', scope === '' ? '(top level)' : `${scope}/`));
  summary.appendChild(text('span', 'dtfnb-count', `${nodes.length}`));
  summary.appendChild(renderMix(nodes, colors));
  box.appendChild(summary);
  const chips = element('div', 'dtfnb-chips');
  for (const node of nodes) {
    const chip = text('span', 'dtfnb-op', scope === '' ? node.name : node.name.slice(scope.length + 1));
    chip.dataset.name = node.name;
    chip.dataset.device = node.device;
    chip.style.background = colors.get(node.device) ?? PALETTE[0];
    if (emulated.has(node.device)) {
      chip.classList.add('dtfnb-mod-emulated');
    }
    const requested = node.requested ? `\nrequested: ${node.requested}` : '';
    chip.title = `${node.name} (${node.op})\n${node.device}${requested}`;
    chips.appendChild(chip);
  }
  box.appendChild(chips);
  return box;
}

/** A thin bar showing which share of a scope's ops each device holds. */
function renderMix(nodes: IPlacedNode[], colors: Map<string, string>): HTMLElement {
  const mix = element('span', 'dtfnb-mix');
  for (const [device, color] of colors) {
    const n = nodes.filter(node => node.device === device).length;
    if (n > 0) {
      const part = element('span', 'dtfnb-mix-part');
      part.style.background = color;
      part.style.flexGrow = String(n);
      mix.appendChild(part);
    }
  }
  return mix;
}
