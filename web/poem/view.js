// The poem as the model writes it: one chip per token (the prompt's, then each generated one,
// lines broken where the model wrote a line break), and the most probable next characters of
// one step as a ranked list with bars. Draws what it is given; knows nothing of the engine.
import { tokenLabel, topAt } from './run.js';
import { el } from '../shared/dom.js';

const $ = (id) => document.getElementById(id);

const percent = (p) => `${(100 * p).toFixed(p >= 0.1 ? 1 : 2)} %`;

/** Chips of the run's tokens; `picked` is outlined, `highlight` (a hovered row) shaded. */
export function renderPoemTokens(run, { picked, highlight }) {
  const box = $('poem-tokens');
  const chips = [];
  run.texts.forEach((text, i) => {
    const generated = i >= run.promptLength;
    chips.push(
      el(
        'button',
        {
          type: 'button',
          class: `token${generated ? ' generated' : ''}${i === picked ? ' picked' : ''}${i === highlight ? ' lit' : ''}`,
          'data-testid': 'poem-token',
          'data-index': String(i),
          'aria-pressed': String(i === picked),
          'aria-label': `${generated ? 'generated' : 'prompt'} token ${i + 1}: ${text === '\n' ? 'line break' : tokenLabel(text)}`,
        },
        el('small', { text: String(i + 1) }),
        tokenLabel(text),
      ),
    );
    if (text === '\n') chips.push(el('span', { class: 'line-break', 'aria-hidden': 'true' }));
  });
  box.replaceChildren(...chips);
  box.dataset.count = String(run.n);
  box.dataset.generated = String(run.n - run.promptLength);
}

/**
 * The top next tokens at position i of the run: the distribution its token was drawn from (or,
 * past the last token, the next one's).
 */
export function renderTopTokens(run, i, { greedy }) {
  const list = $('poem-top');
  const top = topAt(run, i);
  const caption = $('poem-top-caption');
  if (!top) {
    list.replaceChildren();
    caption.textContent =
      'A prompt token: it was typed, not drawn. Pick a generated token (or the last one) to see what the model considered.';
    return;
  }
  const context = run.texts
    .slice(Math.max(0, i - 6), i)
    .map(tokenLabel)
    .join('');
  const drawn = i < run.n ? run.ids[i] : -1;
  caption.textContent =
    i < run.n
      ? `Step ${i - run.promptLength + 1}: after “…${context}” the model's most probable next characters; “${tokenLabel(run.texts[i])}” was ${greedy ? 'taken (greedy: the most probable)' : 'drawn'}.`
      : `After “…${context}” the model's most probable next characters.`;
  list.dataset.position = String(i);
  list.replaceChildren(
    ...top.map((t) =>
      el(
        'li',
        {
          class: t.id === drawn ? 'chosen' : '',
          'data-testid': 'poem-top-item',
          'data-p': String(t.prob),
          'data-id': String(t.id),
        },
        el('span', { class: 'tok', text: tokenLabel(t.text) }),
        el('span', { class: 'bar', style: `width: ${Math.max(1, Math.round(100 * t.prob))}%`, 'aria-hidden': 'true' }),
        el('span', { class: 'p', text: `${percent(t.prob)}${t.id === drawn ? ' ← chosen' : ''}` }),
      ),
    ),
  );
}
