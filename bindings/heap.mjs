// Copies between JavaScript arrays and the WebAssembly heap for one call. Everything a call
// allocates goes through one HeapScope and is freed by scope.free(), also when the call throws,
// so the heap in use returns to where it was.

export const MAX_MEMORY_BYTES = 2 * 1024 * 1024 * 1024; // -sMAXIMUM_MEMORY in CMakeLists.txt

export function outOfMemory(fn, bytes) {
  const mib = (bytes / 1048576).toFixed(1);
  return new RangeError(
    `${fn}: the work is too large for WebAssembly memory: it needs about ${mib} MiB and the heap ` +
      `is limited to ${MAX_MEMORY_BYTES / 1048576} MiB (use fewer tokens, a smaller batch or needWeights: false)`,
  );
}

export class HeapScope {
  constructor(module, fn) {
    this.module = module;
    this.fn = fn;
    this.pointers = [];
  }

  // Bytes, 16-byte aligned by malloc. Throws a RangeError when the heap cannot grow that far.
  alloc(bytes) {
    if (bytes > MAX_MEMORY_BYTES) throw outOfMemory(this.fn, bytes);
    const ptr = this.module._malloc(Math.max(bytes, 1));
    if (ptr === 0) throw outOfMemory(this.fn, bytes);
    this.pointers.push(ptr);
    return ptr;
  }

  // A Float32Array, Float64Array or number[] copied in as float32 (set() converts).
  floats(data) {
    const ptr = this.alloc(data.length * 4);
    this.module.HEAPF32.set(data, ptr >>> 2);
    return ptr;
  }

  bytes(data) {
    const ptr = this.alloc(data.length);
    this.module.HEAPU8.set(data, ptr);
    return ptr;
  }

  // A fresh Float32Array: never a view of the heap, which moves when memory grows.
  read(ptr, count) {
    return this.module.HEAPF32.slice(ptr >>> 2, (ptr >>> 2) + count);
  }

  free() {
    for (const ptr of this.pointers) this.module._free(ptr);
    this.pointers.length = 0;
  }
}
