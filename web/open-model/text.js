// A run's text on the tab: one chip per token (its id and label; the new ones tinted), a decoder's
// continuation, and an encoder's masked-LM predictions per position.
import { el } from '../shared/dom.js';

function chips(run) {
  return run.labels.map((label, i) =>
    el(
      'span',
      {
        class: i < run.promptLength ? 'token' : 'token generated',
        'data-testid': 'om-token',
        'data-id': run.ids[i],
        'data-position': i,
      },
      // the id beside the text (without a tokenizer the label is the id itself)
      ...(label === `#${run.ids[i]}` ? [] : [el('small', { text: String(run.ids[i]) })]),
      label,
    ),
  );
}

function predictions(run) {
  return [
    el('h3', { text: 'What the masked-LM head puts at each position (its best three)' }),
    el(
      'ol',
      { class: 'om-predictions' },
      ...run.predictions.map((best, i) =>
        el(
          'li',
          { 'data-testid': 'om-prediction', 'data-id': best[0].id },
          el('b', { text: run.labels[i] }),
          ' → ',
          best.map((b) => `${b.label} ${(100 * b.prob).toFixed(1)} %`).join(' · '),
        ),
      ),
    ),
  ];
}

/** Draws the run's tokens, continuation (a decoder with a tokenizer) and predictions (an encoder's head). */
export function drawRunText($, run, causal) {
  $.tokens.replaceChildren(...chips(run));
  const continuation = run.text ?? (run.pieces.every((p) => p !== null) ? run.pieces.join('') : null);
  $.output.hidden = !(causal && continuation !== null);
  $.output.textContent = continuation === null ? '' : `Continuation: ${continuation}`;
  $.predictions.hidden = !run.predictions;
  $.predictions.replaceChildren(...(run.predictions ? predictions(run) : []));
}
