import { JupyterFrontEnd } from '@jupyterlab/application';
import { MainAreaWidget } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { OPEN_IN_TAB, PlacementGraph, runName } from './graph';
import { dtfnbIcon } from './icon';
import { IRunPlacement } from './protocol';

let tabs = 0;

/**
 * A main-area tab that draws what another placement graph draws (the panel's,
 * or a cell output's), big enough to read a 200-op step at full size, and
 * follows it: a new run in the panel, or an updated output, shows here too.
 * Titled "Placement: <target> run N".
 */
export class PlacementTab extends MainAreaWidget<Widget> {
  constructor(source: PlacementGraph) {
    const graph = new PlacementGraph({ minLabelPx: 11, maxHeight: null, openable: false });
    const content = new Widget();
    content.addClass('dtfnb-placement-tab');
    content.node.appendChild(graph.node);
    super({ content });
    this.id = `dtfnb-placement-tab-${++tabs}`;
    this.title.icon = dtfnbIcon;
    this.title.closable = true;
    this._graph = graph;
    this._source = source;
    source.updated.connect(this._show, this);
    if (source.placement) {
      this._show(source, source.placement);
    }
  }

  dispose(): void {
    this._source.updated.disconnect(this._show, this);
    super.dispose();
  }

  private _show(_: PlacementGraph, placement: IRunPlacement): void {
    const run = placement.run;
    this.title.label = `Placement: ${run.target} ${runName(run)}`;
    this.title.caption = `${this.title.label}${run.cell === null ? '' : ` (cell [${run.cell}])`}`;
    void this._graph.update(placement);
  }

  private _graph: PlacementGraph;
  private _source: PlacementGraph;
}

/**
 * Opens a PlacementTab for a graph whose "open in a tab" button was clicked
 * (the OPEN_IN_TAB event), or brings its open tab to the front.
 */
export function openPlacementTabs(app: JupyterFrontEnd): void {
  const open = new Map<PlacementGraph, PlacementTab>();
  document.addEventListener(OPEN_IN_TAB, event => {
    const source = (event as CustomEvent<PlacementGraph>).detail;
    let tab = open.get(source);
    if (!tab) {
      tab = new PlacementTab(source);
      open.set(source, tab);
      tab.disposed.connect(() => open.delete(source));
      app.shell.add(tab, 'main');
    }
    app.shell.activateById(tab.id);
  });
}
