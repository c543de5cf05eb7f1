// The worked example's four steps for one query token, every number as the engine returned it:
//   1. project: q = x·W_Qᵀ, k = x·W_Kᵀ, v = x·W_Vᵀ      (strips of the vectors)
//   2. score:   q·kⱼ against every key                  (raw, unscaled)
//   3. scale:   × 1/√d_k, masked keys set to −∞
//   4. softmax → weights, then the weighted sum Σⱼ wⱼ·vⱼ  (the output row)
// This module only lays the numbers out; it computes nothing but colour ranges.
// The average of several heads has no Q, K, V or scores of its own: for it (s.average) the
// view says so and shows the averaged weights only.
import { el } from './dom.js';
import { formatNumber } from './number-format.js';
import { numberRow, StepParts } from './step-parts.js';
import { qkBlock, weightedValuesBlock } from './steps-detail.js';
import { bindStepPlayer } from './steps-play.js';

export { formatNumber };

// The player bound to each steps container, disposed (its timer) when the container is drawn again.
const players = new WeakMap();

/**
 * @param {HTMLElement} container   emptied and filled
 * @param {object} s
 * @param {string} s.source         e.g. 'single head', 'head 3 of 8' or 'average of the 8 heads'
 * @param {string[]} s.tokens
 * @param {number} s.query          query index
 * @param {[number, number]} s.domain   colour scale of the weights (that of the view they come from)
 * @param {Float32Array} s.weights  [n]         softmax of the scaled scores (or the heads' average)
 * @param {(j: number) => boolean} s.masked
 * @param {boolean} s.causal
 * @param {boolean} [s.average]     the heads' average: no q, K, V, scores or output exist
 * @param {number} [s.numHeads]     with s.average
 * @param {number} s.dK             (not with s.average, nor the rest)
 * @param {number} s.dV
 * @param {number} s.scale          the scale the engine applied (1/√d_k unless given)
 * @param {Float32Array} s.q        [dK]        q of the query
 * @param {Float32Array} s.K        [n, dK]     keys
 * @param {Float32Array} s.V        [n, dV]     values
 * @param {Float32Array} s.scores   [n]         raw q·kⱼ
 * @param {Float32Array} s.scaledScores [n]     scaled, −∞ where masked
 * @param {Float32Array} s.output   [dV]        Σⱼ wⱼ·vⱼ
 */
export function renderSteps(container, s) {
  const width = Math.max(240, Math.min(720, container.clientWidth || 560));
  players.get(container)?.dispose();
  players.delete(container);
  container.replaceChildren();
  container.dataset.query = String(s.query);
  container.dataset.source = s.source;
  const parts = new StepParts(s, width);
  if (s.average) {
    renderAverage(container, parts);
    return;
  }
  const player = renderPlayer(container, parts);
  container.append(projectStep(parts), scoreStep(parts), scaleStep(parts), softmaxStep(parts));
  players.set(container, bindStepPlayer(container, player));
}

/** The heads' average: what it lacks, and its weights. */
function renderAverage(container, parts) {
  const { s, queryToken } = parts;
  container.append(
    el(
      'p',
      { class: 'steps-intro', 'data-testid': 'steps-average' },
      `Query token “${queryToken}” (position ${s.query + 1}) in the ${s.source}. The average has no single Q, K or V: ` +
        `each head has its own, and the average is taken over the heads' softmax weights. So only the averaged weights are shown; ` +
        'pick a head in “in” to see its four steps.',
    ),
    parts.section(
      0,
      'Averaged weights',
      `The mean over the ${s.numHeads} heads of each head's weight for this query and key; rows still sum to 1.`,
      parts.table(numberRow('mean weight', s.weights, s.masked, 'row-weights')),
      parts.weightBars(),
    ),
  );
}

/** The introduction and the player's buttons and status line → { play, next, all, status }. */
function renderPlayer(container, { s, queryToken }) {
  const play = el('button', { type: 'button', 'data-testid': 'steps-play' }, 'Play the four steps');
  const next = el('button', { type: 'button', 'data-testid': 'steps-next' }, 'Next step');
  const all = el('button', { type: 'button', 'data-testid': 'steps-all' }, 'Show all');
  const status = el('p', { class: 'steps-status', 'data-testid': 'steps-status', 'aria-live': 'polite' });
  container.append(
    el(
      'p',
      { class: 'steps-intro' },
      `Query token “${queryToken}” (position ${s.query + 1}) in the ${s.source}. Every number below was returned by the WebAssembly engine (returnIntermediates), except the q∘k products and the weighted value rows, which the page multiplies out from the engine's q, K, V and weights to show where a score and the output come from.`,
    ),
    el(
      'div',
      { class: 'buttons steps-player', role: 'group', 'aria-label': 'step through the four steps' },
      play,
      next,
      all,
    ),
    status,
  );
  return { play, next, all, status };
}

function projectStep(parts) {
  const { s, queryToken: qTok, keyLabels } = parts;
  return parts.section(
    1,
    'Project to Q, K, V',
    `The embedding of each token is multiplied by three learned matrices. The query “${qTok}” asks with q (${s.dK} numbers); every token offers a key k to be matched and a value v to be passed on. Blue is negative, red positive; point at a strip or focus it for a value.`,
    parts.stripRow(`q (“${qTok}”)`, s.q, 1, s.dK, [qTok], 'step-q'),
    parts.stripRow('K (one row per key)', s.K, s.tokens.length, s.dK, keyLabels, 'step-k'),
    parts.stripRow('V (one row per key)', s.V, s.tokens.length, s.dV, keyLabels, 'step-v'),
  );
}

function scoreStep(parts) {
  const { s, queryToken } = parts;
  return parts.section(
    2,
    'Score every key',
    `The dot product q·kⱼ measures how well each key matches the query: large and positive means “relevant”.`,
    el('div', { 'data-stage': '1' }, qkBlock(s, queryToken)),
    parts.table(
      numberRow('q·k (raw score)', s.scores, s.masked, 'row-scores', 1),
      numberRow(`× ${formatNumber(s.scale, 4)} (scaled)`, s.scaledScores, s.masked, 'row-scaled', 2),
      numberRow('softmax (weight)', s.weights, s.masked, 'row-weights', 3),
    ),
  );
}

function scaleStep(parts) {
  const s = parts.s;
  return parts.section(
    3,
    'Scale (and mask)',
    `Scores are multiplied by 1/√d_k = ${formatNumber(s.scale, 4)} so their spread does not grow with the dimension (which would make softmax too peaked).${
      s.causal ? ' With causal on, keys after the query are masked: −∞, so softmax gives them weight 0.' : ''
    } See the second row of the table.`,
  );
}

function softmaxStep(parts) {
  const { s, queryToken: qTok } = parts;
  return parts.section(
    4,
    'Softmax, then the weighted sum',
    `Softmax turns the scaled scores into weights ≥ 0 that sum to 1 (third row, bars, on the colour scale of the heatmap they come from). The output for “${qTok}” is Σⱼ wⱼ·vⱼ: a blend of the values, mostly of the keys it attends to.`,
    parts.weightBars(),
    el('div', { 'data-stage': '4' }, weightedValuesBlock(s)),
    el('div', { 'data-stage': '4' }, parts.stripRow(`output (“${qTok}”)`, s.output, 1, s.dV, [qTok], 'step-output')),
  );
}
