// The page's settings: read from the form, and checked with the page's own labels before
// anything is sent to the engine (the engine checks again, in its own words).
// Knows nothing of the engine or of the views.

export const LIMITS = { dModel: 1024, heads: 64, tokens: 128 };

function numberField(form, name) {
  const raw = form.elements[name].value.trim();
  return raw === '' ? NaN : Number(raw);
}

/** The controls' values as plain data. */
export function readSettings(form) {
  return {
    text: form.elements.text.value,
    mode: form.elements.mode.value,
    dModel: numberField(form, 'dModel'),
    numHeads: numberField(form, 'heads'),
    isCausal: form.elements.causal.checked,
    seed: numberField(form, 'seed'),
    preset: form.elements.preset.value,
  };
}

/** Head counts the demo can draw for d_model: divisors of d_model up to LIMITS.heads. */
export function validHeadCounts(dModel) {
  if (!Number.isInteger(dModel) || dModel < 1) return [];
  const out = [];
  for (let h = 1; h <= Math.min(dModel, LIMITS.heads); h++) if (dModel % h === 0) out.push(h);
  return out;
}

const shown = (v) => (Number.isNaN(v) ? 'nothing' : String(v));

/**
 * Problems the page refuses before computing, in the page's words (its labels: d_model,
 * heads, seed, Sentence). An empty list means the engine can be asked.
 */
export function settingsProblems(s, tokens) {
  const out = [];
  if (tokens.length === 0) out.push('Sentence: type a sentence; there are no tokens to attend over.');
  if (tokens.length > LIMITS.tokens) {
    out.push(
      `Sentence: the demo shows at most ${LIMITS.tokens} tokens; this one has ${tokens.length}. Shorten it (or switch Tokens to “words”).`,
    );
  }
  const dModelOk = Number.isInteger(s.dModel) && s.dModel >= 1 && s.dModel <= LIMITS.dModel;
  if (!dModelOk)
    out.push(`d_model must be a whole number from 1 to ${LIMITS.dModel} in the demo, got ${shown(s.dModel)}.`);
  if (!Number.isInteger(s.numHeads) || s.numHeads < 1 || s.numHeads > LIMITS.heads) {
    out.push(`heads must be a whole number from 1 to ${LIMITS.heads} in the demo, got ${shown(s.numHeads)}.`);
  } else if (dModelOk && s.dModel % s.numHeads !== 0) {
    out.push(
      `heads = ${s.numHeads} does not divide d_model = ${s.dModel}: every head gets d_model ÷ heads dimensions. ` +
        `For d_model = ${s.dModel} choose heads from: ${validHeadCounts(s.dModel).join(', ')}.`,
    );
  }
  if (!Number.isInteger(s.seed)) out.push(`seed must be a whole number, got ${shown(s.seed)}.`);
  return out;
}
