// model.generate: the prompt fed once, then one token at a time through a session (the caller's, or
// a temporary one disposed at the end), each next token chosen by sampling.mjs from the
// last position's logits; the event loop gets a turn between tokens, so a page stays responsive and
// onToken's work (drawing, printing) shows as it happens.
import {
  GENERATE_OPTIONS,
  attentionSelection,
  callback,
  count,
  optionsOf,
  samplingOptions,
  tokenIds,
} from './model-args.mjs';
import { createSampler } from './sampling.mjs';

const FN = 'generate';

// A turn of the event loop (a macrotask: timers, I/O, messages, rendering run), without the 4 ms
// clamp that nested setTimeout(0) has in browsers: setImmediate in Node, else a MessageChannel
// message. Not scheduler.yield: its continuation is queued ahead of other tasks, so in a worker a
// page's "stop" message would wait until the whole generation had ended.
let channel = null;
const waiting = [];
function nextMessage() {
  if (channel === null) {
    channel = new MessageChannel();
    channel.port1.onmessage = () => waiting.shift()();
  }
  return new Promise((resolve) => {
    waiting.push(resolve);
    channel.port2.postMessage(null);
  });
}
export function yieldToEventLoop() {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  if (typeof MessageChannel === 'function') return nextMessage();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Each new token's piece of text, so that the pieces join to the decoded text of the new tokens:
 * a window of recent tokens is decoded with and without the newest one, and the difference is the
 * piece (decoders strip a leading space, merge bytes into characters: the window gives them context).
 * A character whose bytes span several tokens comes with the token that completes it.
 */
function textPieces(tokenizer) {
  const ids = [];
  let start = 0; // the window: ids[start..] decoded; ids[start..read) already given out
  let read = 0;
  return (id, last) => {
    ids.push(id);
    const before = tokenizer.decode(ids.slice(start, read));
    const now = tokenizer.decode(ids.slice(start));
    if (now.length > before.length && now.startsWith(before) && (last || !now.endsWith('\uFFFD'))) {
      start = read;
      read = ids.length;
      return now.slice(before.length);
    }
    return '';
  };
}

/**
 * Each listed layer's attention [heads, T, keys] → the last query's rows [heads, keys]: how the
 * position that chose the next token attends to every token up to it.
 */
function lastRows(attention, heads, T) {
  if (T === 1) return attention;
  return attention.map((a) => {
    if (a === null) return null;
    const keys = a.length / (heads * T);
    const rows = new Float32Array(heads * keys);
    for (let h = 0; h < heads; h++) rows.set(a.subarray(((h + 1) * T - 1) * keys, (h + 1) * T * keys), h * keys);
    return rows;
  });
}

/** Reads and checks generate's options; nothing runs or changes before they pass. */
function generateOptions(m, prompt, options) {
  const c = optionsOf(FN, options, GENERATE_OPTIONS);
  const o = {
    maxNewTokens: count(c, 'maxNewTokens', 32),
    sampling: samplingOptions(c),
    stopAtEos: c.bool('stopAtEos', true),
    onToken: callback(c, 'onToken'),
    attention: attentionSelection(c, m.fullConfig),
    session: m.sessionOf(c, FN),
  };
  let ids;
  if (typeof prompt === 'string') ids = m.tokenizerOf(FN).encode(prompt);
  else ids = prompt;
  o.ids = tokenIds(FN, 'prompt', ids, m.fullConfig.vocabSize);
  if (o.ids.length === 0) {
    throw new RangeError(
      `${FN}: prompt must hold at least one token, got ${typeof prompt === 'string' ? 'text that encodes to none' : 'none'}`,
    );
  }
  // Room: a caller's session ends holding the prompt and every new token; a temporary one needs no
  // room for the last token, which is never fed.
  const needed = o.ids.length + o.maxNewTokens - (o.session === null ? 1 : 0);
  const what = `prompt (${o.ids.length} tokens) and maxNewTokens (${o.maxNewTokens})`;
  const full = m.fullConfig;
  if (o.session !== null) {
    const length = o.session.held();
    const room = o.session.maxLength - length;
    if (needed > room) {
      throw new RangeError(
        `${FN}: the ${what} must fit in the session, which holds ${length} of its maxLength ${o.session.maxLength} ` +
          `tokens (room for ${room}): truncate it, or lower maxNewTokens`,
      );
    }
  } else if (full.positions === 'learned' && needed > full.maxPositions) {
    throw new RangeError(
      `${FN}: the ${what} need ${needed} positions, past maxPositions = ${full.maxPositions} ` +
        `(a ${full.modelType} model learns one embedding per position): lower maxNewTokens`,
    );
  }
  return o;
}

export async function generateTokens(m, prompt, options) {
  m.alive(FN);
  if (!m.fullConfig.causal) {
    throw new TypeError(`${FN}: a ${m.fullConfig.modelType} model is an encoder: it does not generate (use forward)`);
  }
  const o = generateOptions(m, prompt, options);
  const sample = createSampler(o.sampling);
  const eos = new Set(o.stopAtEos ? m.fullConfig.eosTokenIds : []);
  // Pieces are for onToken: without one, nothing to decode until the end.
  const piece = m.tokenizer && o.onToken ? textPieces(m.tokenizer) : () => null;
  const own = o.session === null && o.maxNewTokens > 0;
  const session = own ? m.newSession(o.ids.length + o.maxNewTokens - 1) : o.session;
  const out = [];
  let expected = 0; // the session's length as generate left it
  try {
    const feed = (ids, logits) => {
      const result = m.run(ids, session, logits === 'none' ? null : o.attention, logits);
      expected = session === null ? 0 : session.held();
      result.tokens = ids.length;
      return result;
    };
    if (o.maxNewTokens === 0) {
      if (session !== null) feed(o.ids, 'none');
      return { ids: new Int32Array(0), text: m.tokenizer ? '' : null };
    }
    let step = feed(o.ids, 'last');
    for (;;) {
      const id = sample(step.logits);
      out.push(id);
      const last = out.length === o.maxNewTokens || eos.has(id);
      const text = piece(id, last);
      let stop = last;
      if (o.onToken) {
        const info = { id, text, logits: step.logits };
        if (o.attention !== null) info.attention = lastRows(step.attention, o.attention.heads.length, step.tokens);
        let answer = o.onToken(info);
        if (answer !== null && typeof answer === 'object' && typeof answer.then === 'function') answer = await answer;
        if (answer === false) stop = true;
      }
      if (stop && !own) {
        // The caller's session ends holding every new token, ready for what they feed next.
        m.alive(FN);
        checkUnchanged(session, expected);
        feed(Int32Array.of(id), 'none');
      }
      if (stop) break;
      await yieldToEventLoop();
      m.alive(FN);
      checkUnchanged(session, expected);
      step = feed(Int32Array.of(id), 'last');
    }
  } finally {
    if (own) session.dispose();
  }
  const ids = Int32Array.from(out);
  return { ids, text: m.tokenizer ? m.tokenizer.decode(ids) : null };
}

// generate appends to the session between its turns of the event loop; anything else that changed
// it meanwhile (a forward, a truncate) would leave the positions wrong.
function checkUnchanged(session, expected) {
  if (session.disposed) throw new Error(`${FN}: the session was disposed while generate was running`);
  const length = session.held();
  if (length !== expected) {
    throw new Error(
      `${FN}: the session changed while generate was running (length ${length}, generate left it at ${expected})`,
    );
  }
}
