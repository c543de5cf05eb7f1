// The runs of the model tab: a prompt (or a generation) asked of the worker, its messages folded
// into the run as they arrive, the status line and the Generate/Stop buttons; and the four steps
// of the opened head, asked for the run on screen. Works on poem.js's state through its context.
import { generationRequest, poemProblems, readPoemSettings } from './poem-settings.js';
import { addPrompt, addToken, createPoemRun, finishRun, stepsOf } from './poem-run.js';
import { renderSteps } from './steps.js';
import { hideTooltip } from './tooltip.js';
import { showErrors } from './status.js';
import { el } from './dom.js';
import { MESSAGE } from './worker-protocol.js';

const $ = (id) => document.getElementById(id);

const ENDINGS = {
  maxNew: 'as many as asked for',
  maxLength: 'the model reads no more tokens',
  poemStart: 'the model ended the poem (its next token would start a new one)',
  stopped: 'stopped',
  error: 'failed',
};

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

/**
 * @param {{ engine, s, test, scheduleDraw() }} ctx   poem.js's engine client, state, test hooks and drawing
 * @returns {{ begin(generating: boolean), askSteps() }}
 */
export function createGeneration({ engine, s, test, scheduleDraw }) {
  function askSteps() {
    const r = s.run;
    const open = s.ui.open;
    const box = $('head-steps');
    if (!r || !open || !s.visible || r.n === 0) return;
    const query = Math.min(s.ui.query, r.n - 1);
    const ask = ++s.stepsAsked;
    engine.model.steps({ run: r.id, layer: open.layer, head: open.head, query }).then(
      (steps) => {
        if (ask !== s.stepsAsked || s.run?.id !== r.id) return;
        renderSteps(box, stepsOf(s.run, open, query, steps));
        test.stepsShown = { layer: open.layer, head: open.head, query };
      },
      (e) => {
        if (ask !== s.stepsAsked || s.run?.id !== r.id) return;
        box.replaceChildren(
          el('p', { class: 'error inline', text: `The four steps could not be computed — ${e.name}: ${e.message}` }),
        );
      },
    );
  }

  /** The form refused: whatever ran stops, nothing is shown. */
  function refuse() {
    if (s.generating) engine.model.stop(s.generating);
    s.generating = 0;
    s.run = null;
    setBusy(false);
    setStatus('');
    hideTooltip($('tooltip'));
    scheduleDraw();
  }

  function begin(generating) {
    const settings = readPoemSettings($('poem-controls'));
    const { config, vocab } = s.model;
    const problems = poemProblems(settings, { vocab, maxLen: config.maxPositions }, { generating });
    showErrors($('poem-error'), problems);
    if (problems.length) {
      refuse();
      return;
    }
    const request = generationRequest(settings, { generating });
    const capacity = Array.from(settings.text).length + 1 + request.maxNew;
    let run = null;
    const id = engine.model.generate(request, (msg) => {
      if (msg.type === MESSAGE.modelPrompt) {
        run = addPrompt(
          createPoemRun({
            id,
            nLayers: config.numLayers,
            nHeads: config.numHeads,
            nKvHeads: config.numKvHeads,
            capacity,
          }),
          msg,
        );
      } else if (msg.type === MESSAGE.modelToken) {
        run = addToken(run, msg);
        s.owed = id;
      } else {
        run = run ? finishRun(run, msg.reason, msg.top) : null;
        s.generating = 0;
        test.done = msg.reason;
        setBusy(false);
        if (msg.error) showErrors($('poem-error'), [`The model failed — ${msg.error.name}: ${msg.error.message}`]);
        setStatus(run && generating ? doneText(run, msg.reason) : '');
      }
      if (!run) return;
      if (s.ui.followLatest) s.ui.query = run.n - 1;
      s.run = run;
      scheduleDraw();
      if (msg.type === MESSAGE.modelPrompt || msg.type === MESSAGE.modelDone) askSteps();
    });
    s.generating = id;
    s.picked = -1;
    test.tokenCounts = [];
    test.done = null;
    setBusy(generating); // a prompt alone is one message: nothing to stop
    setStatus(generating ? 'Generating…' : '');
  }

  return { begin, askSteps };
}
