// The token chips are drawn anew (every frame of a generation, and when one is picked): the chip
// that had the keyboard focus gets it back in the new drawing, so Enter on a chip, or a
// generation arriving, never throws the focus to the page's start. The chips are one Tab stop
// (a roving tabindex: the arrow keys, Home and End move between them), so the maps after a
// 200-token poem are a few Tab presses away, not 200.

const CHIPS = '#poem-tokens [data-testid=poem-token]';

let stop = -1; // the chip that is the Tab stop (-1: the picked one, else the first)

/** Makes chip `index` the one Tab stop of the chips (the others leave the Tab order). */
function setStop(chips, index) {
  for (const chip of chips) chip.tabIndex = Number(chip.dataset.index) === index ? 0 : -1;
}

/**
 * Runs render() (which redraws the chips), keeps one chip in the Tab order and gives the focus back
 * to the chip of the same index.
 */
export function keepChipFocus(render) {
  const focused = document.activeElement?.closest?.(CHIPS);
  const index = focused ? Number(focused.dataset.index) : null;
  render();
  const chips = Array.from(document.querySelectorAll(CHIPS));
  if (chips.length === 0) return;
  const picked = chips.find((c) => c.getAttribute('aria-pressed') === 'true');
  const wanted = index ?? (stop >= 0 && stop < chips.length ? stop : Number((picked ?? chips[0]).dataset.index));
  setStop(chips, wanted);
  if (index === null || document.activeElement?.closest?.(CHIPS)) return;
  document.querySelector(`${CHIPS}[data-index="${index}"]`)?.focus({ preventScroll: true });
}

const MOVES = { ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1 };

/** The chips' container takes the arrow keys, Home and End: the focus (and the Tab stop) moves. */
export function bindChipKeys(box) {
  box.setAttribute('role', 'toolbar');
  box.setAttribute('aria-label', 'tokens of the poem: arrow keys move, Enter picks');
  box.addEventListener('keydown', (e) => {
    const chip = e.target.closest?.(CHIPS);
    if (!chip) return;
    const chips = Array.from(box.querySelectorAll(CHIPS));
    const at = chips.indexOf(chip);
    let to;
    if (e.key in MOVES) to = at + MOVES[e.key];
    else if (e.key === 'Home') to = 0;
    else if (e.key === 'End') to = chips.length - 1;
    else return;
    e.preventDefault();
    const target = chips[Math.max(0, Math.min(chips.length - 1, to))];
    stop = Number(target.dataset.index);
    setStop(chips, stop);
    target.focus();
  });
}

/** A new run: the Tab stop goes back to the picked chip, or the first. */
export function resetChipStop() {
  stop = -1;
}
