import {
  ILabShell,
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel } from '@jupyterlab/services';

import { dtfnbIcon } from './icon';
import { KernelLink } from './link';
import { DtfnbPanel } from './panel';
import { openPlacementTabs } from './tab';

/**
 * The dtfnb side panel. Every notebook's kernel gets a KernelLink (so a kernel
 * can attach even while its notebook is in the background); the panel shows
 * the link of the active notebook and switches when the notebook, its kernel,
 * or the kernel's life (a restart) changes. A placement graph's "open in a
 * tab" button (the panel's or a cell output's) opens a main-area tab.
 */
const plugin: JupyterFrontEndPlugin<void> = {
  id: 'dtfnb:panel',
  description: 'Clusters, device placement and queues of the active notebook kernel.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ILabShell, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    shell: ILabShell | null,
    restorer: ILayoutRestorer | null
  ) => {
    const panel = new DtfnbPanel();
    panel.title.icon = dtfnbIcon;
    panel.title.caption = 'dtfnb: clusters, placement and queues';
    app.shell.add(panel, 'right', { rank: 600 });
    restorer?.add(panel, panel.id);
    openPlacementTabs(app);

    const links = new Map<Kernel.IKernelConnection, KernelLink>();
    const linkOf = (notebook: NotebookPanel | null): KernelLink | null => {
      const kernel = notebook?.sessionContext.session?.kernel;
      if (!kernel) {
        return null;
      }
      let link = links.get(kernel);
      if (!link) {
        link = new KernelLink(kernel);
        links.set(kernel, link);
        kernel.disposed.connect(() => {
          links.get(kernel)?.dispose();
          links.delete(kernel);
        });
      }
      return link;
    };
    const show = () => {
      const notebook = tracker.currentWidget;
      panel.follow(linkOf(notebook), notebook?.context.path ?? '');
    };

    tracker.widgetAdded.connect((_, notebook) => {
      notebook.sessionContext.kernelChanged.connect(() => {
        linkOf(notebook);
        show();
      });
      notebook.context.pathChanged.connect(show);
      linkOf(notebook);
    });
    tracker.currentChanged.connect(show);
    show();
  }
};

export default plugin;
