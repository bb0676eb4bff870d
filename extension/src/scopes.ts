import { IPlacedNode, ITransfer } from './protocol';

/**
 * The name-scope tree of a placement and what of it is shown: which scopes are
 * open, which are folded into one node, and the edges between what is shown.
 * Pure data: layout.ts places it, graph.ts draws it.
 */

/** A name scope: its own ops (an op named like the scope lives inside it) and sub-scopes. */
export interface IScope {
  path: string; // "dnn/hidden1"
  name: string; // relative to the parent scope: "hidden1", or "a/b" for a chain of one-child scopes
  ops: IPlacedNode[];
  scopes: IScope[];
  size: number; // ops in it and below
  devices: Map<string, number>; // device -> ops in it and below
}

/** Something drawn: an op, an open scope (a box around its items), or a folded node. */
export type Item =
  | { kind: 'op'; id: string; label: string; node: IPlacedNode }
  | { kind: 'scope'; id: string; label: string; scope: IScope; items: Item[] } // id: scopeId(path)
  | { kind: 'folded'; id: string; label: string; scopes: IScope[]; size: number; devices: Map<string, number> };

/** An edge between two drawn items, with the transfers (indices) it carries. */
export interface IShownEdge {
  id: string;
  source: string;
  target: string;
  control: boolean; // only control inputs
  transfers: number[];
  bytes: number | null; // moved by its transfers this step, when known
}

export interface IShown {
  items: Item[];
  edges: IShownEdge[];
  itemOf: Map<string, string>; // op name -> the id of the item that shows it
}

/**
 * Scopes a learner reads as one step of the algorithm, not op by op: folded
 * until clicked. The gradients, initializers, optimizers (and their `_1`
 * update scopes), sync_replicas and save.
 */
const FOLDED_BY_DEFAULT =
  /^(gradients|save|sync_replicas|GradientDescent|Adam|Momentum|RMSProp|Adagrad|Adadelta|Ftrl|ProximalGradientDescent|ProximalAdagrad)(_\d+)?$|Initializer/;

/** Siblings named like this and built alike are shown as one node until opened. */
const NUMBERED = /^(.*?)(?:_(\d+))?$/;
const GROUP_AT_LEAST = 3;

/** "^a" (a control input) and "a:1" (an output of a) both name op a. */
export function opOf(input: string): string {
  return input.replace(/^\^/, '').replace(/:\d+$/, '');
}

/** The tree of name scopes of `nodes`, with chains of one-child scopes merged. */
export function scopeTree(nodes: IPlacedNode[]): IScope {
  const root = newScope('', '');
  const paths = new Set<string>();
  for (const node of nodes) {
    const parts = node.name.split('/');
    for (let i = 1; i < parts.length; i++) {
      paths.add(parts.slice(0, i).join('/'));
    }
  }
  const scopes = new Map<string, IScope>([['', root]]);
  const scopeAt = (path: string): IScope => {
    let scope = scopes.get(path);
    if (!scope) {
      const slash = path.lastIndexOf('/');
      const parent = scopeAt(slash < 0 ? '' : path.slice(0, slash));
      scope = newScope(path, path.slice(slash + 1));
      parent.scopes.push(scope);
      scopes.set(path, scope);
    }
    return scope;
  };
  for (const node of nodes) {
    const slash = node.name.lastIndexOf('/');
    const home = paths.has(node.name) ? node.name : slash < 0 ? '' : node.name.slice(0, slash);
    scopeAt(home).ops.push(node);
  }
  count(root);
  merge(root);
  return root;
}

function newScope(path: string, name: string): IScope {
  return { path, name, ops: [], scopes: [], size: 0, devices: new Map() };
}

function count(scope: IScope): void {
  for (const node of scope.ops) {
    scope.devices.set(node.device, (scope.devices.get(node.device) ?? 0) + 1);
  }
  scope.size = scope.ops.length;
  for (const child of scope.scopes) {
    count(child);
    scope.size += child.size;
    for (const [device, n] of child.devices) {
      scope.devices.set(device, (scope.devices.get(device) ?? 0) + n);
    }
  }
}

/** "a" holding only "a/b": one box "a/b". A scope folded by default keeps its own node. */
function merge(scope: IScope): void {
  scope.scopes = scope.scopes.map(child => {
    while (
      child.ops.length === 0 &&
      child.scopes.length === 1 &&
      !FOLDED_BY_DEFAULT.test(child.name.split('/').pop()!)
    ) {
      const only = child.scopes[0];
      child = { ...only, name: `${child.name}/${only.name}` };
    }
    merge(child);
    return child;
  });
}

/** A scope's item id: "dnn/w/", apart from the op "dnn/w" that lives in it. */
export function scopeId(path: string): string {
  return `${path}/`;
}

/** The name a drawn scope or group goes by (data-scope): "dnn/w", "dnn/layer*". */
export function scopeName(id: string): string {
  return id.replace(/\/$/, '');
}

/** Whether the scope is folded when the user has not said otherwise. */
export function foldedByDefault(scope: IScope): boolean {
  return scope.name.split('/').some(part => FOLDED_BY_DEFAULT.test(part));
}

/**
 * What is shown of `root` when `open` says which scopes and groups the user
 * opened (true) or folded (false); the rest take their default.
 */
export function shown(root: IScope, transfers: ITransfer[], open: Map<string, boolean>): IShown {
  const itemOf = new Map<string, string>();
  const items = itemsOf(root, open, itemOf);
  return { items, edges: shownEdges(root, transfers, itemOf), itemOf };
}

function itemsOf(scope: IScope, open: Map<string, boolean>, itemOf: Map<string, string>): Item[] {
  const items: Item[] = [];
  for (const node of scope.ops) {
    const label = node.name === scope.path ? scope.name.split('/').pop()! : node.name.slice(scope.path ? scope.path.length + 1 : 0);
    items.push({ kind: 'op', id: node.name, label, node });
    itemOf.set(node.name, node.name);
  }
  for (const group of groups(scope.scopes)) {
    const id = `${scope.path}/${group[0].name}*`;
    if (group.length > 1 && !open.get(id)) {
      const first = group[0].name;
      const last = group[group.length - 1].name;
      items.push(folded(id, `${first} … ${last} ×${group.length}`, group, itemOf));
      continue;
    }
    for (const child of group) {
      const id = scopeId(child.path);
      if (open.get(id) ?? !foldedByDefault(child)) {
        items.push({ kind: 'scope', id, label: child.name, scope: child, items: itemsOf(child, open, itemOf) });
      } else {
        items.push(folded(id, child.name, [child], itemOf));
      }
    }
  }
  return items;
}

function folded(id: string, label: string, scopes: IScope[], itemOf: Map<string, string>): Item {
  const devices = new Map<string, number>();
  let size = 0;
  for (const scope of scopes) {
    size += scope.size;
    for (const [device, n] of scope.devices) {
      devices.set(device, (devices.get(device) ?? 0) + n);
    }
    forEachOp(scope, node => itemOf.set(node.name, id));
  }
  return { kind: 'folded', id, label, scopes, size, devices };
}

function forEachOp(scope: IScope, visit: (node: IPlacedNode) => void): void {
  scope.ops.forEach(visit);
  scope.scopes.forEach(child => forEachOp(child, visit));
}

/**
 * Sibling scopes in runs of one: except layer_1 … layer_7 (numbered alike, at
 * least three, the same ops inside) which come as one run.
 */
function groups(scopes: IScope[]): IScope[][] {
  const runs = new Map<string, IScope[]>();
  for (const scope of scopes) {
    const [, base, number] = NUMBERED.exec(scope.name)!;
    const key = number === undefined && !scopes.some(s => s.name === `${base}_1`) ? scope.path : `${base}\n${shape(scope)}`;
    runs.set(key, [...(runs.get(key) ?? []), scope]);
  }
  return [...runs.values()].flatMap(run => (run.length >= GROUP_AT_LEAST ? [run] : run.map(scope => [scope])));
}

/**
 * The ops of a scope by their names inside it and their types: equal for
 * repeated layers (and towers, whose gradients repeat the tower's name).
 */
function shape(scope: IScope): string {
  const parts: string[] = [];
  forEachOp(scope, node => parts.push(`${node.name.slice(scope.path.length).split(scope.name).join('#')}:${node.op}`));
  return parts.sort().join(',');
}

/** Edges between shown items: data and control inputs, and the transfers on them. */
function shownEdges(root: IScope, transfers: ITransfer[], itemOf: Map<string, string>): IShownEdge[] {
  const edges = new Map<string, IShownEdge>();
  const edge = (source: string, target: string): IShownEdge => {
    const id = `${source}\u2192${target}`;
    let found = edges.get(id);
    if (!found) {
      found = { id, source, target, control: true, transfers: [], bytes: null };
      edges.set(id, found);
    }
    return found;
  };
  forEachOp(root, node => {
    const target = itemOf.get(node.name)!;
    for (const input of node.inputs) {
      const source = itemOf.get(opOf(input));
      if (source !== undefined && source !== target) {
        const found = edge(source, target);
        found.control = found.control && input.startsWith('^');
      }
    }
  });
  transfers.forEach((transfer, index) => {
    const source = itemOf.get(opOf(transfer.tensor));
    const targets = new Set(transfer.consumers.map(consumer => itemOf.get(consumer)));
    for (const target of targets) {
      if (source === undefined || target === undefined || source === target) {
        continue;
      }
      const found = edge(source, target);
      found.control = found.control && transfer.tensor.startsWith('^');
      if (!found.transfers.includes(index)) {
        found.transfers.push(index);
        if (transfer.bytes !== null) {
          found.bytes = (found.bytes ?? 0) + transfer.bytes;
        }
      }
    }
  });
  return [...edges.values()];
}
