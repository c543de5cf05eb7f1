// Draws the tab's run as it streams in: the text at the next frame, the maps at most every
// MAPS_EVERY_MS and never more than MAPS_SHARE of the time, so a big model's views leave the
// page time to answer. panel.dataset.drawn says which finished run the maps show.
import { shownAttention } from './run.js';
import { drawRunText } from './text.js';
import { VIZ_URL } from './views.js';

// A model of 30 layers × 9 heads takes the views most of a second to redraw at 100 tokens, which
// every 200 ms would leave the page no time to answer.
const MAPS_EVERY_MS = 200;
const MAPS_SHARE = 0.2;

export class RunRedraw {
  /** @param {import('./tab.js').OpenModelTab} tab */
  constructor(tab) {
    this.tab = tab;
    this.frame = 0; // the animation frame asked for, 0 when none
    this.mapsAt = 0; // when the maps were last drawn
    this.mapsGap = MAPS_EVERY_MS;
    this.textVersion = null; // the run and length whose text is drawn
  }

  /** The drawn text belongs to no run any more (the model was reset). */
  forget() {
    this.textVersion = null;
  }

  /** Draws at the next frame (once, however often it is asked before then). */
  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  draw() {
    const { run } = this.tab;
    if (!run) return;
    // the text only when it changed: rebuilding the chips makes the browser lay the page out again
    const version = `${run.id}:${run.ids.length}:${run.done}`;
    if (version !== this.textVersion) drawRunText(this.tab.$, run, this.tab.model.config.causal);
    this.textVersion = version;
    const now = performance.now();
    if (!run.done && now - this.mapsAt < this.mapsGap) {
      this.schedule();
      return;
    }
    this.mapsAt = now;
    this.drawMaps(run);
  }

  drawMaps(run) {
    const { tab } = this;
    const shown = shownAttention(run);
    const runId = tab.runId;
    tab.$.views.hidden = shown.n === 0; // shown before drawing: the views fit the width they are given
    tab.views.draw(shown, tab.model.config).then(
      (ms) => {
        this.mapsGap = Math.max(MAPS_EVERY_MS, ms / MAPS_SHARE);
        if (runId !== tab.runId) return;
        tab.panel.dataset.drawn = String(run.done ? run.id : 0);
      },
      (e) => {
        tab.showRunError(
          `The attention views (wasm-attention/viz) could not be loaded from ${VIZ_URL.pathname} — ${e.name}: ${e.message}.`,
        );
      },
    );
  }
}
