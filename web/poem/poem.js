// The trained-model tab: its state (the model, the current run, hover and selection), drawing it
// once a frame, and its parts wired together: poem-loading.js loads the model, poem-generation.js
// runs prompts and generations, poem-handlers.js turns poem-controls.js's events into state, and
// poem-view.js and model-view.js draw. The engine client comes from main.js (only main.js starts
// the engine).
import { DEFAULT_PROMPT, readPoemSettings } from './settings.js';
import { matrixOf } from './run.js';
import { createModelView } from './model-view.js';
import { renderPoemTokens, renderTopTokens } from './view.js';
import { bindPoemControls } from './controls.js';
import { createGeneration } from './generation.js';
import { poemHandlers } from './handlers.js';
import { loadPoemModel } from './loading.js';
import { keepChipFocus } from './focus.js';
import { markThumbnails, readHeads, renderHeadBadges } from './heads.js';
import { readRecited, recitedSegments } from './recited.js';
import { createTour, tourStops } from './tour.js';
import { saveAttentionJSON, saveHeadCSV } from './export.js';

const $ = (id) => document.getElementById(id);

// The pause after a generated token is drawn before the next is asked for: long enough to read
// the tokens arriving one by one (the model itself needs a few milliseconds per token).
const PACE_MS = 60;

/**
 * @param {{ model: object }} engine   engine.js's client (its model part is used)
 * @param {URL} modelUrl
 * @returns {{ start(): Promise<void>, show(visible: boolean), test: object }}
 */
export function createPoemPage(engine, modelUrl) {
  const view = createModelView();
  const s = {
    model: null, // { config, vocab }
    run: null,
    generating: 0, // id of the generation in flight, 0 when none
    visible: true,
    frame: 0,
    picked: -1, // the chip whose top tokens are shown; -1: the latest step
    ui: { highlight: -1, open: null, query: 0, cursor: null, followLatest: true },
    stepsAsked: 0,
    owed: 0, // generation whose last token awaits drawing before the next is asked for
    mode: '', // what s.generating runs: 'prompt' or 'generate'
    stopReason: '', // 'edited': the running generation was stopped because the prompt changed
    heads: [], // heads.json's named heads (poem-heads.js)
    recited: null, // recited.json's hashes (poem-recited.js)
    segments: [], // the recited segments of the run on screen
  };
  // What the browser tests read (and a reader in the console): window.__poem.
  const test = {
    state: 'loading',
    tokenCounts: [], // the number of generated tokens shown after each drawn frame
    stepsShown: null, // { layer, head, query } of the steps on screen
    done: null, // reason of the last finished run
    get run() {
      const r = s.run;
      return (
        r && {
          id: r.id,
          n: r.n,
          promptLength: r.promptLength,
          ids: r.ids,
          texts: r.texts,
          done: r.done,
          reason: r.reason,
          top: r.top,
          tokenMs: r.tokenMs,
          temperature: r.temperature,
          drawnAt: r.drawnAt,
        }
      );
    },
    get ui() {
      return s.ui;
    },
    /** heads.json's heads as badged, and the recited segments of the run on screen. */
    get heads() {
      return s.heads;
    },
    get recited() {
      return s.segments;
    },
    tourStep: () => tour.step(),
    /** Head h of layer l as drawn: [n × n] weights. */
    matrix: (l, h) => (s.run ? Array.from(matrixOf(s.run, l, h)) : null),
    idle: () =>
      new Promise((resolve) => {
        const check = () => (s.generating ? setTimeout(check, 20) : resolve());
        check();
      }),
  };

  function draw() {
    s.frame = 0;
    if (s.owed) {
      const id = s.owed;
      s.owed = 0;
      setTimeout(() => {
        if (s.generating === id) engine.model.next(id);
      }, PACE_MS);
    }
    if (!s.visible) return;
    const r = s.run;
    view.render(r, s.ui);
    markThumbnails($('model-grid'), s.heads);
    $('poem-output-section').hidden = !r;
    if (!r) return;
    renderChips();
    const settings = readPoemSettings($('poem-controls'));
    renderTopTokens(r, s.picked >= 0 ? s.picked : r.n - (r.n > r.promptLength ? 1 : 0), { greedy: settings.greedy });
    test.tokenCounts.push(r.n - r.promptLength);
  }

  /** The token chips (the focused one keeps the focus), with the lines recited from the anthology marked. */
  function renderChips() {
    const r = s.run;
    keepChipFocus(() => renderPoemTokens(r, { picked: s.picked, highlight: s.ui.highlight }));
    s.segments = s.recited ? recitedSegments(r.texts, r.promptLength, s.recited) : [];
    const recited = new Set(
      s.segments.flatMap(({ start, end }) => Array.from({ length: end - start }, (_, k) => start + k)),
    );
    for (const chip of document.querySelectorAll('#poem-tokens [data-testid=poem-token]')) {
      const on = recited.has(Number(chip.dataset.index));
      chip.classList.toggle('recited', on);
      if (on && !chip.title) chip.title = 'recited from the anthology';
    }
    const note = $('poem-recited');
    const made = r.n - r.promptLength;
    if (!s.recited || made === 0) note.replaceChildren();
    else if (s.segments.length === 0)
      note.textContent = 'None of the lines it wrote is a line of the anthology: this verse is its own.';
    else
      note.replaceChildren(
        `Recited from the anthology (underlined in green): `,
        ...s.segments.flatMap((g, k) => [
          k ? ', ' : '',
          Object.assign(document.createElement('mark'), { textContent: g.text }),
        ]),
        '.',
      );
    $('poem-export-csv').disabled = !s.ui.open;
    for (const b of document.querySelectorAll('[data-testid=head-badge]'))
      b.classList.toggle(
        'open',
        Number(b.dataset.layer) === s.ui.open?.layer && Number(b.dataset.head) === s.ui.open?.head,
      );
  }

  /** One drawing per frame, however many tokens arrived in it. */
  function scheduleDraw() {
    if (!s.frame) s.frame = requestAnimationFrame(draw);
  }

  function redrawMaps() {
    if (!s.run || !s.visible) return;
    view.redraw(s.run, s.ui);
    markThumbnails($('model-grid'), s.heads);
    for (const chip of document.querySelectorAll('#poem-tokens [data-testid=poem-token]')) {
      chip.classList.toggle('lit', Number(chip.dataset.index) === s.ui.highlight);
    }
  }

  const generation = createGeneration({ engine, s, test, scheduleDraw });
  const { begin, askSteps } = generation;
  const handlers = poemHandlers({ renderChips, engine, s, view, scheduleDraw, redrawMaps, generation });

  const tour = createTour($('poem-tour'), {
    stops: () => tourStops(s.heads),
    run: () => s.run,
    matrix: (l, h) => matrixOf(s.run, l, h),
    show(layer, head, query) {
      handlers.openHead(layer, head);
      handlers.pickQuery(query);
    },
  });

  /** heads.json and recited.json beside the model: the badges, the tour and the recited lines. */
  async function loadExtras(config) {
    const get = async (name) => {
      const res = await fetch(new URL(name, modelUrl));
      if (!res.ok) throw new Error(`${name} answered HTTP ${res.status}`);
      return res.json();
    };
    const [heads, recited] = await Promise.allSettled([get('heads.json'), get('recited.json')]);
    if (heads.status === 'fulfilled') {
      s.heads = readHeads(heads.value, config);
      renderHeadBadges($('poem-head-badges'), s.heads, (layer, head) => handlers.openHead(layer, head));
      $('poem-heads-section').hidden = s.heads.length === 0;
    }
    if (recited.status === 'fulfilled') s.recited = readRecited(recited.value);
    scheduleDraw();
  }

  function bindExtras() {
    $('poem-tour-start').addEventListener('click', () => tour.start());
    $('poem-export-json').addEventListener('click', () => {
      if (s.run)
        saveAttentionJSON(s.run, { config: { ...s.model.config }, settings: readPoemSettings($('poem-controls')) });
    });
    $('poem-export-csv').addEventListener('click', () => {
      if (s.run && s.ui.open) saveHeadCSV(s.run, s.ui.open.layer, s.ui.open.head);
    });
  }

  return {
    test,
    /** The mode's panel was shown or hidden (its canvases are sized when visible). */
    show(visible) {
      s.visible = visible;
      if (visible) {
        scheduleDraw();
        askSteps();
      } else {
        // The steps' elements carry the same test ids as the textbook's: none stay behind.
        $('head-steps').replaceChildren();
        test.stepsShown = null;
      }
    },
    async start() {
      bindPoemControls(handlers);
      bindExtras();
      window.addEventListener('resize', scheduleDraw); // the thumbnails fit the width they have
      $('poem-prompt').value ||= DEFAULT_PROMPT;
      handlers.decodingChanged();
      $('poem-status').textContent = 'Loading the poem model…';
      s.model = await loadPoemModel(engine, modelUrl, test);
      if (!s.model) return;
      $('poem-export-section').hidden = false;
      begin(false);
      await loadExtras(s.model.config);
    },
  };
}
