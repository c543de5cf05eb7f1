// The model tab drawn once a frame, however many tokens arrived in it: the maps, the chips and the
// candidates; and the pace of a generation, whose next token is asked for only once the last one
// is drawn (plus a pause to read it).
import { readPoemSettings } from './settings.js';
import { renderTopTokens } from './view.js';
import { markThumbnails } from './heads.js';
import { renderChips } from './chips.js';

const $ = (id) => document.getElementById(id);

// The pause after a generated token is drawn before the next is asked for: long enough to read
// the tokens arriving one by one (the model itself needs a few milliseconds per token).
const PACE_MS = 60;

export class PoemDrawing {
  /**
   * @param {{ s, view, test, askNext(id: number) }} o   the tab's state, its model view (model-view.js),
   *   window.__poem, and how to ask the worker for generation id's next token
   */
  constructor({ s, view, test, askNext }) {
    Object.assign(this, { s, view, test, askNext });
  }

  /** One drawing per frame, however many tokens arrived in it. */
  schedule() {
    if (!this.s.frame) this.s.frame = requestAnimationFrame(() => this.draw());
  }

  /** Asks for the generation's next token once its last is drawn and the pause is over. */
  paceGeneration() {
    const s = this.s;
    if (!s.owed) return;
    const id = s.owed;
    s.owed = 0;
    setTimeout(() => {
      if (s.generating === id) this.askNext(id);
    }, PACE_MS);
  }

  draw() {
    const s = this.s;
    s.frame = 0;
    this.paceGeneration();
    if (!s.visible) return;
    const r = s.run;
    this.view.render(r, s.ui);
    markThumbnails($('model-grid'), s.heads);
    $('poem-output-section').hidden = !r;
    if (!r) return;
    renderChips(s);
    const settings = readPoemSettings($('poem-controls'));
    renderTopTokens(r, s.picked >= 0 ? s.picked : r.n - (r.n > r.promptLength ? 1 : 0), { greedy: settings.greedy });
    this.test.tokenCounts.push(r.n - r.promptLength);
  }

  /** The maps only (a hover, a cursor, a picked row), and the lit chip. */
  redrawMaps() {
    const s = this.s;
    if (!s.run || !s.visible) return;
    this.view.redraw(s.run, s.ui);
    markThumbnails($('model-grid'), s.heads);
    for (const chip of document.querySelectorAll('#poem-tokens [data-testid=poem-token]')) {
      chip.classList.toggle('lit', Number(chip.dataset.index) === s.ui.highlight);
    }
  }
}
