// The "Open a model" tab: a checkpoint from a folder, files, a drop or an address, loaded in its
// own worker (client.js → worker.js) with progress, memory and a cancel button; then a prompt's
// continuation (decoders) or encoding (bert), with every layer and head drawn by the package's
// views (views.js). The page's thread never reads the weights: it picks the files (files.js) and
// posts them as they are. This module wires the tab's parts; window.__openModel is for tests.
import { closeModel } from './close-flow.js';
import { openFiles, openUrl, refuse } from './load-flow.js';
import { buildOpenModelPanel } from './panel.js';
import { bindRunForm } from './prompt.js';
import { runPrompt } from './run-flow.js';
import { bindSources } from './sources.js';
import { OpenModelTab } from './tab.js';

/** A token pointed at: its row marked in every map (the chips are redrawn, so listen on their box). */
function bindTokenHover(tab) {
  tab.$.tokens.addEventListener('pointerover', (e) => {
    const chip = e.target.closest('[data-testid=om-token]');
    const row = chip ? Number(chip.dataset.position) : -1;
    tab.views.highlight(tab.run && row < tab.run.rows ? row : -1);
  });
  tab.$.tokens.addEventListener('pointerleave', () => tab.views.highlight(-1));
}

/** Builds the tab into its panel and binds it; returns what the tests read. */
function createOpenModelTab(panel) {
  const tab = new OpenModelTab(panel, buildOpenModelPanel(panel));
  bindSources(tab.$, panel, {
    files: (files, how) => openFiles(tab, files, how),
    url: (url) => openUrl(tab, url),
    problem: (problem) => refuse(tab, problem),
  });
  bindRunForm(tab.$, () => runPrompt(tab));
  tab.$.close.addEventListener('click', () => closeModel(tab));
  bindTokenHover(tab);
  tab.setState('idle');
  return tab.hooks;
}

const panel = document.getElementById('panel-open');
if (panel) window.__openModel = createOpenModelTab(panel);
