// Where a checkpoint comes from, as the user gives it: the folder and file inputs, a drop of files
// or folders anywhere on the tab, and the address form. Each ends in one callback; what the files
// hold is files.js's to judge.
import { checkpointUrl, filesFromDrop } from './files.js';

/**
 * @param {object} $   the tab's nodes (panel.js)
 * @param {HTMLElement} panel   the tab's panel: a drop anywhere on it counts
 * @param {{ files(files: File[], how: string), url(url: string), problem(text: string) }} on
 */
export function bindSources($, panel, on) {
  for (const [input, how] of [
    [$.folder, 'the chosen folder'],
    [$.files, 'the chosen files'],
  ]) {
    input.addEventListener('change', () => {
      const files = Array.from(input.files);
      input.value = ''; // choosing the same files again (after fixing them on disk) opens them again
      on.files(files, how);
    });
  }
  panel.addEventListener('dragover', (e) => {
    if (!e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    $.drop.classList.add('over');
  });
  panel.addEventListener('dragleave', (e) => {
    if (!panel.contains(e.relatedTarget)) $.drop.classList.remove('over');
  });
  panel.addEventListener('drop', async (e) => {
    e.preventDefault();
    $.drop.classList.remove('over');
    let files;
    try {
      files = await filesFromDrop(e.dataTransfer);
    } catch (err) {
      on.problem(`The dropped files could not be read — ${err.name}: ${err.message}.`);
      return;
    }
    on.files(files, 'the dropped files');
  });
  $['url-form'].addEventListener('submit', (e) => {
    e.preventDefault();
    const typed = checkpointUrl($.url.value, location.href);
    if (typed.problem) on.problem(typed.problem);
    else on.url(typed.url);
  });
}
