/**
 * The messages of the `dtfnb.panel` comm, as documented in
 * docs/panel-protocol.md. Fields the panel does not know are ignored.
 */

export const COMM_TARGET = 'dtfnb.panel';

export type TaskState = 'starting' | 'serving' | 'stopping' | 'stopped' | 'dead';

export interface ITask {
  job: string;
  task: number;
  address: string;
  state: TaskState;
  devices: string[];
  steps_run?: number;
}

export interface ICluster {
  name: string;
  tasks: ITask[];
}

export interface IPlacedNode {
  name: string;
  op: string;
  device: string;
  requested?: string;
  inputs?: string[];
}

export interface IPlacement {
  session?: string;
  devices: string[];
  emulated?: string[];
  nodes: IPlacedNode[];
}

export interface IQueue {
  name: string;
  device?: string;
  size: number;
  capacity: number;
  closed?: boolean;
  summary?: string;
}

export interface ISnapshot {
  type: 'snapshot';
  version: number;
  clusters: ICluster[];
  placement: IPlacement | null;
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
  return {
    type: 'snapshot',
    version: message.version ?? 1,
    clusters: Array.isArray(message.clusters) ? message.clusters : [],
    placement: message.placement ?? null,
    queues: Array.isArray(message.queues) ? message.queues : []
  };
}

/** "/job:ps/replica:0/task:1/device:CPU:0" -> "ps:1 CPU:0". */
export function shortDevice(device: string): string {
  const field = (key: string) => new RegExp(`/${key}:([^/]+)`).exec(device)?.[1];
  const job = field('job');
  const task = field('task');
  const dev = field('device');
  const where = job === undefined ? '' : `${job}:${task ?? 0}`;
  const parts = [where, dev ?? ''].filter(part => part !== '');
  return parts.length ? parts.join(' ') : device;
}
