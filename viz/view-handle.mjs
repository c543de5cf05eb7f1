// The { update(data), dispose() } every view returns: update checks its data (an object of known
// options, the view not disposed) before the view applies it; dispose runs once.
import { checkKnown, checkOptions } from './checks.mjs';

export function viewHandle(view, known, { apply, teardown }) {
  let disposed = false;
  return {
    update(data) {
      if (disposed) throw new Error(`${view}: update() after dispose()`);
      checkOptions(view, data);
      checkKnown(view, data, known);
      apply(data);
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      teardown();
    },
  };
}
