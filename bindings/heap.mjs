// Copies between JavaScript arrays and the WebAssembly heap for one call. Everything a call
// allocates goes through one HeapScope and is freed by scope.free(), also when the call throws,
// so the heap in use returns to where it was.
import { typedLength } from '../lib/values.mjs';

// heapMaxBytes: what the heap may grow to (the module's constants(), from -sMAXIMUM_MEMORY).
export function outOfMemory(fn, bytes, heapMaxBytes) {
  const mib = (bytes / 1048576).toFixed(1);
  return new RangeError(
    `${fn}: the work is too large for WebAssembly memory: it needs about ${mib} MiB (inputs, masks, ` +
      `results and scratch) and the heap is limited to ${Math.round(heapMaxBytes / 1048576)} MiB ` +
      `(use fewer tokens, a smaller batch or needWeights: false)`,
  );
}

/** Bytes a tensor or mask takes once copied into the heap (floats as float32, masks as they are). */
export function heapBytes(data) {
  return typedLength(data) * (data instanceof Uint8Array ? 1 : 4);
}

/** Bytes a piece of a reserved block takes: its size rounded up to malloc's 16-byte alignment. */
export const heapSlot = (bytes) => Math.ceil(Math.max(bytes, 1) / 16) * 16;

export class HeapScope {
  constructor(module, fn, heapMaxBytes) {
    this.module = module;
    this.fn = fn;
    this.heapMaxBytes = heapMaxBytes;
    this.pointers = [];
    this.next = 0; // the free part of the reserved block: [next, end)
    this.end = 0;
  }

  // One malloc for the pieces a call will alloc (sizes by heapSlot): a small call then pays for one
  // allocation, not one per tensor. A piece that does not fit is allocated on its own.
  reserve(bytes) {
    this.next = this.malloc(bytes);
    this.end = this.next + bytes;
  }

  // Bytes, 16-byte aligned. Throws a RangeError when the heap cannot grow that far.
  alloc(bytes) {
    const slot = heapSlot(bytes);
    if (this.next + slot <= this.end) {
      this.next += slot;
      return this.next - slot;
    }
    return this.malloc(bytes);
  }

  malloc(bytes) {
    if (bytes > this.heapMaxBytes) throw outOfMemory(this.fn, bytes, this.heapMaxBytes);
    // Unsigned: the heap may grow to 4 GiB, and an address past 2 GiB comes back as a negative int32.
    const ptr = this.module._malloc(Math.max(bytes, 1)) >>> 0;
    if (ptr === 0) throw outOfMemory(this.fn, bytes, this.heapMaxBytes);
    this.pointers.push(ptr);
    return ptr;
  }

  // One of the checks' own arrays (lib/attention/checks.mjs), copied in: a Float32Array or
  // Float64Array as float32 (set() converts), a Uint8Array as bytes. The count is the array's real
  // length, which for the checks' fixed-length views is the length they checked, or 0 when the user's
  // buffer was detached or shrunk since: that is refused, never copied short.
  copy(name, data) {
    const count = typedLength(data);
    if (count === 0) {
      throw new TypeError(`${this.fn}: ${name}'s buffer was detached or resized while the call read its arguments`);
    }
    const bytes = data instanceof Uint8Array;
    const ptr = this.alloc(count * (bytes ? 1 : 4));
    if (bytes) this.module.HEAPU8.set(data, ptr);
    else this.module.HEAPF32.set(data, ptr >>> 2);
    return ptr;
  }

  // A fresh Float32Array: never a view of the heap, which moves when memory grows.
  read(ptr, count) {
    return this.module.HEAPF32.slice(ptr >>> 2, (ptr >>> 2) + count);
  }

  free() {
    for (const ptr of this.pointers) this.module._free(ptr);
    this.pointers.length = 0;
    this.next = this.end = 0;
  }
}
