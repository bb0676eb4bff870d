import { LabIcon } from '@jupyterlab/ui-components';

/** Three devices joined to a parameter server: the panel's tab icon. */
export const dtfnbIcon = new LabIcon({
  name: 'dtfnb:panel',
  svgstr: `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16">
  <g class="jp-icon3" fill="#616161">
    <rect x="9" y="2" width="6" height="5" rx="1"/>
    <rect x="2" y="16" width="6" height="5" rx="1"/>
    <rect x="9" y="16" width="6" height="5" rx="1"/>
    <rect x="16" y="16" width="6" height="5" rx="1"/>
    <path d="M11.25 7h1.5v4h6.5v5h-1.5v-3.5h-5v3.5h-1.5v-3.5h-5v3.5h-1.5v-5h6.5z"/>
  </g>
</svg>`
});
