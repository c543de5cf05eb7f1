// KV caches of prepared layers: memory for maxLength tokens of K and V, reserved once, and the
// cache object users hold (length, truncate, dispose).
import * as calls from '../../bindings/attention-calls.mjs';
import { describe, Checker } from './checks.mjs';
import { MAX_POSITION } from './forward-args.mjs';
import { kvDtypeOf } from './storage-dtypes.mjs';

export function cacheAlive(cacheRecord, fn) {
  if (cacheRecord.handle !== 0) return;
  const why = cacheRecord.engineDisposed ? ' (its engine was disposed)' : '';
  throw new Error(`${fn}: this KV cache was disposed${why}; create a new one with layer.createKvCache`);
}

// engine: { M, wire, liveCaches, caches } (see api.mjs); layerRecord: the layer's { handle }.
export function createKvCache(engine, fn, layerRecord, layer, args) {
  const c = new Checker(fn, args, new Set(['maxLength', 'batch', 'dtype']));
  const maxLength = c.size('maxLength');
  const batch = c.size('batch', 1);
  const dtype = kvDtypeOf(c, 'dtype');
  if (layer.kIn !== layer.qIn || layer.vIn !== layer.qIn) {
    throw c.rangeError(
      'layer',
      `one with kdim = vdim = embedDim = ${layer.qIn} for a KV cache (K and V come from the query)`,
      `kdim = ${layer.kIn}, vdim = ${layer.vIn}`,
    );
  }
  if (maxLength > MAX_POSITION) throw c.rangeError('maxLength', `at most 2^31 = ${MAX_POSITION}`, maxLength);
  // Staged as a 32-bit integer: a larger batch would wrap (and could never fit in memory anyway).
  if (batch > MAX_POSITION) throw c.rangeError('batch', `at most 2^31 = ${MAX_POSITION}`, batch);
  if (layerRecord.handle === 0 || engine.M === null) throw new Error(`${fn}: the layer was disposed`);
  const made = calls.createKvCache(engine.wire, fn, layer, layerRecord.handle, { batch, maxLength, dtype });
  const cacheRecord = { handle: made.handle, layer: layerRecord, batch, maxLength, dtype, engineDisposed: false };
  engine.liveCaches.add(cacheRecord);
  const cache = cacheObject(engine, `${fn}()`, cacheRecord);
  engine.caches.set(cache, cacheRecord);
  cacheRecord.bytes = made.bytes; // the module's count, for attn.memory()
  return cache;
}

function cacheObject(engine, cacheName, cacheRecord) {
  const { handle, batch, maxLength, dtype } = cacheRecord;
  return {
    get length() {
      cacheAlive(cacheRecord, `${cacheName}.length`);
      return calls.kvCacheLength(engine.M, handle);
    },
    get maxLength() {
      return maxLength;
    },
    get batch() {
      return batch;
    },
    get dtype() {
      return dtype;
    },
    truncate(n) {
      const name = `${cacheName}.truncate`;
      cacheAlive(cacheRecord, name);
      const length = calls.kvCacheLength(engine.M, handle);
      if (typeof n !== 'number')
        throw new TypeError(`${name}: n must be an integer from 0 to the length ${length}, got ${describe(n)}`);
      if (!Number.isInteger(n) || n < 0 || n > length) {
        throw new RangeError(`${name}: n must be an integer from 0 to the length ${length}, got ${n}`);
      }
      calls.truncateKvCache(engine.M, handle, n);
    },
    dispose() {
      if (cacheRecord.handle === 0) return;
      if (engine.M !== null) calls.destroyKvCache(engine.M, cacheRecord.handle);
      engine.liveCaches.delete(cacheRecord);
      cacheRecord.handle = 0;
    },
    get disposed() {
      return cacheRecord.handle === 0;
    },
  };
}
