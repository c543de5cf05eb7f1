// A prompt run on the opened model: the form read and checked, the request sent to the worker,
// and its messages (the prompt's or encoding's rows, each new token, the end, a failure) turned
// into the tab's run, its status line and memory line, and a redraw.
import { OPEN } from './protocol.js';
import { readRunForm } from './prompt.js';
import { addPrompt, addToken, createRun, finishRun } from './run.js';
import { endText, runErrorText } from './words.js';

/** What one request's messages make: the run, once its prompt is in. */
class RunStream {
  constructor(tab, { request, runId, config }) {
    this.tab = tab;
    this.request = request;
    this.runId = runId;
    this.config = config;
    this.run = null;
  }

  receive(msg) {
    const { tab, config: c } = this;
    if (this.runId !== tab.runId) return; // a newer run, or another model
    if (msg.type === OPEN.runFailed) {
      this.failed(msg.error);
      return;
    }
    if (msg.type === OPEN.prompt || msg.type === OPEN.encoded) this.start(msg);
    else if (msg.type === OPEN.token) addToken(this.run, msg);
    else if (msg.type === OPEN.done) finishRun(this.run, msg);
    if (msg.memory) tab.showMemory(msg.memory, tab.modelBytes(), c.causal ? this.request.kvDtype : null);
    if (this.run.done) this.ended();
    tab.redraw.schedule();
  }

  /** The prompt's rows (a decoder's) or the whole encoding (an encoder's, which ends it). */
  start(msg) {
    const c = this.config;
    const capacity = c.causal ? Math.min(c.maxPositions, msg.ids.length + this.request.maxNew) : msg.ids.length;
    this.run = createRun({ id: this.runId, numLayers: c.numLayers, numHeads: c.numHeads, capacity });
    addPrompt(this.run, msg);
    this.tab.run = this.run;
    if (msg.type === OPEN.encoded) {
      finishRun(this.run, { reason: 'encoded', ms: msg.ms, predictions: msg.predictions });
    }
  }

  ended() {
    const { run } = this;
    this.tab.$.stop.disabled = true;
    this.tab.$['run-status'].textContent = this.config.causal
      ? endText(run.reason, run.ids.length - run.promptLength, run.ms)
      : `${run.ids.length} tokens encoded in ${run.ms.toFixed(0)} ms in the worker.`;
  }

  failed(error) {
    this.tab.$.stop.disabled = true;
    this.tab.$['run-status'].textContent = '';
    this.tab.showRunError(runErrorText(error));
  }
}

/** Runs the form's prompt on the opened model (nothing when none is open). */
export async function runPrompt(tab) {
  if (!tab.model) return;
  const { $ } = tab;
  const asked = readRunForm($, tab.model);
  tab.showRunError(asked.problem ?? null);
  if (asked.problem) return;
  const worker = await tab.worker();
  const config = tab.model.config;
  const stream = new RunStream(tab, { request: asked.request, runId: ++tab.runId, config });
  $['run-status'].textContent = config.causal ? 'Generating…' : 'Encoding…';
  $.stop.disabled = !config.causal;
  const id = worker.run(asked.request, (msg) => stream.receive(msg));
  $.stop.onclick = () => worker.stop(id);
}
