// The trained-model mode: its state (the model, the current run, hover and selection) and the
// flow prompt → worker → views. The engine client comes from main.js (only main.js starts the
// engine); poem-controls.js brings the events, poem-view.js and model-view.js draw.
import { DEFAULT_PROMPT, generationRequest, poemProblems, readPoemSettings } from './poem-settings.js';
import { addPrompt, addToken, createPoemRun, finishRun, labelsOf, matrixOf, stepsOf } from './poem-run.js';
import { createModelView } from './model-view.js';
import { renderPoemTokens, renderTopTokens } from './poem-view.js';
import { bindPoemControls } from './poem-controls.js';
import { renderSteps } from './steps.js';
import { moveCell } from './selection.js';
import { formatWeight, hideTooltip, showTooltip } from './tooltip.js';
import { showErrors } from './status.js';
import { el } from './dom.js';

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
  };
  // What the browser tests read (and a reader in the console): window.__poem.
  const test = {
    state: 'loading',
    tokenCounts: [], // the number of generated tokens shown after each drawn frame
    stepsShown: null, // { layer, head, query } of the steps on screen
    done: null, // reason of the last finished run
    get run() {
      const r = s.run;
      return r && { id: r.id, n: r.n, promptLength: r.promptLength, ids: r.ids, texts: r.texts, done: r.done, reason: r.reason,
        top: r.top };
    },
    get ui() {
      return s.ui;
    },
    /** Head h of layer l as drawn: [n × n] weights. */
    matrix: (l, h) => (s.run ? Array.from(matrixOf(s.run, l, h)) : null),
    idle: () => new Promise((resolve) => {
      const check = () => (s.generating ? setTimeout(check, 20) : resolve());
      check();
    }),
  };

  // ---------- drawing ----------

  function draw() {
    s.frame = 0;
    if (s.owed) {
      const id = s.owed;
      s.owed = 0;
      setTimeout(() => { if (s.generating === id) engine.model.next(id); }, PACE_MS);
    }
    if (!s.visible) return;
    const r = s.run;
    view.render(r, s.ui);
    $('poem-output-section').hidden = !r;
    if (!r) return;
    renderPoemTokens(r, { picked: s.picked, highlight: s.ui.highlight });
    const settings = readPoemSettings($('poem-controls'));
    renderTopTokens(r, s.picked >= 0 ? s.picked : r.n - (r.n > r.promptLength ? 1 : 0), { greedy: settings.greedy });
    test.tokenCounts.push(r.n - r.promptLength);
  }

  /** One drawing per frame, however many tokens arrived in it. */
  function scheduleDraw() {
    if (!s.frame) s.frame = requestAnimationFrame(draw);
  }

  function redrawMaps() {
    if (!s.run || !s.visible) return;
    view.redraw(s.run, s.ui);
    for (const chip of document.querySelectorAll('#poem-tokens [data-testid=poem-token]')) {
      chip.classList.toggle('lit', Number(chip.dataset.index) === s.ui.highlight);
    }
  }

  function setStatus(text) {
    $('poem-status').textContent = text;
  }

  function setBusy(busy) {
    $('poem-stop').disabled = !busy;
    $('poem-generate').textContent = busy ? 'Restart' : 'Generate';
  }

  // ---------- the four steps of the opened head ----------

  function askSteps() {
    const r = s.run;
    const open = s.ui.open;
    const box = $('head-steps');
    if (!r || !open || !s.visible || r.n === 0) return;
    const query = Math.min(s.ui.query, r.n - 1);
    const ask = ++s.stepsAsked;
    engine.model.steps({ run: r.id, layer: open.layer, head: open.head, query }).then(
      (steps) => {
        if (ask !== s.stepsAsked || s.run?.id !== r.id) return;
        renderSteps(box, stepsOf(s.run, open, query, steps));
        test.stepsShown = { layer: open.layer, head: open.head, query };
      },
      (e) => {
        if (ask !== s.stepsAsked || s.run?.id !== r.id) return;
        box.replaceChildren(el('p', { class: 'error inline', text: `The four steps could not be computed — ${e.name}: ${e.message}` }));
      },
    );
  }

  // ---------- runs ----------

  function begin(generating) {
    const settings = readPoemSettings($('poem-controls'));
    const { config, vocab } = s.model;
    const problems = poemProblems(settings, { vocab, maxLen: config.maxLen }, { generating });
    showErrors($('poem-error'), problems);
    if (problems.length) {
      if (s.generating) engine.model.stop(s.generating);
      s.generating = 0;
      s.run = null;
      setBusy(false);
      setStatus('');
      hideTooltip($('tooltip'));
      scheduleDraw();
      return;
    }
    const request = generationRequest(settings, { generating });
    const capacity = Array.from(settings.text).length + 1 + request.maxNew;
    let run = null;
    const id = engine.model.generate(request, (msg) => {
      if (msg.type === 'model-prompt') {
        run = addPrompt(createPoemRun({ id, nLayers: config.nLayers, nHeads: config.nHeads, nKvHeads: config.nKvHeads, capacity }), msg);
      } else if (msg.type === 'model-token') {
        run = addToken(run, msg);
        s.owed = id;
      } else {
        run = run ? finishRun(run, msg.reason, msg.top) : null;
        s.generating = 0;
        test.done = msg.reason;
        setBusy(false);
        if (msg.error) showErrors($('poem-error'), [`The model failed — ${msg.error.name}: ${msg.error.message}`]);
        setStatus(run && generating ? doneText(run, msg.reason) : '');
      }
      if (!run) return;
      if (s.ui.followLatest) s.ui.query = run.n - 1;
      s.run = run;
      scheduleDraw();
      if (msg.type === 'model-prompt' || msg.type === 'model-done') askSteps();
    });
    s.generating = id;
    s.picked = -1;
    test.tokenCounts = [];
    test.done = null;
    setBusy(generating); // a prompt alone is one message: nothing to stop
    setStatus(generating ? 'Generating…' : '');
  }

  // ---------- events ----------

  function pickQuery(i) {
    s.ui = { ...s.ui, query: i, followLatest: s.run ? i === s.run.n - 1 : true, cursor: s.ui.cursor && { ...s.ui.cursor, i } };
    redrawMaps();
    askSteps();
  }

  function showCell() {
    const meta = view.mapOf($('head-map'));
    const { i, j } = s.ui.cursor;
    const r = $('head-map').getBoundingClientRect();
    const at = { x: r.left + meta.layout.x0 + (j + 1) * meta.layout.cellWidth, y: r.top + meta.layout.y0 + (i + 1) * meta.layout.cellHeight };
    const hit = cellInfo(meta, { i, j });
    showTooltip($('tooltip'), at, hit);
    $('map-readout').textContent = `${hit.label}: query ${hit.query} #${i + 1}, key ${hit.key} #${j + 1}, weight ${hit.masked ? '0 (masked)' : formatWeight(hit.weight)}`;
  }

  function cellInfo(meta, { i, j }) {
    const labels = labelsOf(s.run);
    return { i, j, query: labels[i], key: labels[j], weight: j >= 0 ? meta.matrix[i * meta.n + j] : undefined, masked: j > i,
      label: `layer ${meta.layer + 1}, head ${meta.head + 1}` };
  }

  const handlers = {
    promptChanged: () => { if (s.model) begin(false); },
    decodingChanged() {
      const greedy = readPoemSettings($('poem-controls')).greedy;
      for (const name of ['poem-temperature', 'poem-top-k', 'poem-seed']) $('poem-controls').elements[name].disabled = greedy;
    },
    generate: () => { if (s.model) begin(true); },
    stop: () => { if (s.generating) engine.model.stop(s.generating); },
    hover(i) {
      if (i === s.ui.highlight) return;
      s.ui = { ...s.ui, highlight: i };
      redrawMaps();
    },
    pickToken(i) {
      s.picked = i;
      pickQuery(i);
      if (s.run) renderPoemTokens(s.run, { picked: i, highlight: s.ui.highlight });
      if (s.run) renderTopTokens(s.run, i, { greedy: readPoemSettings($('poem-controls')).greedy });
    },
    openHead(layer, head) {
      s.ui = { ...s.ui, open: { layer, head } };
      scheduleDraw();
      askSteps();
      requestAnimationFrame(() => $('head-section').scrollIntoView({ block: 'nearest' }));
    },
    pickQuery,
    mapOf: (canvas) => view.mapOf(canvas),
    pointAt(cell, at) {
      if (!cell || !s.run) return hideTooltip($('tooltip'));
      showTooltip($('tooltip'), at, cellInfo(view.mapOf($('head-map')), cell));
    },
    key(key) {
      if (!s.run) return;
      const cursor = s.ui.cursor ?? { i: s.ui.query, j: 0 };
      if (key === 'Enter' || key === ' ') {
        pickQuery(cursor.i);
      } else {
        s.ui = { ...s.ui, cursor: moveCell(cursor, key, s.run.n) ?? cursor };
        redrawMaps();
      }
      showCell();
    },
    focusLarge(focused) {
      s.ui = { ...s.ui, cursor: focused ? { i: Math.min(s.ui.query, (s.run?.n ?? 1) - 1), j: 0 } : null };
      redrawMaps();
      if (focused && s.run) showCell();
      else hideTooltip($('tooltip'));
    },
  };

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
      window.addEventListener('resize', scheduleDraw); // the thumbnails fit the width they have
      $('poem-prompt').value ||= DEFAULT_PROMPT;
      handlers.decodingChanged();
      setStatus('Loading the poem model…');
      let loaded;
      try {
        loaded = await engine.model.load(modelUrl);
      } catch (e) {
        setStatus('');
        showErrors($('poem-error'), [`The poem model could not be loaded from ${modelUrl.pathname} — ${e.name}: ${e.message}. The textbook tab works without it.`]);
        test.state = 'failed';
        document.body.dataset.model = 'failed';
        $('poem-controls').hidden = true;
        return;
      }
      if (!loaded.ready) {
        setStatus('');
        showErrors($('poem-error'), [
          `The trained poem model is not here: ${modelUrl.pathname} answered ${loaded.status ? `HTTP ${loaded.status}` : 'nothing'}. ` +
          'The npm package does not ship the model (2 MB of weights); it comes with a clone of the repository ' +
          '(models/tang-poems/model.safetensors next to web/). Everything else works: the textbook tab shows attention on random weights.',
        ]);
        test.state = 'missing';
        document.body.dataset.model = 'missing';
        $('poem-controls').hidden = true;
        return;
      }
      s.model = { config: loaded.config, vocab: loaded.vocab };
      setStatus('');
      $('poem-model-facts').textContent = describeModel(loaded.config, loaded.vocab);
      test.state = 'ready';
      document.body.dataset.model = 'ready';
      begin(false);
    },
  };
}

const ENDINGS = {
  maxNew: 'as many as asked for',
  maxLength: 'the model reads no more tokens',
  poemStart: 'the model ended the poem (its next token would start a new one)',
  stopped: 'stopped',
  error: 'failed',
};

function doneText(run, reason) {
  const made = run.n - run.promptLength;
  return `${made} character${made === 1 ? '' : 's'} generated: ${ENDINGS[reason] ?? reason}.`;
}

function describeModel(c, vocab) {
  return `${c.nLayers} layers × ${c.nHeads} heads (${c.nKvHeads} key/value heads, grouped-query), d_model ${c.dModel}, ` +
    `heads of ${c.headDim}, rotary positions (RoPE), ${vocab.length.toLocaleString('en')} tokens (one per character).`;
}
