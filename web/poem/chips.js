// The run's token chips as drawn each frame: the focused chip keeps the focus, the lines recited
// from the anthology are underlined and named below, and the opened head's badge is marked.
import { renderPoemTokens } from './view.js';
import { keepChipFocus } from './focus.js';
import { recitedSegments } from './recited.js';

const $ = (id) => document.getElementById(id);

/** The positions of the run that lie in a recited segment. */
const recitedPositions = (segments) =>
  new Set(segments.flatMap(({ start, end }) => Array.from({ length: end - start }, (_, k) => start + k)));

/** The line under the chips: which lines were recited, or that none was. */
function renderRecitedNote(s, r) {
  const note = $('poem-recited');
  const made = r.n - r.promptLength;
  if (!s.recited || made === 0) note.replaceChildren();
  else if (s.segments.length === 0)
    note.textContent = 'None of the lines it wrote is a line of the anthology: this verse is its own.';
  else
    note.replaceChildren(
      `Recited from the anthology (underlined in green): `,
      ...s.segments.flatMap((g, k) => [
        k ? ', ' : '',
        Object.assign(document.createElement('mark'), { textContent: g.text }),
      ]),
      '.',
    );
}

/** The token chips of the run on screen (s.run), with the recited lines and the opened head marked. */
export function renderChips(s) {
  const r = s.run;
  keepChipFocus(() => renderPoemTokens(r, { picked: s.picked, highlight: s.ui.highlight }));
  s.segments = s.recited ? recitedSegments(r.texts, r.promptLength, s.recited) : [];
  const recited = recitedPositions(s.segments);
  for (const chip of document.querySelectorAll('#poem-tokens [data-testid=poem-token]')) {
    const on = recited.has(Number(chip.dataset.index));
    chip.classList.toggle('recited', on);
    if (on && !chip.title) chip.title = 'recited from the anthology';
  }
  renderRecitedNote(s, r);
  $('poem-export-csv').disabled = !s.ui.open;
  for (const b of document.querySelectorAll('[data-testid=head-badge]'))
    b.classList.toggle(
      'open',
      Number(b.dataset.layer) === s.ui.open?.layer && Number(b.dataset.head) === s.ui.open?.head,
    );
}
