// loadModel's `source` → the parsed files of a Hugging Face checkpoint: config.json, tokenizer.json
// (optional) and the weights (model.safetensors, or the shards model.safetensors.index.json lists).
// A source is a folder path (Node: read through the entry's `files`), a URL or URL path (fetch), or
// the files themselves ({ config, weights, tokenizer }). config.json is read first, so a checkpoint
// of an unsupported family fails before its weights are downloaded.
import { errorText } from '../../bindings/create.mjs';
import { describe, typedArrayName } from '../values.mjs';
import { readShardedCheckpoint, shardFiles } from './checkpoint.mjs';
import { readModelConfig } from './config.mjs';

const CONFIG = 'config.json';
const TOKENIZER = 'tokenizer.json';
const WEIGHTS = 'model.safetensors';
const INDEX = 'model.safetensors.index.json';
const SOURCE_KEYS = ['config', 'weights', 'tokenizer'];

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && typedArrayName(v) === undefined;
const isUrl = (v) => Object.prototype.toString.call(v) === '[object URL]';
// A scheme has two letters at least, so a Windows path (C:\models\x) is not taken for a URL.
const hasScheme = (s) => /^[a-z][a-z0-9+.-]+:/i.test(s);

// The page's (or worker's) address, against which a URL path resolves; undefined in Node.
function pageBase() {
  const doc = globalThis.document;
  if (doc && typeof doc.baseURI === 'string') return doc.baseURI;
  const loc = globalThis.location;
  return loc && typeof loc.href === 'string' ? loc.href : undefined;
}

// A folder's URL ends in '/', so that new URL('config.json', base) stays inside it.
function asFolderUrl(url) {
  const folder = new URL(url.href);
  if (!folder.pathname.endsWith('/')) folder.pathname += '/';
  folder.search = '';
  folder.hash = '';
  return folder;
}

/** Throws the signal's reason (an AbortError DOMException unless the caller gave one) once it is aborted. */
export function throwIfAborted(signal) {
  if (signal?.aborted) throw signal.reason ?? new DOMException('loading was aborted', 'AbortError');
}

/**
 * Reads the body of a fetch response into one Uint8Array, reporting progress as chunks arrive.
 * Content-Length (when the response has one and is not compressed on the wire) sizes it at once.
 */
async function readBody(response, file, onProgress) {
  const length = response.headers.get('Content-Length');
  const header = length === null ? NaN : Number(length);
  const encoded = (response.headers.get('Content-Encoding') ?? 'identity') !== 'identity';
  const total = Number.isSafeInteger(header) && header >= 0 && !encoded ? header : null;
  if (!onProgress || !response.body) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    onProgress?.({ file, loaded: bytes.length, total: bytes.length });
    return bytes;
  }
  onProgress({ file, loaded: 0, total });
  const reader = response.body.getReader();
  let buffer = new Uint8Array(total ?? 1 << 16);
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (loaded + value.length > buffer.length) {
      const grown = new Uint8Array(Math.max(buffer.length * 2, loaded + value.length));
      grown.set(buffer.subarray(0, loaded));
      buffer = grown;
    }
    buffer.set(value, loaded);
    loaded += value.length;
    onProgress({ file, loaded, total });
  }
  return loaded === buffer.length ? buffer : buffer.slice(0, loaded);
}

// A folder on a web server (or anything fetch reaches).
function urlLocation(fn, base, opts) {
  const fetchFn = opts.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') {
    throw new TypeError(`${fn}: this JavaScript engine has no fetch, which a URL source needs: pass options.fetch`);
  }
  return {
    where: base.href,
    name: (file) => new URL(file.split('/').map(encodeURIComponent).join('/'), base).href,
    async bytes(file, optional) {
      const url = this.name(file);
      let response;
      try {
        response = await fetchFn(url, { ...opts.fetchOptions, signal: opts.signal });
      } catch (e) {
        throwIfAborted(opts.signal);
        throw new Error(`${fn}: fetching ${url} failed: ${errorText(e)}`, { cause: e });
      }
      if (optional && (response.status === 404 || response.status === 410)) return null;
      if (!response.ok) {
        const missing = response.status === 404 ? ` (no ${file} in ${base.href})` : '';
        throw new Error(`${fn}: fetching ${url} gave HTTP ${response.status}${missing}`);
      }
      return readBody(response, file, opts.onProgress);
    },
  };
}

// A folder on disk (Node): `files` is the Node entry's { readFile, join, resolve }.
function folderLocation(fn, folder, files, opts) {
  const dir = files.resolve(folder);
  return {
    where: dir,
    name: (file) => files.join(dir, file),
    async bytes(file, optional) {
      const path = this.name(file);
      let bytes;
      try {
        bytes = await files.readFile(path, { signal: opts.signal });
      } catch (e) {
        throwIfAborted(opts.signal);
        if (e?.code === 'ENOENT' || e?.code === 'ENOTDIR') {
          if (optional) return null;
          throw new Error(`${fn}: no ${file} in ${dir} (${path} does not exist)`, { cause: e });
        }
        throw new Error(`${fn}: reading ${path} failed: ${errorText(e)}`, { cause: e });
      }
      const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      opts.onProgress?.({ file, loaded: view.length, total: view.length });
      return view;
    },
  };
}

/** Where a location source points: a folder on disk (with the Node entry's `files`) or a URL folder. */
function locate(fn, source, files, opts) {
  if (isUrl(source) || hasScheme(source)) {
    let url;
    try {
      url = new URL(source);
    } catch (e) {
      throw new TypeError(`${fn}: source ${JSON.stringify(String(source))} is not a valid URL: ${errorText(e)}`);
    }
    if (url.protocol === 'file:' && files) return folderLocation(fn, files.fileURLToPath(url), files, opts);
    return urlLocation(fn, asFolderUrl(url), opts);
  }
  if (files) return folderLocation(fn, source, files, opts);
  const base = pageBase();
  if (base === undefined) {
    throw new TypeError(
      `${fn}: source ${JSON.stringify(source)} is a relative URL, and there is no page address to resolve it ` +
        "against: give an absolute URL (in Node, the package's Node entry reads folder paths)",
    );
  }
  return urlLocation(fn, asFolderUrl(new URL(source, base)), opts);
}

function parseJson(fn, bytes, what) {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new Error(`${fn}: ${what} is not valid JSON: ${errorText(e)}`, { cause: e });
  }
}

/** config.json of a location, parsed and read into the normalised config (errors before any weights are read). */
async function readLocation(fn, location, opts) {
  const configBytes = await location.bytes(CONFIG, true);
  if (configBytes === null) {
    throw new Error(
      `${fn}: no ${CONFIG} at ${location.name(CONFIG)}: the source must be the folder of a Hugging Face checkpoint`,
    );
  }
  const configJson = parseJson(fn, configBytes, location.name(CONFIG));
  const config = readModelConfig(configJson);
  const tokenizerBytes = await location.bytes(TOKENIZER, true);
  const tokenizer = tokenizerBytes === null ? null : parseJson(fn, tokenizerBytes, location.name(TOKENIZER));
  // model.safetensors first: a model that fits in WebAssembly memory is most often one file, and a
  // browser logs every 404 (of the index, had it been asked for first) as an error on the page.
  let weights = await location.bytes(WEIGHTS, true);
  if (weights === null) {
    const indexBytes = await location.bytes(INDEX, true);
    if (indexBytes === null) {
      throw new Error(`${fn}: ${location.where} has neither ${WEIGHTS} nor ${INDEX}: the checkpoint has no weights`);
    }
    const index = parseJson(fn, indexBytes, location.name(INDEX));
    const shards = {};
    for (const file of shardFiles(index)) shards[file] = await location.bytes(file, false);
    weights = readShardedCheckpoint(index, shards);
  }
  throwIfAborted(opts.signal);
  return { configJson, config, tokenizer, weights };
}

/** { config, weights, tokenizer } given as they are: checked for shape, each named when wrong. */
function readObject(fn, source) {
  for (const key of Object.keys(source)) {
    if (!SOURCE_KEYS.includes(key) && source[key] !== undefined) {
      throw new TypeError(`${fn}: source has an unknown key ${key} (known: ${SOURCE_KEYS.join(', ')})`);
    }
  }
  const { config: configJson, weights, tokenizer = null } = source;
  if (!isObject(configJson)) {
    throw new TypeError(`${fn}: source.config must be the parsed config.json (an object), got ${describe(configJson)}`);
  }
  if (weights === undefined || weights === null) {
    throw new TypeError(
      `${fn}: source.weights must be the bytes of a .safetensors file, an array of shards, or a readSafetensors result, got ${describe(weights)}`,
    );
  }
  if (tokenizer !== null && !isObject(tokenizer)) {
    throw new TypeError(
      `${fn}: source.tokenizer must be the parsed tokenizer.json (an object) or absent, got ${describe(tokenizer)}`,
    );
  }
  return { configJson, config: readModelConfig(configJson), tokenizer, weights };
}

/**
 * @param fn the calling function's name, for messages
 * @param source a folder path, a URL (string or URL), or { config, weights, tokenizer }
 * @param files the Node entry's file access ({ readFile, join, resolve, fileURLToPath }), or null
 * @param opts { fetch, fetchOptions, signal, onProgress } (checked)
 * @returns {{ configJson, config, tokenizer: object | null, weights }} weights as planCheckpoint takes them
 */
export async function readModelSource(fn, source, files, opts) {
  if (typeof source === 'string') {
    if (source === '')
      throw new TypeError(`${fn}: source must be a folder path, a URL, or { config, weights, tokenizer }, got ''`);
    return readLocation(fn, locate(fn, source, files, opts), opts);
  }
  if (isUrl(source)) return readLocation(fn, locate(fn, source, files, opts), opts);
  if (isObject(source)) return readObject(fn, source);
  throw new TypeError(
    `${fn}: source must be a folder path, a URL, or { config, weights, tokenizer }, got ${describe(source)}`,
  );
}
