/**
 * The data the kernel sends: the `dtfnb.panel` comm's snapshots and the
 * `application/vnd.dtfnb.placement+json` cell outputs, as documented in
 * docs/panel-protocol.md. Colours and short device names are decided by the
 * kernel (one palette, dtfnb/notebook/palette.py): nothing here computes one.
 * Fields the panel does not know are ignored.
 */

export const COMM_TARGET = 'dtfnb.panel';
export const PLACEMENT_MIME = 'application/vnd.dtfnb.placement+json';

export type TaskState = 'starting' | 'serving' | 'stopping' | 'stopped' | 'dead';

/** A device as every view draws it. */
export interface IDevice {
  name: string; // "/job:ps/replica:0/task:0/device:CPU:0"
  short: string; // "ps:0 CPU:0"
  colour: string; // "#4e79a7": the same in every view
  emulated: boolean; // an emulated GPU: drawn hatched
  stopped_at: string | null; // "14:02" once its task stopped
}

/** What a task did: as master (steps), as worker (graphs run), as sender and receiver. */
export interface IWork {
  steps_run: number;
  graphs_run: number;
  bytes_sent: number;
  /** Absent from a kernel older than its TrafficEvents. */
  bytes_received?: number;
}

export interface ITask {
  job: string;
  task: number;
  address: string;
  state: TaskState;
  devices: string[];
  work: IWork;
  stopped_at: string | null;
  /** Its emulated link and slowness, "100 Mbit/s, 2 ms · +20 ms/step"; "" or absent: none. */
  emulated?: string;
}

export interface ICluster {
  name: string;
  state: 'serving' | 'stopped';
  stopped_at: string | null;
  tasks: ITask[];
  /** In-kernel servers that stopped and are folded away: how many. */
  folded: number;
}

export interface IPlacedNode {
  name: string;
  op: string;
  device: string;
  requested: string;
  inputs: string[]; // "node:index" or "^node", as in a NodeDef
}

/** A tensor that crosses devices: one Send/Recv pair. */
export interface ITransferEdge {
  tensor: string; // "dnn/w/read:0" ("^name": a control edge)
  src: string; // device
  dst: string;
  consumers: string[]; // ops on dst that read it
}

export interface ITransfer extends ITransferEdge {
  bytes: number | null; // moved in this step; null when not measured
}

/** The pruned graph a session runs for one set of feeds, fetches and targets. */
export interface IPlan {
  session: string;
  nodes: IPlacedNode[]; // only the ops such a step executes
  transfers: ITransferEdge[];
  feeds: string[];
  fetches: string[];
  targets: string[];
}

/** One step a session ran. */
export interface IRun {
  id: string; // "<session>/<step>": unique in the kernel
  session: string;
  target: string; // "grpc://127.0.0.1:2222", or "in-process"
  task: string; // the master's task: "/job:worker/replica:0/task:0"
  step: number; // the runtime's step id (a large random number: shown on hover only)
  number: number; // the how-manieth step of its session the kernel saw; 0: planned, not seen run
  cell: number | null; // execution count of the cell that was running
  time: number; // start, seconds since the epoch
  duration: number; // seconds
  error: string; // "" when it succeeded
  plan: string; // key of snapshot.plans: "<session>/<plan id>"
  transfer_bytes: number[]; // per plan transfer, in order (empty: not measured)
}

export interface ISession {
  session: string;
  target: string;
  cell: number | null; // the cell that was running when its first run was seen
  stopped_at: string | null; // its master's task stopped
  runs: IRun[]; // newest first, at most 10
}

/** What one drawing of a placement shows: a cell output's whole data. */
export interface IRunPlacement {
  version: 1;
  run: IRun;
  devices: IDevice[]; // every device a node ran on, in palette order
  nodes: IPlacedNode[];
  transfers: ITransfer[];
}

export interface IQueue {
  name: string;
  device: string;
  size: number;
  capacity: number | null; // null: no limit
  closed: boolean;
  summary: string;
  enqueued_per_second: number;
  dequeued_per_second: number;
  stopped_at: string | null;
}

export interface ISnapshot {
  type: 'snapshot';
  version: number;
  clusters: ICluster[];
  devices: IDevice[]; // every device any cluster, plan or queue names
  sessions: ISession[]; // newest run first
  plans: { [key: string]: IPlan };
  queues: IQueue[];
}

/** Returns the message as a snapshot, or null when it is not one. */
export function asSnapshot(data: unknown): ISnapshot | null {
  if (typeof data !== 'object' || data === null) {
    return null;
  }
  const message = data as Partial<ISnapshot>;
  if (message.type !== 'snapshot') {
    return null;
  }
  const list = <T>(value: T[] | undefined): T[] => (Array.isArray(value) ? value : []);
  return {
    type: 'snapshot',
    version: message.version ?? 1,
    clusters: list(message.clusters),
    devices: list(message.devices),
    sessions: list(message.sessions),
    plans: message.plans ?? {},
    queues: list(message.queues)
  };
}

/** The placement of `run` as the renderer takes it, from a snapshot's plans and devices. */
export function runPlacement(snapshot: ISnapshot, run: IRun): IRunPlacement | null {
  const plan = snapshot.plans[run.plan];
  if (!plan) {
    return null;
  }
  const used = new Set(plan.nodes.map(node => node.device));
  return {
    version: 1,
    run,
    devices: snapshot.devices.filter(device => used.has(device.name)),
    nodes: plan.nodes,
    transfers: plan.transfers.map((edge, i) => ({ ...edge, bytes: run.transfer_bytes[i] ?? null }))
  };
}
