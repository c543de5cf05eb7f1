// One "Open a model" tab's state: its nodes, views and worker, the model opened and the run shown,
// with the moves every flow shares (the tab's state, the error lines, the memory line, emptying
// the model's section). The flows that change it: load-flow.js, run-flow.js, close-flow.js.
import { showErrors } from '../shared/status.js';
import { startOpenModelWorker } from './client.js';
import { createTestHooks } from './hooks.js';
import { RunRedraw } from './redraw.js';
import { createOpenModelViews } from './views.js';
import { memoryText } from './words.js';

/** ?threads=1 (or another count, or auto, the default), as the rest of the page reads it. */
function requestedThreads() {
  const requested = new URLSearchParams(location.search).get('threads');
  return requested === null || requested === 'auto' ? 'auto' : Number(requested);
}

export class OpenModelTab {
  /**
   * @param {HTMLElement} panel   the tab's panel
   * @param {object} $   its nodes by data-testid, without the om- prefix (panel.js)
   */
  constructor(panel, $) {
    this.panel = panel;
    this.$ = $;
    this.hooks = createTestHooks(this);
    this.views = createOpenModelViews(
      { modelView: $['model-view'], heatmap: $.heatmap, headView: $['head-view'], title: $['head-title'] },
      (pick) => {
        this.hooks.pick = pick;
      },
    );
    this.redraw = new RunRedraw(this);
    this.client = null; // a Promise of the worker's client
    this.cancel = null; // cancels the load in flight
    // counts loads, refusals and closes: what an older one still answers is not shown
    this.loadId = 0;
    this.model = null; // the worker's answer for the opened model: { config, files, hasTokenizer, … }
    this.fileBytes = null; // the given files' size (null for an address: the worker's list counts)
    this.run = null;
    this.runId = 0;
  }

  /** The worker's client, started on first use (and again after it failed to start). */
  worker() {
    if (!this.client) {
      this.client = startOpenModelWorker({ threads: requestedThreads() });
      this.client.catch(() => {
        this.client = null; // the next attempt starts a new worker
      });
    }
    return this.client;
  }

  setState(state) {
    this.hooks.state = state;
    this.panel.dataset.state = state;
    // something is open, or on its way: closing it means something
    this.$.close.disabled = !(state === 'starting' || state === 'loading' || state === 'ready');
    if (state === 'ready' || state === 'failed' || state === 'cancelled') this.hooks.loads++;
  }

  /** The tab's error box ('' empties it). */
  showError(text) {
    this.hooks.error = text || null;
    showErrors(this.$.error, text ? [text] : []);
  }

  /** The run's error box (null empties it). */
  showRunError(text) {
    this.hooks.runError = text || null;
    showErrors(this.$['run-error'], text ? [text] : []);
  }

  /** The memory line for attn.memory() as the worker last measured it. */
  showMemory(memory, fileBytes, kvDtype) {
    this.hooks.memory = memory;
    this.$.memory.textContent = memoryText(memory, fileBytes, kvDtype);
  }

  /** The opened model's files' size: as given, else as the worker read them. */
  modelBytes() {
    return this.fileBytes ?? this.model.files.reduce((a, f) => a + f.bytes, 0);
  }

  /** Forgets the model and its run: the model's section and views empty and hidden. */
  resetModel() {
    const { $ } = this;
    this.views.clear();
    this.model = null;
    this.run = null;
    this.runId++; // what a run of the old model still sends is not drawn
    this.redraw.forget();
    this.hooks.config = null;
    this.showRunError(null);
    $.model.hidden = true;
    $.views.hidden = true;
    // the next model's section must not show this one's tokens before its own run is drawn
    $.tokens.replaceChildren();
    $.output.textContent = '';
    $.output.hidden = true;
    $.predictions.replaceChildren();
    $.predictions.hidden = true;
    $['run-status'].textContent = '';
    $.stop.disabled = true;
    $['kv-dtype'].disabled = false;
    delete this.panel.dataset.drawn;
  }
}
