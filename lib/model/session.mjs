// A session: a decoder's KV caches of every layer, inside the engine, for incremental decoding. The
// object users hold (length, maxLength, truncate, dispose) is also what the model's forward and
// generate append to; its room is checked by the model before each call (model.mjs).
import { describe } from '../attention/checks.mjs';
import * as calls from '../../bindings/model-calls.mjs';

// Every session ever made: one made by createSession is told apart from something that only looks
// like one.
const made = new WeakSet();

/** Whether `value` is a session (of any model). */
export const isSession = (value) => made.has(value);

export class Session {
  /**
   * @param model the Model it belongs to (its engine, its alive check)
   * @param handle the engine's cache; bytes its memory (the module's count, for attn.memory())
   * @param dtypeCode how it stores K and V (bindings/slot-codes.mjs's code)
   */
  constructor(model, handle, maxLength, dtypeCode, bytes) {
    this.model = model;
    this.handle = handle;
    this.dtypeCode = dtypeCode;
    this.bytes = bytes;
    this.maxTokens = maxLength;
    made.add(this);
  }

  // Throws when it, its model or its engine was disposed.
  alive(fn) {
    this.model.alive(fn);
    if (this.handle === 0)
      throw new Error(`${fn}: this session was disposed; create a new one with model.createSession()`);
  }

  /** The tokens it holds, without the user's checks (the model's calls made those). */
  held() {
    return calls.modelCacheLength(this.model.engine.M, this.handle);
  }

  get length() {
    this.alive('session.length');
    return this.held();
  }

  get maxLength() {
    return this.maxTokens;
  }

  truncate(n) {
    this.alive('session.truncate');
    const length = this.held();
    const expected = `an integer from 0 to the session's length ${length}`;
    if (typeof n !== 'number') throw new TypeError(`session.truncate: n must be ${expected}, got ${describe(n)}`);
    if (!Number.isInteger(n) || n < 0 || n > length)
      throw new RangeError(`session.truncate: n must be ${expected}, got ${n}`);
    calls.modelCacheTruncate(this.model.engine.M, this.handle, n);
  }

  dispose() {
    if (this.handle === 0) return;
    this.release();
    this.model.caches.delete(this);
  }

  // Frees its memory (also when its model or engine is disposed, which then forgets it).
  release() {
    if (this.handle !== 0) calls.destroyModelCache(this.model.engine.M, this.handle);
    this.handle = 0;
  }

  get disposed() {
    return this.handle === 0;
  }
}
