// The model object loadModel returns: config, encode/decode (its tokenizer), forward (every check
// before the engine runs), sessions (the engine's KV caches of every layer), generate and dispose.
// The engine side is bindings/model-engine.mjs's engine model; this file owns what users see.
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
import { CONFIG_KEYS } from '../lib/model/config.mjs';
import { createSampler } from '../lib/model/sampling.mjs';
import { describe } from './checks.mjs';
import { kvDtypeOf } from './kv-dtype.mjs';

// Every session ever made, by its object → { model, cache }: a session of another model is told
// apart from something that is no session at all.
const SESSIONS = new WeakMap();

/**
 * @param attn the public engine (for its `disposed`, which tells why a model stopped working)
 * @param engineModel createEngineModel's result
 * @param tokenizer lib/model/tokenizer.mjs's tokenizer, or null
 */
export function makeModel(attn, engineModel, tokenizer) {
  const full = engineModel.config; // lib/model/config.mjs's normalised config, with the runtime's keys
  const config = Object.freeze(Object.fromEntries(CONFIG_KEYS.map((k) => [k, full[k]])));
  let disposed = false;

  // The internal face of the model, shared with generate.
  const m = {
    config: full,
    engineModel,
    tokenizer,
    alive(fn) {
      if (attn.disposed) {
        throw new Error(`${fn}: this model's engine was disposed; create a new engine and load the model again`);
      }
      if (disposed || engineModel.disposed)
        throw new Error(`${fn}: this model was disposed; load it again with loadModel`);
    },
    tokenizerOf(fn) {
      if (tokenizer === null) {
        throw new TypeError(
          `${fn}: this model has no tokenizer (its source had no tokenizer.json): give token ids instead of text`,
        );
      }
      return tokenizer;
    },
    // options.session → the engine cache of a session of this model, or null when absent.
    sessionCache(c, fn) {
      const session = c.args.session;
      if (session === undefined || session === null) return null;
      const record = typeof session === 'object' ? SESSIONS.get(session) : undefined;
      if (record === undefined) throw c.typeError('session', 'a session made by model.createSession()', session);
      if (record.model !== m) {
        throw c.rangeError('session', 'a session of this model', 'a session made by another model');
      }
      if (record.cache.disposed) {
        throw new Error(`${fn}: the session was disposed; create a new one with model.createSession()`);
      }
      return record.cache;
    },
    // The positions a call of `count` tokens would take: within the session's room, and within the
    // learned position table of a gpt2 or bert model.
    checkRoom(fn, name, count, cache) {
      if (cache !== null) {
        const length = cache.length;
        if (length + count > cache.maxLength) {
          throw new RangeError(
            `${fn}: ${name} (${count} tokens) must fit in the session, which holds ${length} of its maxLength ` +
              `${cache.maxLength} tokens (room for ${cache.maxLength - length}): truncate it, or create a session with a larger maxLength`,
          );
        }
      } else if (full.positions === 'learned' && count > full.maxPositions) {
        throw new RangeError(
          `${fn}: ${name} must be at most maxPositions = ${full.maxPositions} tokens (a ${full.modelType} model ` +
            `learns one embedding per position), got ${count} tokens`,
        );
      }
    },
    // The engine's forward, on arguments already checked.
    forward(ids, cache, selection, logits, tokenTypeIds, hiddenStates = null) {
      return engineModel.forward(ids, { cache, logits, attention: selection, tokenTypeIds, hiddenStates });
    },
  };

  function tokenTypes(c, count) {
    const value = c.args.tokenTypeIds;
    if (value === undefined || value === null) return null;
    if (full.modelType !== 'bert') {
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

  function makeSession(cache) {
    const record = { model: m, cache };
    const alive = (fn) => {
      m.alive(fn);
      if (cache.disposed)
        throw new Error(`${fn}: this session was disposed; create a new one with model.createSession()`);
    };
    const session = {
      get length() {
        alive('session.length');
        return cache.length;
      },
      get maxLength() {
        return cache.maxLength;
      },
      truncate(n) {
        alive('session.truncate');
        const length = cache.length;
        const expected = `an integer from 0 to the session's length ${length}`;
        if (typeof n !== 'number') throw new TypeError(`session.truncate: n must be ${expected}, got ${describe(n)}`);
        if (!Number.isInteger(n) || n < 0 || n > length)
          throw new RangeError(`session.truncate: n must be ${expected}, got ${n}`);
        cache.truncate(n);
      },
      dispose() {
        cache.dispose();
      },
      get disposed() {
        return cache.disposed || disposed || engineModel.disposed;
      },
    };
    SESSIONS.set(session, record);
    return session;
  }

  const model = {
    config,
    encode(text, options) {
      m.alive('encode');
      return m.tokenizerOf('encode').encode(text, options);
    },
    decode(ids, options) {
      m.alive('decode');
      return m.tokenizerOf('decode').decode(ids, options);
    },
    forward(ids, options) {
      const fn = 'forward';
      m.alive(fn);
      const c = optionsOf(fn, options, FORWARD_OPTIONS);
      const tokens = tokenIds(fn, 'ids', ids, full.vocabSize);
      if (tokens.length === 0) throw new RangeError(`${fn}: ids must hold at least one token id, got none`);
      const cache = m.sessionCache(c, fn);
      const selection = attentionSelection(c, full);
      const logits = logitsChoice(c);
      const tokenTypeIds = tokenTypes(c, tokens.length);
      const states = hiddenStatesSelection(c, full);
      m.checkRoom(fn, 'ids', tokens.length, cache);
      m.alive(fn); // an element getter of a number[] may have disposed it
      const out = m.forward(tokens, cache, selection, logits, tokenTypeIds, states);
      return {
        logits: out.logits,
        attention: out.attention,
        hidden: out.hidden,
        hiddenStates: out.hiddenStates ?? null,
      };
    },
    createSession(options) {
      const fn = 'createSession';
      m.alive(fn);
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
      return makeSession(engineModel.createCache(maxLength, kvDtype));
    },
    generate(prompt, options) {
      return generateTokens(m, prompt, options);
    },
    // The token chooser generate uses, for a decoding loop of one's own over forward and sessions.
    createSampler(options) {
      const fn = 'createSampler';
      m.alive(fn);
      return createSampler(samplingOptions(optionsOf(fn, options, SAMPLER_OPTIONS)));
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      engineModel.dispose();
    },
    get disposed() {
      return disposed || engineModel.disposed;
    },
  };
  // generate's own session, when the caller gives none: the engine's caches, never seen by users.
  m.createCache = (maxLength) => engineModel.createCache(maxLength);
  return model;
}
