// Closing the tab's model (or stopping it opening): the worker cancels a load, stops a run and
// frees the model, and the tab is as it was at first, with the memory line showing the weights gone.

/** Asks the worker to close the model; the tab empties at once and says when it is done. */
export async function closeModel(tab) {
  const { $ } = tab;
  tab.loadId++; // the load in flight, if any, ends as the worker cancels it: nothing of it is shown
  tab.cancel = null;
  tab.resetModel();
  tab.fileBytes = null;
  tab.hooks.files = null;
  $.loading.hidden = true;
  tab.showError('');
  $.facts.textContent = '';
  $['files-list'].textContent = '';
  tab.setState('closing');
  $.status.textContent = 'Closing the model…';
  const closeId = tab.loadId;
  try {
    const worker = await tab.client;
    const { memory } = await worker.close();
    if (closeId !== tab.loadId) return; // another model is on its way: its lines are its own
    tab.showMemory(memory, null);
    $.status.textContent = 'The model was closed and its memory freed. Open another one above.';
  } catch (e) {
    if (closeId !== tab.loadId) return;
    $.memory.textContent = '';
    $.status.textContent = '';
    // the worker is gone: the next model starts a new one, which is a clean state too
    tab.showError(`The worker of this tab stopped while closing the model — ${e.name}: ${e.message}.`);
  }
  tab.setState('idle');
}
