import { refreshIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { element, text } from './dom';
import { formatBytes, plural } from './format';
import { PlacementGraph, runName } from './graph';
import { KernelLink } from './link';
import { ICluster, IQueue, IRun, ISession, ISnapshot, ITask, runPlacement } from './protocol';

/** How tall the panel's graph may grow before it is panned. */
const GRAPH_HEIGHT = 520;
/**
 * The smallest label the panel's overview fits to its width (a cell output or
 * a tab keeps 11 px): the full names are on hover, and a tab draws it big.
 */
const OVERVIEW_LABEL_PX = 8;
/** The follow picker's value for "the newest run of any session". */
const LATEST = '';

/**
 * The "dtfnb" side panel. It shows the snapshot of one KernelLink (the active
 * notebook's kernel): clusters, the placement of one run, queues. Its sections
 * are built once and refilled on each snapshot (several a second while a
 * cluster trains), so that the picker, the history and the graph keep what
 * the user chose.
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
    this.node.append(header, this._body);
    this._source.className = 'dtfnb-source';
    this._body.className = 'dtfnb-body';
    this._body.append(this._note, this._sections);

    const follow = element('label', 'dtfnb-follow');
    follow.append(text('span', 'dtfnb-follow-label', 'Follow:'), this._follow);
    this._follow.className = 'dtfnb-follow-select';
    this._follow.addEventListener('change', () => {
      this._followed = this._follow.value;
      this._pinned = null;
      this._render();
    });
    // Pinned on pointerdown: a snapshot may redraw the list between a press and its release.
    this._history.addEventListener('pointerdown', event => {
      const item = (event.target as HTMLElement).closest<HTMLElement>('[data-run]');
      const run = this._shownRuns.find(r => r.id === item?.dataset.run);
      if (run) {
        this._pinned = this._pinned?.id === run.id ? null : run;
        this._render();
      }
    });
    this._sections.append(
      section('Clusters', 'clusters'),
      this._clusters,
      section('Placement', 'placement'),
      follow,
      this._history,
      this._placement,
      section('Queues', 'queues'),
      this._queues
    );
    this._render();
  }

  /** Follows `link` (or nothing); `source` names the notebook it belongs to. */
  follow(link: KernelLink | null, source: string): void {
    if (link !== this._link) {
      this._link?.changed.disconnect(this._render, this);
      this._link = link;
      link?.changed.connect(this._render, this);
      this._followed = LATEST;
      this._pinned = null;
    }
    this._source.textContent = source;
    this._source.title = source;
    this._render();
  }

  private _render(): void {
    const link = this._link;
    this._body.dataset.state = link?.state ?? 'none';
    let hint = '';
    if (!link) {
      hint = this._source.textContent
        ? 'This notebook has no kernel.'
        : 'Open a notebook to see its clusters, placement and queues.';
    } else if (link.state === 'connecting') {
      hint = 'Connecting to the kernel…';
    } else if (link.state === 'absent' || !link.snapshot) {
      hint = 'dtfnb is not loaded in this kernel. Run %load_ext dtfnb.';
    }
    this._note.textContent = hint;
    this._note.hidden = !hint;
    this._sections.hidden = Boolean(hint);
    if (!hint) {
      this._renderSnapshot(link!.snapshot!);
    }
  }

  private _renderSnapshot(snapshot: ISnapshot): void {
    this._clusters.replaceChildren(
      ...(snapshot.clusters.length === 0 ? [note('No clusters. Start one with %%cluster.')] : snapshot.clusters.map(renderCluster))
    );
    this._queues.replaceChildren(...(snapshot.queues.length === 0 ? [note('No queues.')] : snapshot.queues.map(renderQueue)));
    this._renderPlacement(snapshot);
  }

  /** The picker, the followed session's recent runs, and the graph of the pinned or newest one. */
  private _renderPlacement(snapshot: ISnapshot): void {
    const sessions = snapshot.sessions;
    this._fillPicker(sessions);
    const followed = sessions.find(s => s.session === this._followed);
    const newest = followed?.runs[0] ?? newestRun(sessions);
    const session = followed ?? sessions.find(s => s.session === newest?.session);
    this._shownRuns = session?.runs ?? [];
    if (this._pinned && !snapshot.plans[this._pinned.plan]) {
      this._pinned = null;
    }
    const run = this._pinned ?? newest;
    this._history.replaceChildren(...this._shownRuns.map(r => historyItem(r, snapshot, r.id === run?.id, r.id === this._pinned?.id)));
    const placement = run ? runPlacement(snapshot, run) : null;
    if (!placement || placement.nodes.length === 0) {
      this._placement.replaceChildren(note('Nothing has run yet.'));
      return;
    }
    if (this._graph.node.parentElement !== this._placement) {
      this._placement.replaceChildren(this._graph.node);
    }
    void this._graph.update(placement);
  }

  /**
   * "latest run" and one entry per session, changed in place (a rebuilt select
   * would close under the user): "worker:0 · from [3]", its target on hover.
   */
  private _fillPicker(sessions: ISession[]): void {
    // Numbered in the order first seen (by the cell they began in), so that "#2" stays on one session.
    const began = (session: ISession) => session.cell ?? Number.MAX_SAFE_INTEGER;
    for (const session of [...sessions].sort((a, b) => began(a) - began(b))) {
      if (!this._seen.has(session.session)) {
        this._seen.set(session.session, this._seen.size);
      }
    }
    const entries: [string, string, string][] = [[LATEST, 'latest run', 'The newest run of any session']];
    const byTask = (task: string) =>
      sessions.filter(s => sessionTask(s) === task).sort((a, b) => this._seen.get(a.session)! - this._seen.get(b.session)!);
    for (const session of sessions) {
      const task = sessionTask(session);
      const nth = byTask(task).indexOf(session);
      const where = task && session.target !== 'in-process' ? shortTask(task) : session.target;
      const name = nth > 0 ? `${where} #${nth + 1}` : where;
      const since = session.cell === null ? '' : ` · from [${session.cell}]`;
      entries.push([session.session, `${name}${since}`, `${session.target} (session ${session.session})`]);
    }
    if (this._followed !== LATEST && !sessions.some(s => s.session === this._followed)) {
      entries.push([this._followed, 'a session that ended', '']);
    }
    const key = JSON.stringify(entries);
    if (key !== this._pickerKey) {
      this._pickerKey = key;
      this._follow.replaceChildren(
        ...entries.map(([value, label, hint]) => {
          const option = document.createElement('option');
          option.value = value;
          option.textContent = label;
          option.title = hint;
          return option;
        })
      );
    }
    this._follow.value = this._followed;
    this._follow.title = this._follow.selectedOptions[0]?.title ?? '';
  }

  private _link: KernelLink | null = null;
  private _source = document.createElement('span');
  private _body = document.createElement('div');
  private _note = text('p', 'dtfnb-note', '');
  private _sections = element('div', 'dtfnb-sections');
  private _clusters = element('div', 'dtfnb-clusters');
  private _follow = document.createElement('select');
  private _pickerKey = '';
  private _seen = new Map<string, number>(); // session -> the order the picker first saw it in
  private _history = element('ol', 'dtfnb-history');
  private _placement = element('div', 'dtfnb-placement-section');
  private _queues = element('div', 'dtfnb-queues');
  private _graph = new PlacementGraph({ minLabelPx: OVERVIEW_LABEL_PX, maxHeight: GRAPH_HEIGHT, openable: true });
  private _followed = LATEST;
  private _pinned: IRun | null = null;
  private _shownRuns: IRun[] = [];
}

/** The task of a session's master: "/job:worker/replica:0/task:0" ("" when not known). */
function sessionTask(session: ISession): string {
  return session.runs[0]?.task ?? '';
}

/** "/job:worker/replica:0/task:0" -> "worker:0". */
function shortTask(task: string): string {
  const job = /\/job:([^/]+)/.exec(task);
  const index = /\/task:(\d+)/.exec(task);
  return job ? `${job[1]}:${index ? index[1] : 0}` : task;
}

function newestRun(sessions: ISession[]): IRun | undefined {
  return sessions
    .map(s => s.runs[0])
    .filter(run => run !== undefined)
    .sort((a, b) => b.time - a.time)[0];
}

/** "run 12 · [5] · 146 ops", "failed" when it did: click to pin. */
function historyItem(run: IRun, snapshot: ISnapshot, shown: boolean, pinned: boolean): HTMLElement {
  const ops = snapshot.plans[run.plan]?.nodes.length ?? 0;
  const parts = [runName(run), run.cell === null ? '' : `[${run.cell}]`, plural(ops, 'op')].filter(Boolean);
  const item = text('li', 'dtfnb-history-run', parts.join(' · '));
  if (run.error) {
    item.appendChild(text('span', 'dtfnb-tag dtfnb-mod-failed', 'failed'));
    item.title = run.error;
  }
  if (pinned) {
    item.appendChild(text('span', 'dtfnb-tag', 'pinned'));
  }
  item.dataset.run = run.id;
  item.classList.toggle('dtfnb-mod-shown', shown);
  item.classList.toggle('dtfnb-mod-pinned', pinned);
  return item;
}

function renderCluster(cluster: ICluster): HTMLElement {
  const box = element('div', 'dtfnb-cluster');
  box.dataset.cluster = cluster.name;
  box.dataset.state = cluster.state;
  const name = element('div', 'dtfnb-cluster-name');
  name.appendChild(text('span', 'dtfnb-cluster-title', cluster.name));
  if (cluster.stopped_at) {
    box.classList.add('dtfnb-mod-stopped');
    name.appendChild(text('span', 'dtfnb-stopped', `stopped at ${cluster.stopped_at}`));
  }
  box.appendChild(name);
  const tasks = element('div', 'dtfnb-tasks');
  tasks.append(...cluster.tasks.map(renderTask));
  box.appendChild(tasks);
  if (cluster.folded > 0) {
    box.appendChild(note(plural(cluster.folded, 'stopped server')));
  }
  return box;
}

/**
 * A task's row: name and state, then its address, its emulated conditions (if any) and its
 * work, each on a line of its own when narrow.
 */
function renderTask(task: ITask): HTMLElement {
  const row = element('div', 'dtfnb-task');
  const name = `${task.job}:${task.task}`;
  row.dataset.task = name;
  row.dataset.state = task.state;
  row.title = [`/job:${task.job}/task:${task.task} at ${task.address}`, ...task.devices].join('\n');
  const state = text('span', 'dtfnb-state', task.stopped_at ? `${task.state} at ${task.stopped_at}` : task.state);
  state.prepend(element('span', `dtfnb-dot dtfnb-mod-${task.state}`));
  row.append(text('span', 'dtfnb-task-name', name), state, text('span', 'dtfnb-address', task.address));
  if (task.emulated) {
    row.appendChild(text('span', 'dtfnb-emulated', `emulated: ${task.emulated}`));
  }
  const work = task.work;
  if (work) {
    // (A kernel older than snapshot v2 counts no work.)
    const done = [plural(work.steps_run, 'step'), plural(work.graphs_run, 'graph'), `${formatBytes(work.bytes_sent)} sent`];
    if (work.bytes_received !== undefined) {
      done.push(`${formatBytes(work.bytes_received)} received`);
    }
    row.appendChild(text('span', 'dtfnb-work', done.join(' · ')));
  }
  return row;
}

function renderQueue(queue: IQueue): HTMLElement {
  const row = element('div', 'dtfnb-queue');
  row.dataset.queue = queue.name;
  row.dataset.size = String(queue.size);
  row.dataset.capacity = queue.capacity === null ? 'none' : String(queue.capacity);
  const label = element('div', 'dtfnb-queue-label');
  label.appendChild(text('span', 'dtfnb-queue-name', queue.name));
  if (queue.closed) {
    label.appendChild(text('span', 'dtfnb-tag', 'closed'));
    row.classList.add('dtfnb-mod-closed');
  }
  if (queue.stopped_at) {
    label.appendChild(text('span', 'dtfnb-stopped', `stopped at ${queue.stopped_at}`));
    row.classList.add('dtfnb-mod-stopped');
  }
  row.appendChild(label);
  const bar = element('div', 'dtfnb-bar');
  const fill = element('div', 'dtfnb-bar-fill');
  const fraction = queue.capacity ? Math.min(1, queue.size / queue.capacity) : 0;
  fill.style.width = `${(fraction * 100).toFixed(1)}%`;
  const size = queue.capacity === null ? `${queue.size} (no limit)` : `${queue.size} / ${queue.capacity}`;
  bar.append(fill, text('span', 'dtfnb-bar-text', size));
  row.appendChild(bar);
  if (!queue.stopped_at && queue.enqueued_per_second !== undefined) {
    // (A kernel older than snapshot v2 sends no rates.)
    const rates = `+${queue.enqueued_per_second.toFixed(1)}/s in · \u2212${queue.dequeued_per_second.toFixed(1)}/s out`;
    row.appendChild(text('div', 'dtfnb-rates', rates));
  }
  row.title = [queue.summary, queue.device].filter(Boolean).join('\n');
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
