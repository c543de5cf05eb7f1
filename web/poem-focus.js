// The token chips are drawn anew (every frame of a generation, and when one is picked): the chip
// that had the keyboard focus gets it back in the new drawing, so Enter on a chip, or a
// generation arriving, never throws the focus to the page's start.

const CHIPS = '#poem-tokens [data-testid=poem-token]';

/** Runs render() (which redraws the chips) and gives the focus back to the chip of the same index. */
export function keepChipFocus(render) {
  const focused = document.activeElement?.closest?.(CHIPS);
  const index = focused ? focused.dataset.index : null;
  render();
  if (index === null || document.activeElement?.closest?.(CHIPS)) return;
  document.querySelector(`${CHIPS}[data-index="${index}"]`)?.focus({ preventScroll: true });
}
