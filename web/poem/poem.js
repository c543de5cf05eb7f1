// The trained-model tab, its parts wired together: state.js holds its state, loading.js loads the
// model, generation.js runs prompts and generations, handlers.js turns controls.js's events into
// state, drawing.js draws once a frame (model-view.js the maps, chips.js the tokens), extras.js
// reads the named heads and the recited lines beside the model, tour.js tours those heads, and
// test-hooks.js is window.__poem. The model runs in a model worker of the tab's own
// (open-model/client.js, started by loading.js); the textbook's engine is main.js's.
import { DEFAULT_PROMPT } from './settings.js';
import { matrixOf } from './run.js';
import { createModelView } from './model-view.js';
import { bindPoemControls } from './controls.js';
import { createGeneration } from './generation.js';
import { poemHandlers } from './handlers.js';
import { loadPoemModel } from './loading.js';
import { createTour, tourStops } from './tour.js';
import { createPoemState } from './state.js';
import { createTestHooks } from './test-hooks.js';
import { PoemDrawing } from './drawing.js';
import { bindExports, loadExtras } from './extras.js';
import { renderChips } from './chips.js';

const $ = (id) => document.getElementById(id);

/** The tab's parts on one state: drawing, generation, handlers and the tour. */
function wire(s) {
  const view = createModelView();
  let tour = null;
  const test = createTestHooks(s, () => tour.step());
  const drawing = new PoemDrawing({ s, view, test, askNext: (id) => s.worker.next(id) });
  const scheduleDraw = () => drawing.schedule();
  const generation = createGeneration({ s, test, scheduleDraw });
  const redrawMaps = () => drawing.redrawMaps();
  const handlers = poemHandlers({
    renderChips: () => renderChips(s),
    s,
    view,
    scheduleDraw,
    redrawMaps,
    generation,
  });
  tour = createTour($('poem-tour'), {
    stops: () => tourStops(s.heads),
    run: () => s.run,
    matrix: (l, h) => matrixOf(s.run, l, h),
    show(layer, head, query) {
      handlers.openHead(layer, head);
      handlers.pickQuery(query);
    },
  });
  return { test, scheduleDraw, generation, handlers, tour };
}

/**
 * @param {URL} modelUrl   the poem model's folder
 * @param {{ threads: number | 'auto' }} options   the threads of its worker's engine
 * @returns {{ start(): Promise<void>, show(visible: boolean), test: object }}
 */
export function createPoemPage(modelUrl, { threads = 'auto' } = {}) {
  const s = createPoemState();
  const { test, scheduleDraw, generation, handlers, tour } = wire(s);
  return {
    test,
    /** The mode's panel was shown or hidden (its canvases are sized when visible). */
    show(visible) {
      s.visible = visible;
      if (visible) {
        scheduleDraw();
        generation.askSteps();
      } else {
        // The steps' elements carry the same test ids as the textbook's: none stay behind.
        $('head-steps').replaceChildren();
        test.stepsShown = null;
      }
    },
    async start() {
      bindPoemControls(handlers);
      $('poem-tour-start').addEventListener('click', () => tour.start());
      bindExports(s);
      window.addEventListener('resize', scheduleDraw); // the thumbnails fit the width they have
      $('poem-prompt').value ||= DEFAULT_PROMPT;
      handlers.decodingChanged();
      $('poem-status').textContent = 'Loading the poem model…';
      s.model = await loadPoemModel(s, modelUrl, test, { threads });
      if (!s.model) return;
      $('poem-export-section').hidden = false;
      generation.begin(false);
      await loadExtras(modelUrl, s, (layer, head) => handlers.openHead(layer, head));
      scheduleDraw();
    },
  };
}
