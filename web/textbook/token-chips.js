// The run's tokens as numbered chips; past MAX_CHIPS the rest collapse into one "+ N more" chip,
// which also says when the sentence is over the demo's token limit.
import { el } from '../shared/dom.js';

const MAX_CHIPS = 40; // token chips shown before the rest collapse into one "+ N more"

export function renderTokens(tokens, limit) {
  const shown = tokens.slice(0, tokens.length > MAX_CHIPS ? MAX_CHIPS : tokens.length);
  const chips = shown.map((t, i) => el('span', { class: 'token' }, el('small', { text: String(i + 1) }), t));
  const box = document.getElementById('tokens');
  box.replaceChildren(...chips);
  box.dataset.count = String(tokens.length);
  if (tokens.length > shown.length) {
    const over = tokens.length > limit ? ` — over the demo's limit of ${limit}, so nothing is computed` : '';
    box.append(
      el('span', {
        class: 'token more',
        'data-testid': 'tokens-more',
        text: `+ ${tokens.length - shown.length} more (${tokens.length} tokens${over})`,
      }),
    );
  }
}
