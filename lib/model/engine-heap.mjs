// What the model runtime's calls into the engine share about its memory: a HeapScope freed after the
// call, also when it throws, and the error for what cannot fit in WebAssembly memory.
import { HeapScope } from '../../bindings/heap.mjs';

// Sizes travel in 32-bit slots: a session or a call longer than this could never fit in memory anyway.
export const MAX_TOKENS = 2 ** 31;

const mib = (bytes) => (bytes / 1048576).toFixed(1);

export function tooLarge(fn, what, bytes, heapMaxBytes, advice) {
  return new RangeError(
    `${fn}: ${what} is too large for WebAssembly memory: it needs about ${mib(bytes)} MiB and the heap is ` +
      `limited to ${Math.round(heapMaxBytes / 1048576)} MiB${advice ? ` (${advice})` : ''}`,
  );
}

/** body(scope) with a HeapScope freed afterwards, also when body throws. */
export function scoped(M, fn, heapMaxBytes, body) {
  const scope = new HeapScope(M, fn, heapMaxBytes);
  try {
    return body(scope);
  } finally {
    scope.free();
  }
}
