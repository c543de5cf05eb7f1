// A model's tokenizer from its parsed tokenizer.json: encode text to Int32Array ids and decode ids to
// text with Hugging Face tokenizers' semantics (normalizer, pre-tokenizer, model, post-processor
// template, decoder), through @huggingface/tokenizers. Plain JavaScript, no engine, no network: the
// JSON is all it reads. Kept apart from the attention entry so a page that only runs attention never
// loads it.
import { Tokenizer } from '@huggingface/tokenizers';
import { describe, typedArrayName } from '../values.mjs';

const FN = 'tokenizer';

function options(value, name) {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object')
    throw new TypeError(`${FN}: ${name} options must be an object, got ${describe(value)}`);
  return value;
}

function boolean(value, name, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${FN}: ${name} must be true or false, got ${describe(value)}`);
  return value;
}

function idList(ids) {
  const typed = typedArrayName(ids);
  if (!Array.isArray(ids) && !(typed && /Int|Uint/.test(typed))) {
    throw new TypeError(`${FN}: decode takes token ids as an Int32Array or an array of integers, got ${describe(ids)}`);
  }
  const list = Array.from(ids, Number);
  const bad = list.findIndex((id) => !Number.isSafeInteger(id));
  if (bad >= 0) throw new RangeError(`${FN}: decode: ids[${bad}] must be an integer, got ${describe(ids[bad])}`);
  return list;
}

/**
 * The tokenizer of a tokenizer.json (the parsed object). Without one (undefined or null) every call
 * throws a TypeError saying the model has none, as the contract's model.encode/decode do.
 * @returns {{ encode(text: string, opts?: { addSpecialTokens?: boolean }): Int32Array,
 *   decode(ids: ArrayLike<number>, opts?: { skipSpecialTokens?: boolean }): string, size: number }}
 */
export function createTokenizer(json) {
  if (json === undefined || json === null) {
    const none = () => {
      throw new TypeError(
        `${FN}: this model has no tokenizer (no tokenizer.json was given): pass token ids instead of text`,
      );
    };
    return { encode: none, decode: none, size: 0 };
  }
  if (typeof json !== 'object' || Array.isArray(json) || typeof json.model !== 'object' || json.model === null) {
    throw new TypeError(
      `${FN}: tokenizer must be the parsed tokenizer.json (an object with a model), got ${describe(json)}`,
    );
  }
  // No tokenizer_config.json: its clean_up_tokenization_spaces is a transformers (Python) habit, not
  // part of tokenizer.json's pipeline, so decode turns it off below.
  const tokenizer = new Tokenizer(json, {});
  const known = (id) => id >= 0 && tokenizer.id_to_token(id) !== undefined;
  return {
    size: tokenizer.get_vocab(true).size,
    encode(text, opts) {
      if (typeof text !== 'string') throw new TypeError(`${FN}: encode takes a string, got ${describe(text)}`);
      const addSpecialTokens = boolean(options(opts, 'encode').addSpecialTokens, 'addSpecialTokens', true);
      return Int32Array.from(tokenizer.encode(text, { add_special_tokens: addSpecialTokens }).ids);
    },
    decode(ids, opts) {
      const skipSpecialTokens = boolean(options(opts, 'decode').skipSpecialTokens, 'skipSpecialTokens', true);
      // Ids past the tokenizer's vocabulary (a model's vocabulary padded beyond it) decode to nothing.
      const list = idList(ids).filter(known);
      if (list.length === 0) return '';
      return tokenizer.decode(list, { skip_special_tokens: skipSpecialTokens, clean_up_tokenization_spaces: false });
    },
  };
}
