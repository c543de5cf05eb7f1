// The poem model's form: what it asks for (prompt, how many new characters, greedy or sampled)
// and the page's own checks, in its own words, before the worker sees anything.

export const DEFAULT_PROMPT = '床前明月光，'; // Li Bai, 静夜思 (Quiet Night Thought), first line

export const POEM_LIMITS = { maxNew: 200, temperature: [0.05, 3], topK: 200, topShown: 8 };

/** The form's values: { text, maxNew, greedy, temperature, topK, seed, stopAtPoemStart }. */
export function readPoemSettings(form) {
  const v = (name) => form.elements[name].value;
  return {
    text: v('poem-prompt'),
    maxNew: Number(v('poem-max-new')),
    greedy: v('poem-decoding') === 'greedy',
    temperature: Number(v('poem-temperature')),
    topK: Number(v('poem-top-k')),
    seed: Number(v('poem-seed')),
    stopAtPoemStart: form.elements['poem-stop-at-end'].checked,
  };
}

/** The characters of text the model has never seen, each once, in the order they appear. */
export function unknownCharacters(text, vocab) {
  const known = vocab instanceof Set ? vocab : new Set(vocab);
  const out = [];
  for (const ch of text) if (!known.has(ch) && !out.includes(ch)) out.push(ch);
  return out;
}

const shown = (ch) => (ch === ' ' ? 'space' : ch === '\t' ? 'tab' : `“${ch}”`);

/**
 * The page's objections to settings (empty when they are fine).
 * @param {object} s                 readPoemSettings
 * @param {{ vocab: string[], maxLen: number }} model
 * @param {{ generating: boolean }} [o]   false: only the prompt is fed, the other fields do not matter
 */
export function poemProblems(s, { vocab, maxLen }, { generating = true } = {}) {
  const problems = [];
  const unknown = unknownCharacters(s.text, vocab);
  if (s.text.length === 0) problems.push('Prompt: type a few characters of a poem for the model to continue.');
  if (unknown.length) {
    problems.push(
      `Prompt: the model knows only the ${vocab.length - 2} characters of the Three Hundred Tang Poems it was trained on ` +
        `(simplified Chinese and its punctuation), and not ${unknown.length === 1 ? 'this one' : `these ${unknown.length}`}: ` +
        `${unknown.map(shown).join(' ')}. Remove or replace ${unknown.length === 1 ? 'it' : 'them'}.`,
    );
  }
  const promptTokens = Array.from(s.text).length + 1; // + the poem-start token
  if (promptTokens > maxLen)
    problems.push(`Prompt: the model reads at most ${maxLen - 1} characters; this prompt has ${promptTokens - 1}.`);
  if (!generating) return problems;
  if (!Number.isInteger(s.maxNew) || s.maxNew < 1 || s.maxNew > POEM_LIMITS.maxNew) {
    problems.push(`New characters: a whole number from 1 to ${POEM_LIMITS.maxNew}.`);
  } else if (promptTokens + s.maxNew > maxLen) {
    problems.push(
      `New characters: the model reads at most ${maxLen} tokens in all; with this prompt ask for at most ${Math.max(0, maxLen - promptTokens)}.`,
    );
  }
  if (!s.greedy) {
    const [lo, hi] = POEM_LIMITS.temperature;
    if (!(s.temperature >= lo && s.temperature <= hi)) problems.push(`Temperature: a number from ${lo} to ${hi}.`);
    if (!Number.isInteger(s.topK) || s.topK < 0 || s.topK > POEM_LIMITS.topK)
      problems.push(`Top-k: a whole number from 0 (all characters) to ${POEM_LIMITS.topK}.`);
    if (!Number.isInteger(s.seed)) problems.push('Seed: a whole number.');
  }
  return problems;
}

/** What the worker is asked for; greedy is temperature 0. */
export function generationRequest(s, { generating }) {
  return {
    text: s.text,
    maxNew: generating ? s.maxNew : 0,
    temperature: s.greedy ? 0 : s.temperature,
    topK: s.greedy ? 0 : s.topK,
    seed: s.greedy ? undefined : s.seed,
    stopAtPoemStart: s.stopAtPoemStart,
    topCount: POEM_LIMITS.topShown,
  };
}
