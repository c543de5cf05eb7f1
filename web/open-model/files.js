// Which files of what the user gave make a checkpoint: from a file input (a folder or several
// files) or a drop (files or folders, walked through DataTransferItem.webkitGetAsEntry), the
// folder holding config.json, its weights (model.safetensors, or the shards its index names) and
// tokenizer.json. Whatever is missing is said in the page's words before any weight is read.
// A URL typed by the user becomes the checkpoint folder's URL here too.

// The families loadModel runs: the package's one list (docs/models.md). The worker's loadModel has the
// final word; panel.js's caption and this file's refusal read the list from here.
import { SUPPORTED_MODEL_TYPES } from '../shared/package-entry.js';

export const FAMILIES = SUPPORTED_MODEL_TYPES;

const CONFIG = 'config.json';
const TOKENIZER = 'tokenizer.json';
const WEIGHTS = 'model.safetensors';
const INDEX = 'model.safetensors.index.json';
// Weights in formats the page cannot read, to say what they are rather than "no weights".
const OTHER_WEIGHTS = /\.(bin|pt|pth|ckpt|gguf|onnx|h5|msgpack)$/i;

/** A file's path inside what was given: its folder path from a folder input or a drop, else its name. */
const pathOf = (file) => file.openModelPath ?? (file.webkitRelativePath || file.name);
const folderOf = (path) => path.slice(0, path.lastIndexOf('/') + 1);
const baseName = (path) => path.slice(path.lastIndexOf('/') + 1);

/** Every File under a FileSystemEntry (a file, or a folder walked to the bottom), with its path. */
async function entryFiles(entry, path = '') {
  if (entry.isFile) {
    const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
    file.openModelPath = path + entry.name;
    return [file];
  }
  if (!entry.isDirectory) return [];
  const reader = entry.createReader();
  const children = [];
  // readEntries answers in batches (100 at a time in Chromium) until an empty one.
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) break;
    children.push(...batch);
  }
  const nested = await Promise.all(children.map((child) => entryFiles(child, `${path}${entry.name}/`)));
  return nested.flat();
}

/** The Files of a drop: folders walked through their entries; a drop without entries gives its files. */
export async function filesFromDrop(dataTransfer) {
  const entries = Array.from(dataTransfer.items ?? [], (item) =>
    item.kind === 'file' && typeof item.webkitGetAsEntry === 'function' ? item.webkitGetAsEntry() : null,
  );
  if (entries.length > 0 && entries.every(Boolean))
    return (await Promise.all(entries.map((e) => entryFiles(e)))).flat();
  return Array.from(dataTransfer.files ?? []);
}

/** Bytes for people: 512 B, 1.5 KiB, 310 MiB. */
export function sizeText(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

const listed = (names) => {
  const shown = names.slice(0, 6).join(', ');
  return names.length > 6 ? `${shown} and ${names.length - 6} more` : shown;
};

/** The folder to read: the one holding config.json (the shallowest, when several do). */
function checkpointFolder(files) {
  const configs = files.map(pathOf).filter((p) => baseName(p) === CONFIG);
  if (configs.length === 0) return null;
  configs.sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
  return folderOf(configs[0]);
}

async function readJson(file, what) {
  const text = await file.text();
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return { problem: `${what} is not valid JSON (${e.message}), so the page cannot read it.` };
  }
}

/** The shard files an index's weight_map names, each once, in the order first named. */
function shardNames(index) {
  const map = index && typeof index === 'object' ? index.weight_map : null;
  if (!map || typeof map !== 'object') return null;
  return [...new Set(Object.values(map))];
}

async function pickWeights(inFolder, folder) {
  const names = Array.from(inFolder.keys());
  if (inFolder.has(WEIGHTS)) return { weights: [inFolder.get(WEIGHTS)] };
  if (inFolder.has(INDEX)) {
    const index = await readJson(inFolder.get(INDEX), INDEX);
    if (index.problem) return index;
    const shards = shardNames(index.value);
    if (!shards)
      return { problem: `${INDEX} has no weight_map (tensor name → shard file), so the shards are unknown.` };
    const missing = shards.filter((s) => !inFolder.has(s));
    if (missing.length > 0) {
      return {
        problem:
          `${INDEX} names ${shards.length} shard${shards.length === 1 ? '' : 's'}, and ${listed(missing)} ` +
          `${missing.length === 1 ? 'is' : 'are'} not among the files given: add ${missing.length === 1 ? 'it' : 'them'} ` +
          '(or choose the whole folder).',
      };
    }
    return { weights: shards.map((s) => inFolder.get(s)) };
  }
  const safetensors = names.filter((n) => n.endsWith('.safetensors'));
  if (safetensors.length > 0) return { weights: safetensors.map((n) => inFolder.get(n)) };
  const other = names.filter((n) => OTHER_WEIGHTS.test(n));
  const where = folder ? ` in ${folder}` : '';
  if (other.length > 0) {
    return {
      problem:
        `No .safetensors weights${where}: only ${listed(other)}, a format this page does not read. ` +
        'It reads safetensors (model.safetensors, or shards with model.safetensors.index.json), ' +
        'which most models on the Hugging Face Hub have; a PyTorch .bin can be converted with transformers ' +
        '(save_pretrained(…, safe_serialization=True)).',
    };
  }
  return {
    problem: `No weights${where}: a checkpoint holds model.safetensors, or its shards with model.safetensors.index.json.`,
  };
}

/**
 * The checkpoint among the given files, or what is wrong with them in the page's words.
 * @param {File[]} files
 * @returns {Promise<{ checkpoint: { config, tokenizer: File | null, weights: File[] }, bytes: number,
 *   folder: string } | { problem: string }>}  config is the parsed config.json
 */
export async function pickCheckpoint(files) {
  if (files.length === 0) return { problem: 'Nothing to open: no files were given.' };
  const folder = checkpointFolder(files);
  if (folder === null) {
    return {
      problem:
        `No config.json among the ${files.length} file${files.length === 1 ? '' : 's'} given ` +
        `(${listed(files.map(pathOf))}). A model folder holds config.json (which architecture, how big), ` +
        'its weights (.safetensors) and usually tokenizer.json: choose the whole folder, or select those files together.',
    };
  }
  const inFolder = new Map(files.filter((f) => folderOf(pathOf(f)) === folder).map((f) => [baseName(pathOf(f)), f]));
  const config = await readJson(inFolder.get(CONFIG), CONFIG);
  if (config.problem) return config;
  const type = config.value?.model_type;
  if (!FAMILIES.includes(type)) {
    return {
      problem:
        (typeof type === 'string'
          ? `This is a “${type}” model (config.json's model_type); `
          : 'config.json names no model_type, so the architecture is unknown; ') +
        `the page runs ${FAMILIES.slice(0, -1).join(', ')} and ${FAMILIES[FAMILIES.length - 1]} checkpoints.`,
    };
  }
  const weights = await pickWeights(inFolder, folder);
  if (weights.problem) return weights;
  const tokenizer = inFolder.get(TOKENIZER) ?? null;
  const bytes = [inFolder.get(CONFIG), tokenizer, ...weights.weights].reduce((sum, f) => sum + (f ? f.size : 0), 0);
  return { checkpoint: { config: config.value, tokenizer, weights: weights.weights }, bytes, folder };
}

/**
 * The folder URL loadModel reads, from what the user typed: a Hugging Face model page
 * (https://huggingface.co/owner/name, …/tree/main, …/blob/main/config.json) becomes its
 * resolve/<revision>/ folder; a URL of a file in a folder, that folder; relative to the page.
 * @returns {{ url: string } | { problem: string }}
 */
export function checkpointUrl(typed, base) {
  const text = typed.trim();
  if (text === '') return { problem: 'Type the URL of a model folder first.' };
  let url;
  try {
    url = new URL(text, base);
  } catch {
    return { problem: `“${text}” is not a URL.` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return {
      problem: `“${text}” is not a web address (http or https); for files on this computer use the file picker.`,
    };
  }
  url.search = '';
  url.hash = '';
  if (url.hostname === 'huggingface.co' || url.hostname === 'www.huggingface.co') {
    const parts = url.pathname.split('/').filter(Boolean);
    // [owner/]name[/tree|blob|resolve/revision[/file]]: a few old models have no owner (gpt2)
    const marker = parts.findIndex((p, k) => k > 0 && k < 3 && ['tree', 'blob', 'resolve'].includes(p));
    const repo = marker > 0 ? parts.slice(0, marker) : parts.slice(0, 2);
    if (repo.length > 0 && !['datasets', 'spaces'].includes(repo[0])) {
      const revision = marker > 0 && parts[marker + 1] ? parts[marker + 1] : 'main';
      url.pathname = `/${repo.join('/')}/resolve/${revision}/`;
      return { url: url.href };
    }
  }
  if (/\.(json|safetensors)$/i.test(url.pathname)) url.pathname = folderOf(url.pathname);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return { url: url.href };
}
