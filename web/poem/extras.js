// What the model tab reads beside the model and offers beyond it: heads.json (the named heads'
// badges and the tour) and recited.json (the anthology's lines), and the exports' buttons.
import { readPoemSettings } from './settings.js';
import { readHeads, renderHeadBadges } from './heads.js';
import { readRecited } from './recited.js';
import { saveAttentionJSON, saveHeadCSV } from './export.js';

const $ = (id) => document.getElementById(id);

/**
 * heads.json and recited.json from the model's folder, into the state; either may be missing.
 * @param {URL} modelUrl   the model's folder
 * @param {object} s   the tab's state (its model is loaded)
 * @param {(layer: number, head: number) => void} openHead   a badge clicked
 */
export async function loadExtras(modelUrl, s, openHead) {
  const get = async (name) => {
    const res = await fetch(new URL(name, modelUrl));
    if (!res.ok) throw new Error(`${name} answered HTTP ${res.status}`);
    return res.json();
  };
  const [heads, recited] = await Promise.allSettled([get('heads.json'), get('recited.json')]);
  if (heads.status === 'fulfilled') {
    s.heads = readHeads(heads.value, s.model.config);
    renderHeadBadges($('poem-head-badges'), s.heads, openHead);
    $('poem-heads-section').hidden = s.heads.length === 0;
  }
  if (recited.status === 'fulfilled') s.recited = readRecited(recited.value);
}

/** The export buttons: the run's attention as JSON, the opened head's map as CSV. */
export function bindExports(s) {
  $('poem-export-json').addEventListener('click', () => {
    if (s.run)
      saveAttentionJSON(s.run, { config: { ...s.model.config }, settings: readPoemSettings($('poem-controls')) });
  });
  $('poem-export-csv').addEventListener('click', () => {
    if (s.run && s.ui.open) saveHeadCSV(s.run, s.ui.open.layer, s.ui.open.head);
  });
}
