import { refreshIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { element, text } from './dom';
import { KernelLink } from './link';
import { renderPlacement } from './placement';
import { ICluster, IQueue, ISnapshot, shortDevice } from './protocol';

/**
 * The "dtfnb" side panel. It shows the snapshot of one KernelLink (the active
 * notebook's kernel) and redraws whenever a new snapshot arrives.
 */
export class DtfnbPanel extends Widget {
  constructor() {
    super();
    this.id = 'dtfnb-panel';
    this.addClass('dtfnb-panel');
    const header = element('div', 'dtfnb-header');
    header.appendChild(text('span', 'dtfnb-title', 'dtfnb'));
    header.appendChild(this._source);
    const refresh = element('button', 'dtfnb-refresh jp-Button jp-mod-minimal');
    refresh.title = 'Ask the kernel for a fresh snapshot';
    refresh.appendChild(refreshIcon.element({ tag: 'span' }));
    refresh.addEventListener('click', () => this._link?.refresh());
    header.appendChild(refresh);
    this.node.appendChild(header);
    this.node.appendChild(this._body);
    this._source.className = 'dtfnb-source';
    this._body.className = 'dtfnb-body';
    this._render();
  }

  /** Follows `link` (or nothing); `source` names the notebook it belongs to. */
  follow(link: KernelLink | null, source: string): void {
    if (link !== this._link) {
      this._link?.changed.disconnect(this._render, this);
      this._link = link;
      link?.changed.connect(this._render, this);
    }
    this._source.textContent = source;
    this._source.title = source;
    this._render();
  }

  private _render(): void {
    const body = this._body;
    body.replaceChildren();
    const link = this._link;
    body.dataset.state = link?.state ?? 'none';
    if (!link) {
      const hint = this._source.textContent
        ? 'This notebook has no kernel.'
        : 'Open a notebook to see its clusters, placement and queues.';
      body.appendChild(note(hint));
      return;
    }
    if (link.state === 'connecting') {
      body.appendChild(note('Connecting to the kernel…'));
      return;
    }
    if (link.state === 'absent' || !link.snapshot) {
      body.appendChild(note('dtfnb is not loaded in this kernel. Run %load_ext dtfnb.'));
      return;
    }
    this._renderSnapshot(link.snapshot);
  }

  private _renderSnapshot(snapshot: ISnapshot): void {
    const body = this._body;
    body.appendChild(section('Clusters', 'clusters'));
    if (snapshot.clusters.length === 0) {
      body.appendChild(note('No clusters. Start one with %%cluster.'));
    }
    for (const cluster of snapshot.clusters) {
      body.appendChild(renderCluster(cluster));
    }
    body.appendChild(section('Placement (last run)', 'placement'));
    if (snapshot.placement && snapshot.placement.nodes.length > 0) {
      body.appendChild(renderPlacement(snapshot.placement, this._unfolded));
    } else {
      body.appendChild(note('Nothing has run yet.'));
    }
    body.appendChild(section('Queues', 'queues'));
    if (snapshot.queues.length === 0) {
      body.appendChild(note('No queues.'));
    }
    for (const queue of snapshot.queues) {
      body.appendChild(renderQueue(queue));
    }
  }

  private _link: KernelLink | null = null;
  private _source = document.createElement('span');
  private _body = document.createElement('div');
  private _unfolded = new Map<string, boolean>();
}

function renderCluster(cluster: ICluster): HTMLElement {
  const box = element('div', 'dtfnb-cluster');
  box.dataset.cluster = cluster.name;
  box.appendChild(text('div', 'dtfnb-cluster-name', cluster.name));
  const tasks = element('div', 'dtfnb-tasks');
  for (const task of cluster.tasks) {
    const row = element('div', 'dtfnb-task');
    row.dataset.task = `${task.job}:${task.task}`;
    row.dataset.state = task.state;
    row.title = [`/job:${task.job}/task:${task.task}`, ...task.devices].join('\n');
    const state = text('span', 'dtfnb-state', task.state);
    state.prepend(element('span', `dtfnb-dot dtfnb-mod-${task.state}`));
    row.append(
      text('span', 'dtfnb-task-name', `${task.job}:${task.task}`),
      text('span', 'dtfnb-address', task.address),
      state,
      text('span', 'dtfnb-steps', task.steps_run === undefined ? '' : `${task.steps_run} steps`)
    );
    tasks.appendChild(row);
  }
  box.appendChild(tasks);
  return box;
}

function renderQueue(queue: IQueue): HTMLElement {
  const row = element('div', 'dtfnb-queue');
  row.dataset.queue = queue.name;
  row.dataset.size = String(queue.size);
  row.dataset.capacity = String(queue.capacity);
  const label = element('div', 'dtfnb-queue-label');
  label.appendChild(text('span', 'dtfnb-queue-name', queue.name));
  if (queue.device) {
    label.appendChild(text('span', 'dtfnb-queue-device', shortDevice(queue.device)));
  }
  if (queue.closed) {
    label.appendChild(text('span', 'dtfnb-tag', 'closed'));
    row.classList.add('dtfnb-mod-closed');
  }
  row.appendChild(label);
  const bar = element('div', 'dtfnb-bar');
  const fill = element('div', 'dtfnb-bar-fill');
  const fraction = queue.capacity > 0 ? Math.min(1, queue.size / queue.capacity) : 0;
  fill.style.width = `${(fraction * 100).toFixed(1)}%`;
  bar.appendChild(fill);
  bar.appendChild(text('span', 'dtfnb-bar-text', `${queue.size} / ${queue.capacity}`));
  row.appendChild(bar);
  if (queue.summary) {
    row.title = queue.summary;
  }
  return row;
}

function section(title: string, name: string): HTMLElement {
  const heading = text('h3', 'dtfnb-section', title);
  heading.dataset.section = name;
  return heading;
}

function note(message: string): HTMLElement {
  return text('p', 'dtfnb-note', message);
}
