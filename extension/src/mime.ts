import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { PlacementGraph } from './graph';
import { IRunPlacement, PLACEMENT_MIME } from './protocol';

/** How tall a placement output may grow before it is panned. */
const MAX_HEIGHT = 560;

/**
 * A cell output of PLACEMENT_MIME: one run's placement, drawn by the panel's
 * renderer. JupyterLab calls renderModel again on the same widget when the
 * output's display is updated, so zoom and opened scopes survive new runs.
 */
export class PlacementOutput extends Widget implements IRenderMime.IRenderer {
  constructor() {
    super();
    this.addClass('dtfnb-placement-output');
    this.node.appendChild(this._graph.node);
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    return this._graph.update(model.data[PLACEMENT_MIME] as unknown as IRunPlacement);
  }

  private _graph = new PlacementGraph({ minLabelPx: 11, maxHeight: MAX_HEIGHT, openable: true });
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [PLACEMENT_MIME],
  // Ahead of JupyterLab's own (HTML is 50, SVG 80, PNG 90, plain text 120): the
  // kernel sends those as fallbacks for viewers without dtfnb.
  defaultRank: 10,
  createRenderer: () => new PlacementOutput()
};

const extension: IRenderMime.IExtension = {
  id: 'dtfnb:placement',
  description: 'Draws a dtfnb run placement cell output as a graph.',
  rendererFactory,
  rank: 10,
  dataType: 'json'
};

export default extension;
