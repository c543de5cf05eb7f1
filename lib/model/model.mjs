// The model loadModel returns: config, encode/decode (its tokenizer), forward (every check before the
// engine runs), sessions, generate, createSampler and dispose; and, inside, the model the engine holds
// (src/model/), which the engine frees with its other resources when it is disposed.
import { describe } from '../attention/checks.mjs';
import { kvDtypeCode } from '../../bindings/slot-codes.mjs';
import { kvDtypeOf } from '../attention/storage-dtypes.mjs';
import * as calls from '../../bindings/model-calls.mjs';
import { SlotStage } from '../../bindings/wire.mjs';
import { CONFIG_KEYS } from './config.mjs';
import { MAX_TOKENS, tooLarge } from './engine-heap.mjs';
import { forwardInEngine } from './engine-forward.mjs';
import { placeModel, weightDtypeCode } from './engine-load.mjs';
import {
  FORWARD_OPTIONS,
  SAMPLER_OPTIONS,
  SESSION_OPTIONS,
  attentionSelection,
  hiddenStatesSelection,
  logitsChoice,
  optionsOf,
  samplingOptions,
  tokenIds,
} from './model-args.mjs';
import { generateTokens } from './model-generate.mjs';
import { headKind } from './plan-slots.mjs';
import { createSampler } from './sampling.mjs';
import { Session, isSession } from './session.mjs';

// createModel's other callers (the tests, scripts/model-speed.mjs) reach it through dist/create.cjs, with
// the internal engine of their attn.
export { engineOf } from '../attention/api.mjs';

export class Model {
  /**
   * @param engine the internal engine of lib/attention/api.mjs
   * @param plan planCheckpoint's result; its config is readModelConfig's, with the runtime's keys
   * @param placed placeModel's { handle, weightBytes }
   * @param stager a SlotStage of the model functions' slots
   * @param tokenizer tokenizer.mjs's tokenizer, or null
   */
  constructor(engine, plan, placed, stager, tokenizer) {
    this.config = Object.freeze(Object.fromEntries(CONFIG_KEYS.map((k) => [k, plan.config[k]])));
    this.fullConfig = plan.config;
    this.engine = engine;
    this.handle = placed.handle;
    this.weightBytes = placed.weightBytes; // the module's count of the weights it holds (attn.memory())
    this.caches = new Set(); // its live sessions (attn.memory() counts their bytes)
    this.stager = stager;
    this.tokenizer = tokenizer;
    this.head = headKind(plan);
  }

  // Throws when the model or its engine was disposed.
  alive(fn) {
    if (this.engine.M === null) {
      throw new Error(`${fn}: this model's engine was disposed; create a new engine and load the model again`);
    }
    if (this.handle === 0) throw new Error(`${fn}: this model was disposed; load it again with loadModel`);
  }

  tokenizerOf(fn) {
    if (this.tokenizer === null) {
      throw new TypeError(
        `${fn}: this model has no tokenizer (its source had no tokenizer.json): give token ids instead of text`,
      );
    }
    return this.tokenizer;
  }

  // options.session → a session of this model, alive; null when absent.
  sessionOf(c, fn) {
    const session = c.args.session;
    if (session === undefined || session === null) return null;
    if (!isSession(session)) throw c.typeError('session', 'a session made by model.createSession()', session);
    if (session.model !== this) {
      throw c.rangeError('session', 'a session of this model', 'a session made by another model');
    }
    if (session.disposed) {
      throw new Error(`${fn}: the session was disposed; create a new one with model.createSession()`);
    }
    return session;
  }

  // The positions a call of `count` tokens would take: within the session's room, and within the
  // learned position table of a gpt2 or bert model. The one check of a session's room.
  checkRoom(fn, name, count, session) {
    const full = this.fullConfig;
    if (session !== null) {
      const length = session.held();
      if (length + count > session.maxLength) {
        throw new RangeError(
          `${fn}: ${name} (${count} tokens) must fit in the session, which holds ${length} of its maxLength ` +
            `${session.maxLength} tokens (room for ${session.maxLength - length}): truncate it, or create a session with a larger maxLength`,
        );
      }
    } else if (full.positions === 'learned' && count > full.maxPositions) {
      throw new RangeError(
        `${fn}: ${name} must be at most maxPositions = ${full.maxPositions} tokens (a ${full.modelType} model ` +
          `learns one embedding per position), got ${count} tokens`,
      );
    }
  }

  tokenTypes(c, count) {
    const value = c.args.tokenTypeIds;
    if (value === undefined || value === null) return null;
    const full = this.fullConfig;
    // Only a family with token-type embeddings (bert) takes them.
    if (!(full.typeVocabSize > 0)) {
      throw new TypeError(
        `forward: tokenTypeIds is for bert models (their token-type embeddings); this is a ${full.modelType} model, got ${describe(value)}`,
      );
    }
    const types = tokenIds('forward', 'tokenTypeIds', value, full.typeVocabSize, 'type_vocab_size', 'a token type');
    if (types.length !== count) {
      throw new RangeError(`forward: tokenTypeIds must have one entry per id (${count}), got length ${types.length}`);
    }
    return types;
  }

  // The engine's forward, on arguments already checked (the session's room included).
  run(ids, session, attention, logits, tokenTypeIds = null, hiddenStates = null) {
    return forwardInEngine(this, ids, session, logits, attention, tokenTypeIds, hiddenStates);
  }

  // A session of maxLength tokens (checked by the caller, up to the 2^31 the slots carry).
  newSession(maxLength, kvDtype = 'f32') {
    const fn = 'model.createSession';
    const { M, wire } = this.engine;
    if (maxLength > MAX_TOKENS)
      throw new RangeError(`${fn}: maxLength must be an integer from 1 to 2^31, got ${maxLength}`);
    const dtypeCode = kvDtypeCode(kvDtype);
    const bytes = calls.modelCacheBytes(M, this.handle, maxLength, dtypeCode);
    const advice = 'use a smaller maxLength';
    const what = `a session of maxLength ${maxLength}`;
    if (bytes > wire.heapMaxBytes) throw tooLarge(fn, what, bytes, wire.heapMaxBytes, advice);
    const handle = calls.createModelCache(M, this.handle, maxLength, dtypeCode);
    if (handle === 0) throw tooLarge(fn, what, bytes, wire.heapMaxBytes, advice);
    const session = new Session(this, handle, maxLength, dtypeCode, bytes);
    this.caches.add(session);
    return session;
  }

  encode(text, options) {
    this.alive('encode');
    return this.tokenizerOf('encode').encode(text, options);
  }

  decode(ids, options) {
    this.alive('decode');
    return this.tokenizerOf('decode').decode(ids, options);
  }

  forward(ids, options) {
    const fn = 'forward';
    this.alive(fn);
    const full = this.fullConfig;
    const c = optionsOf(fn, options, FORWARD_OPTIONS);
    const tokens = tokenIds(fn, 'ids', ids, full.vocabSize);
    if (tokens.length === 0) throw new RangeError(`${fn}: ids must hold at least one token id, got none`);
    const session = this.sessionOf(c, fn);
    const selection = attentionSelection(c, full);
    const logits = logitsChoice(c);
    const tokenTypeIds = this.tokenTypes(c, tokens.length);
    const states = hiddenStatesSelection(c, full);
    this.checkRoom(fn, 'ids', tokens.length, session);
    this.alive(fn); // an element getter of a number[] may have disposed it
    return this.run(tokens, session, selection, logits, tokenTypeIds, states);
  }

  createSession(options) {
    const fn = 'createSession';
    this.alive(fn);
    const full = this.fullConfig;
    if (!full.causal) {
      throw new TypeError(
        `${fn}: a ${full.modelType} model is an encoder: it has no sessions (forward takes the whole sequence at once)`,
      );
    }
    const c = optionsOf(fn, options, SESSION_OPTIONS);
    const maxLength = c.size('maxLength', full.maxPositions);
    const kvDtype = kvDtypeOf(c, 'kvDtype');
    if (full.positions === 'learned' && maxLength > full.maxPositions) {
      throw c.rangeError(
        'maxLength',
        `at most maxPositions = ${full.maxPositions} (a ${full.modelType} model learns one embedding per position)`,
        maxLength,
      );
    }
    return this.newSession(maxLength, kvDtype);
  }

  generate(prompt, options) {
    return generateTokens(this, prompt, options);
  }

  // The token chooser generate uses, for a decoding loop of one's own over forward and sessions.
  createSampler(options) {
    const fn = 'createSampler';
    this.alive(fn);
    return createSampler(samplingOptions(optionsOf(fn, options, SAMPLER_OPTIONS)));
  }

  dispose() {
    if (this.handle === 0) return;
    this.release();
    this.engine.resources.delete(this);
  }

  // Frees the engine's model and its sessions (also when the engine is disposed, which then forgets it).
  release() {
    for (const session of this.caches) session.release();
    this.caches.clear();
    if (this.handle !== 0) calls.destroyModel(this.engine.M, this.handle);
    this.handle = 0;
  }

  get disposed() {
    return this.handle === 0;
  }
}

/**
 * A checkpoint's plan as a model in the engine (loadModel's last step; the package's tests and
 * scripts call it with a plan of their own).
 * @param engine the internal engine (engineOf(attn))
 * @param plan planCheckpoint's result
 * @param options { dtype: 'f32' | 'f16' | 'bf16' | 'int8', tokenizer: tokenizer.mjs's or null }
 */
export function createModel(engine, plan, options = {}) {
  const M = engine.check('loadModel');
  const dtypeCode = weightDtypeCode(options?.dtype);
  const stager = new SlotStage(M, calls.modelSlots(M));
  const placed = placeModel(engine, stager, plan, dtypeCode);
  const model = new Model(engine, plan, placed, stager, options?.tokenizer ?? null);
  engine.resources.add(model);
  return model;
}
