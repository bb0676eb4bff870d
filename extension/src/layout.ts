import ELK, { ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk.bundled.js';

import { formatBytes } from './format';
import { IShown, Item } from './scopes';

/**
 * Places what is shown of a placement with elkjs: a layered layout, top to
 * bottom, of nested boxes (open scopes), in one pass over the hierarchy so
 * that edges between scopes are routed too. Sizes are in SVG user units, the
 * labels' font being LABEL_PX.
 */

export const LABEL_PX = 12;
const CHAR_EM = 0.62; // a monospace font's advance, in ems
export const OP_HEIGHT = 24;
export const FOLDED_HEIGHT = 40;
export const TITLE_HEIGHT = 22;
export const EDGE_LABEL_HEIGHT = 14;
/** Labels longer than this are cut in the middle (the full name is on hover). */
const LABEL_CHARS = 30;

export interface IBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface IPlacedEdge {
  points: { x: number; y: number }[];
  label: (IBox & { text: string }) | null;
}

export interface ILayout {
  width: number;
  height: number;
  boxes: Map<string, IBox>; // item id -> its box, in the graph's coordinates
  edges: Map<string, IPlacedEdge>;
}

const elk = new ELK();
/** Graphs larger than this (nodes and edges) are laid out with less care, and sooner. */
const THOROUGH_UP_TO = 150;

const GRAPH_OPTIONS = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.json.shapeCoords': 'ROOT',
  'elk.json.edgeCoords': 'ROOT',
  'elk.spacing.nodeNode': '10',
  'elk.layered.spacing.nodeNodeBetweenLayers': '22',
  'elk.spacing.edgeLabel': '2',
  'elk.edgeLabels.placement': 'CENTER',
  'elk.padding': '[top=8,left=8,bottom=8,right=8]'
};
const SCOPE_OPTIONS = { 'elk.padding': `[top=${TITLE_HEIGHT + 6},left=8,bottom=8,right=8]` };

/** `label` cut to LABEL_CHARS, keeping its start and its end. */
export function fitLabel(label: string): string {
  if (label.length <= LABEL_CHARS) {
    return label;
  }
  const half = (LABEL_CHARS - 1) / 2;
  return `${label.slice(0, Math.ceil(half))}…${label.slice(-Math.floor(half))}`;
}

/** The width a label of `text` takes, with its padding. */
export function textWidth(text: string, px = LABEL_PX): number {
  return Math.ceil(text.length * px * CHAR_EM) + 16;
}

function sizeOf(item: Item): { width: number; height: number } {
  if (item.kind !== 'folded') {
    return { width: Math.max(textWidth(fitLabel(item.label)), 36), height: OP_HEIGHT };
  }
  const count = `${item.size} ops`;
  return { width: Math.max(textWidth(fitLabel(item.label)), textWidth(count), 64), height: FOLDED_HEIGHT };
}

/** The ELK graph of `shown`: one ELK node per item, each edge in the lowest box holding both ends. */
export function elkGraph(shown: IShown): ElkNode {
  const root: ElkNode = { id: '\u0000root', layoutOptions: GRAPH_OPTIONS, children: [], edges: [] };
  const parents = new Map<string, string[]>(); // item id -> the ids of the boxes around it, outermost first
  const boxes = new Map<string, ElkNode>([[root.id, root]]);
  const add = (items: Item[], into: ElkNode, path: string[]) => {
    for (const item of items) {
      parents.set(item.id, path);
      if (item.kind === 'scope') {
        const box: ElkNode = { id: item.id, layoutOptions: SCOPE_OPTIONS, children: [], edges: [] };
        into.children!.push(box);
        boxes.set(item.id, box);
        add(item.items, box, [...path, item.id]);
      } else {
        into.children!.push({ id: item.id, ...sizeOf(item) });
      }
    }
  };
  add(shown.items, root, [root.id]);
  for (const edge of shown.edges) {
    const from = parents.get(edge.source)!;
    const to = parents.get(edge.target)!;
    let common = 0;
    while (common < from.length && common < to.length && from[common] === to[common]) {
      common++;
    }
    const elkEdge: ElkExtendedEdge = { id: edge.id, sources: [edge.source], targets: [edge.target] };
    if (edge.transfers.length > 0 && edge.bytes !== null) {
      const text = formatBytes(edge.bytes);
      elkEdge.labels = [{ text, width: textWidth(text) - 10, height: EDGE_LABEL_HEIGHT }];
    }
    boxes.get(from[common - 1])!.edges!.push(elkEdge);
  }
  return root;
}

function itemCount(items: Item[]): number {
  return items.reduce((n, item) => n + 1 + (item.kind === 'scope' ? itemCount(item.items) : 0), 0);
}

let last: { key: string; layout: Promise<ILayout> } | null = null;

/** The layout of `shown`; the same graph (a redraw with new data, or another view of it) is laid out once. */
export function layout(shown: IShown): Promise<ILayout> {
  const graph = elkGraph(shown);
  if (itemCount(shown.items) + shown.edges.length > THOROUGH_UP_TO) {
    // Fewer sweeps to cut crossings: a 200-node step draws in a third of the time.
    graph.layoutOptions = { ...graph.layoutOptions, 'elk.layered.thoroughness': '1' };
  }
  const key = JSON.stringify(graph);
  if (last?.key !== key) {
    last = { key, layout: elk.layout(graph).then(placed) };
  }
  return last.layout;
}

function placed(graph: ElkNode): ILayout {
  const boxes = new Map<string, IBox>();
  const edges = new Map<string, IPlacedEdge>();
  const visit = (node: ElkNode) => {
    for (const child of node.children ?? []) {
      boxes.set(child.id, { x: child.x!, y: child.y!, width: child.width!, height: child.height! });
      visit(child);
    }
    for (const edge of node.edges ?? []) {
      const section = edge.sections?.[0];
      if (!section) {
        continue;
      }
      const label = edge.labels?.[0];
      edges.set(edge.id, {
        points: [section.startPoint, ...(section.bendPoints ?? []), section.endPoint],
        label: label ? { x: label.x!, y: label.y!, width: label.width!, height: label.height!, text: label.text! } : null
      });
    }
  };
  visit(graph);
  return { width: graph.width!, height: graph.height!, boxes, edges };
}
