// Opening a checkpoint on the tab: the given files checked (files.js) or an address taken, the
// worker started, the model loaded with a progress bar, memory line and Cancel, then its facts
// shown and, with a tokenizer, the default prompt run. A newer load, refusal or close makes an
// older load's answers unseen (the tab's loadId).
import { pickCheckpoint, sizeText } from './files.js';
import { fitRunForm } from './prompt.js';
import { runPrompt } from './run-flow.js';
import { factsText, loadErrorText, memoryText, progressText } from './words.js';

const sumOf = (map) => Array.from(map.values()).reduce((a, b) => a + b, 0);

/** What was given is no checkpoint: the page says why, and shows no model. */
export function refuse(tab, problem) {
  tab.cancel?.(); // a load still in flight is no longer wanted
  tab.loadId++;
  tab.resetModel();
  tab.$.loading.hidden = true;
  tab.$.status.textContent = '';
  tab.showError(problem);
  tab.setState('failed');
}

/** Files chosen or dropped: their checkpoint, or why they are none. */
export async function openFiles(tab, files, how) {
  tab.showError('');
  const picked = await pickCheckpoint(files);
  if (picked.problem) {
    refuse(tab, picked.problem);
    return;
  }
  const where = picked.folder ? `the folder ${picked.folder.replace(/\/$/, '')}` : how;
  await load(tab, { files: picked.checkpoint }, { where, fileBytes: picked.bytes });
}

/** A checkpoint folder's address (checked by files.js's checkpointUrl). */
export function openUrl(tab, url) {
  return load(tab, { url }, { where: url, fileBytes: null });
}

/** The worker's client, or null when its engine could not start (said in the error box). */
async function startedWorker(tab) {
  try {
    return await tab.worker();
  } catch (e) {
    tab.setState('failed');
    tab.$.status.textContent = '';
    tab.showError(`The WebAssembly engine could not start in a worker — ${e.name}: ${e.message}.`);
    return null;
  }
}

async function load(tab, source, { where, fileBytes }) {
  const { $ } = tab;
  tab.cancel?.();
  const loadId = ++tab.loadId;
  tab.resetModel();
  tab.showError('');
  tab.fileBytes = fileBytes;
  tab.setState('starting');
  $.status.textContent = 'Starting the engine in its worker…';
  $.memory.textContent = memoryText(null, fileBytes);
  const worker = await startedWorker(tab);
  if (worker === null || loadId !== tab.loadId) return;
  tab.setState('loading');
  $.status.textContent = `Loading ${where}…`;
  const onProgress = progressShown(tab, fileBytes);
  $.progress.removeAttribute('value');
  $.loading.hidden = false;
  const { id, done } = worker.load({ ...source, dtype: $.dtype.value }, onProgress);
  tab.cancel = () => worker.cancel(id);
  $.cancel.onclick = tab.cancel;
  try {
    const loaded = await done;
    if (loadId !== tab.loadId) return;
    opened(tab, loaded, where);
  } catch (e) {
    if (loadId !== tab.loadId) return;
    loadFailed(tab, e, where);
  } finally {
    if (loadId === tab.loadId) {
      $.loading.hidden = true;
      tab.cancel = null;
    }
  }
}

/** The worker's progress drawn: the bar, which file, and the memory so far. */
function progressShown(tab, fileBytes) {
  const { $ } = tab;
  const read = new Map(); // bytes read so far, per file
  return (p) => {
    const { fraction, text } = progressText(p, read, fileBytes);
    if (fraction === null) $.progress.removeAttribute('value');
    else $.progress.value = fraction;
    $.status.textContent = text;
    tab.showMemory(p.memory, fileBytes ?? sumOf(read));
  };
}

function opened(tab, loaded, where) {
  const { $ } = tab;
  tab.model = loaded;
  tab.hooks.config = loaded.config;
  tab.hooks.files = loaded.files;
  $.status.textContent = `Opened ${where} in ${Math.round(loaded.ms)} ms.`;
  tab.showMemory(loaded.memory, tab.modelBytes());
  $.facts.textContent = factsText(loaded.config, loaded.dtype);
  $['files-list'].textContent = `Files: ${loaded.files.map((f) => `${f.name} (${sizeText(f.bytes)})`).join(', ')}.`;
  fitRunForm($, loaded);
  $.model.hidden = false;
  tab.setState('ready');
  if (loaded.hasTokenizer) runPrompt(tab);
}

function loadFailed(tab, e, where) {
  tab.$.status.textContent = '';
  if (e.memory) tab.showMemory(e.memory, null);
  tab.setState(e.cancelled ? 'cancelled' : 'failed');
  tab.showError(loadErrorText(e, where));
}
