// Prepared layers: weights copied (and packed) into the heap once, then forward as often as wanted,
// with or without a KV cache of the layer.
import * as calls from '../../bindings/attention-calls.mjs';
import { Checker } from './checks.mjs';
import { readForwardData } from './forward-args.mjs';
import { cacheAlive, createKvCache } from './kv-cache.mjs';
import { PREPARED_LAYER_ARGS } from './layer-args.mjs';
import { checkRepeatedLayerArgs, layerSizes } from './repeated-layer-args.mjs';
import { parseWeightDtype } from './storage-dtypes.mjs';
import { layerTensorLengths } from './weight-lengths.mjs';

// engine: { M, wire, liveLayers, liveCaches, caches, check(fn) } (see api.mjs).
export function createPrepared(engine, fn, layerArgs, forwardArgs, parseLayer, parseForward, args) {
  engine.check(fn);
  // One object may serve both create and forward: forward's arguments are accepted and unused here.
  const known = new Set([...layerArgs, ...PREPARED_LAYER_ARGS, ...forwardArgs]);
  const checker = new Checker(fn, args, known);
  const layer = parseLayer(checker);
  layer.weightDtype = parseWeightDtype(checker, 'weightDtype');
  engine.check(fn);
  const record = { ...calls.createLayer(engine.wire, fn, layer), engineDisposed: false };
  engine.liveLayers.add(record);
  const forwardName = `${fn}().forward`;
  const sizes = layerSizes(layer);
  const tensorLengths = layerTensorLengths(layer);
  const alive = (name) => {
    if (record.handle !== 0) return;
    const why = record.engineDisposed ? ' (its engine was disposed)' : '';
    throw new Error(`${name}: this layer was disposed${why}; create a new one`);
  };
  // The cache argument of a forward: the record of a live cache of this layer, or null.
  const cacheOf = (fc) => {
    if (!fc.has('cache')) return null;
    const cacheRecord = engine.caches.get(fc.args.cache);
    if (!cacheRecord) throw fc.typeError('cache', 'a KV cache made by layer.createKvCache', fc.args.cache);
    cacheAlive(cacheRecord, forwardName);
    if (cacheRecord.layer !== record) {
      throw fc.rangeError('cache', 'a KV cache of this layer', 'a cache of another layer');
    }
    return cacheRecord;
  };
  return {
    createKvCache(cargs) {
      const name = `${fn}().createKvCache`;
      alive(name);
      return createKvCache(engine, name, record, layer, cargs);
    },
    forward(fargs) {
      alive(forwardName);
      const fc = new Checker(forwardName, fargs, known);
      checkRepeatedLayerArgs(fc, layer, sizes, tensorLengths);
      // Every element is read (a getter in a number[] runs now) before the cache's length is
      // taken: no user code runs between that snapshot and the call.
      readForwardData(fc);
      const cacheRecord = cacheOf(fc);
      const cache = cacheRecord && { ...cacheRecord, length: calls.kvCacheLength(engine.M, cacheRecord.handle) };
      const f = parseForward(fc, layer, cache);
      alive(forwardName); // a getter in the arguments may have disposed the layer, its engine or the cache
      if (cacheRecord) cacheAlive(cacheRecord, forwardName);
      return calls.runForward(engine.wire, 'layerForward', forwardName, layer, f, record.handle);
    },
    dispose() {
      if (record.handle !== 0) {
        calls.destroyLayer(engine.M, record.handle);
        engine.liveLayers.delete(record);
      }
      record.handle = 0;
    },
    get disposed() {
      return record.handle === 0;
    },
  };
}
