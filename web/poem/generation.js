// The runs of the model tab: a prompt (or a generation) asked of the model worker as a paced run, its messages folded
// into the run as they arrive, the status line and the Generate/Stop buttons, and the sampling
// changed while it runs. Works on poem.js's state through its context.
import { POEM_LIMITS, generationRequest, poemProblems, readPoemSettings } from './settings.js';
import { addPrompt, addToken, createPoemRun, finishRun, withTemperature } from './run.js';
import { askSteps } from './head-steps-view.js';
import { showErrors } from '../shared/status.js';
import { OPEN } from '../open-model/protocol.js';
import { resetChipStop } from './focus.js';

const $ = (id) => document.getElementById(id);

const ENDINGS = {
  maxNew: 'as many as asked for',
  maxLength: 'the model reads no more tokens',
  poemStart: 'the model ended the poem (its next token would start a new one)',
  stopped: 'stopped',
  edited:
    'stopped, because the prompt was edited; the poem above is what the model had written. Generate continues the new prompt',
  error: 'failed',
};

/** The temperature the candidates are listed at (1 when greedy: the model's own distribution); null when invalid. */
export function listedTemperature(settings) {
  if (settings.greedy) return 1;
  const [lo, hi] = POEM_LIMITS.temperature;
  return settings.temperature >= lo && settings.temperature <= hi ? settings.temperature : null;
}

/** The median of the worker's times per generated token, as text ('' without any). */
function perToken(ms) {
  if (ms.length === 0) return '';
  const sorted = [...ms].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  return ` The worker took ${median < 10 ? median.toFixed(2) : Math.round(median)} ms per character (median).`;
}

function doneText(run, reason) {
  const made = run.n - run.promptLength;
  return `${made} character${made === 1 ? '' : 's'} generated: ${ENDINGS[reason] ?? reason}.${perToken(run.tokenMs)}`;
}

function setStatus(text) {
  $('poem-status').textContent = text;
}

function setBusy(busy) {
  $('poem-stop').disabled = !busy;
  $('poem-generate').textContent = busy ? 'Restart' : 'Generate';
}

/** The run's messages folded into it as they arrive; the status and buttons when it ends. */
function followRun(ctx, job) {
  const { s, test, scheduleDraw } = ctx;
  const { config, vocab } = s.model;
  let run = null;
  return (msg) => {
    if (msg.type === OPEN.pacedPrompt) {
      const { numLayers: nLayers, numHeads: nHeads, numKvHeads: nKvHeads } = config;
      const { capacity, temperature } = job;
      const { kvHeads } = s.model;
      run = addPrompt(
        createPoemRun({ id: job.id, nLayers, nHeads, nKvHeads, kvHeads, capacity, vocab, temperature }),
        msg,
      );
    } else if (msg.type === OPEN.pacedToken) {
      run = addToken(run, msg);
      s.owed = job.id;
    } else {
      // paced-done, or run-failed (the model, or its worker, failed)
      const ended = msg.type === OPEN.runFailed ? 'error' : msg.reason;
      const reason = ended === 'stopped' && s.stopReason === 'edited' ? 'edited' : ended;
      run = run ? finishRun(run, ended, msg.top, msg.logits) : null;
      s.generating = 0;
      s.mode = '';
      s.stopReason = '';
      test.done = reason;
      setBusy(false);
      if (msg.error) showErrors($('poem-error'), [`The model failed — ${msg.error.name}: ${msg.error.message}`]);
      setStatus(run && job.generating ? doneText(run, reason) : '');
    }
    if (!run) return;
    if (s.ui.followLatest) s.ui.query = run.n - 1;
    s.run = run;
    scheduleDraw();
    if (msg.type !== OPEN.pacedToken) askSteps(ctx);
  };
}

/** The form refused: whatever ran stops, nothing is shown. */
function refuse({ s, scheduleDraw }) {
  if (s.generating) s.worker.stop(s.generating);
  s.generating = 0;
  s.run = null;
  setBusy(false);
  setStatus('');
  scheduleDraw();
}

/** Runs the prompt (generating: and continues it), once the form's settings pass the page's checks. */
function begin(ctx, generating) {
  const { s, test } = ctx;
  const settings = readPoemSettings($('poem-controls'));
  const { config, vocab } = s.model;
  const problems = poemProblems(settings, { vocab, maxLen: config.maxPositions }, { generating });
  showErrors($('poem-error'), problems);
  if (problems.length) {
    refuse(ctx);
    return;
  }
  const request = generationRequest(settings, { generating });
  const capacity = Array.from(settings.text).length + 1 + request.maxNew;
  const job = { id: 0, generating, capacity, temperature: listedTemperature(settings) };
  job.id = s.worker.run({ ...request, paced: true }, followRun(ctx, job));
  s.generating = job.id;
  s.mode = generating ? 'generate' : 'prompt';
  s.stopReason = '';
  s.picked = -1;
  resetChipStop();
  test.tokenCounts = [];
  test.done = null;
  setBusy(generating); // a prompt alone is one message: nothing to stop
  setStatus(generating ? 'Generating…' : '');
}

/**
 * The sampling fields changed: the candidates are listed again at once at the new temperature,
 * and a running generation samples so from its next token on (the status says from which).
 */
function samplingChanged({ s, scheduleDraw }) {
  const settings = readPoemSettings($('poem-controls'));
  const temperature = listedTemperature(settings);
  if (temperature === null || !s.model) return;
  if (s.run) {
    s.run = withTemperature(s.run, temperature, s.model.vocab, POEM_LIMITS.topShown);
    scheduleDraw();
  }
  const topKValid = Number.isInteger(settings.topK) && settings.topK >= 0 && settings.topK <= POEM_LIMITS.topK;
  if (s.generating && s.mode === 'generate' && (settings.greedy || topKValid)) {
    s.worker.sampling(s.generating, {
      temperature: settings.greedy ? 0 : temperature,
      topK: settings.greedy ? 0 : settings.topK,
    });
    setStatus(
      `Generating… ${settings.greedy ? 'greedy' : `temperature ${temperature}, top-k ${settings.topK || 'all'}`} from the next character on.`,
    );
  }
}

/** The prompt was edited: a generation in flight stops (and says why) rather than vanish; else the prompt runs. */
function promptEdited(ctx) {
  const { s } = ctx;
  if (s.generating && s.mode === 'generate') {
    s.stopReason = 'edited';
    s.worker.stop(s.generating);
    return;
  }
  begin(ctx, false);
}

/**
 * @param {{ s, test, scheduleDraw() }} ctx   poem.js's state (its worker runs), test hooks and drawing
 * @returns {{ begin(generating: boolean), askSteps(), samplingChanged(), promptEdited() }}
 */
export function createGeneration(ctx) {
  return {
    begin: (generating) => begin(ctx, generating),
    askSteps: () => askSteps(ctx),
    samplingChanged: () => samplingChanged(ctx),
    promptEdited: () => promptEdited(ctx),
  };
}
