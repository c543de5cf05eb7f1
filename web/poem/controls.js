// The poem mode's inputs: its form and buttons, the token chips, the thumbnails and the large
// map (pointer and keys), turned into calls of the handlers poem.js passes in. Knows nothing
// of the engine or of how anything is drawn.
import { bindChipKeys } from './focus.js';

const $ = (id) => document.getElementById(id);

const PROMPT_DEBOUNCE_MS = 300;
const CURSOR_KEYS = ['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'Enter', ' '];

/** The cell under a CSS-pixel point of a drawn map (its data-layout): { i, j }, j = -1 on a row label, or null. */
function cellUnder(layout, x, y) {
  const g = layout.grid ?? { x: layout.x0, y: layout.y0, width: layout.cols * layout.cellWidth, height: Infinity };
  const i = Math.floor((y - layout.y0) / layout.cellHeight);
  if (y < g.y || y >= g.y + g.height || i < 0 || i >= layout.rows) return null;
  if (x < g.x) return x >= 0 ? { i, j: -1 } : null;
  const j = Math.floor((x - layout.x0) / layout.cellWidth);
  return x < g.x + g.width && j >= 0 && j < layout.cols ? { i, j } : null;
}

/**
 * @param {object} h   handlers
 * @param {() => void} h.promptChanged          the prompt was edited (debounced)
 * @param {() => void} h.decodingChanged
 * @param {() => void} h.generate
 * @param {() => void} h.stop
 * @param {(i: number) => void} h.hover          a token's row brought forward (-1: none)
 * @param {(i: number) => void} h.pickToken      a token chip clicked
 * @param {(layer: number, head: number) => void} h.openHead
 * @param {(i: number) => void} h.pickQuery      the large view's query row
 * @param {(canvas) => object|null} h.mapOf       → { kind, layout } of a model map
 * @param {(key: string) => void} h.key          a key on the focused large map
 * @param {(focused: boolean) => void} h.focusLarge
 * @param {() => void} h.samplingChanged        the temperature or top-k was edited (live)
 */
export function bindPoemControls(h) {
  bindForm(h);
  bindChips(h);
  bindMaps(h);
}

/** The prompt (debounced, and not while an input method composes), the decoding fields and the buttons. */
function bindForm(h) {
  let timer = 0;
  // An input method (pinyin …) composes a character from Latin letters: until compositionend the
  // prompt holds those letters, which are not the prompt the user means.
  let composing = false;
  const promptEdited = () => {
    clearTimeout(timer);
    timer = setTimeout(h.promptChanged, PROMPT_DEBOUNCE_MS);
  };
  $('poem-prompt').addEventListener('compositionstart', () => {
    composing = true;
    clearTimeout(timer);
  });
  $('poem-prompt').addEventListener('compositionend', () => {
    composing = false;
    promptEdited();
  });

  $('poem-controls').addEventListener('input', (e) => {
    if (e.target.name === 'poem-prompt') {
      if (composing || e.isComposing) return;
      promptEdited();
    } else if (e.target.name === 'poem-decoding') {
      h.decodingChanged();
    } else if (e.target.name === 'poem-temperature' || e.target.name === 'poem-top-k') {
      h.samplingChanged(); // live: the candidates at once, a running generation from its next token
    }
  });
  $('poem-controls').addEventListener('submit', (e) => {
    e.preventDefault();
    h.generate();
  });
  // The prompt is a textarea (poems have lines): Enter breaks the line, Ctrl/⌘+Enter generates.
  $('poem-prompt').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !e.isComposing && !composing) {
      e.preventDefault();
      h.generate();
    }
  });
  $('poem-generate').addEventListener('click', () => h.generate());
  $('poem-stop').addEventListener('click', () => h.stop());
}

/** The token chips: pointing, touching or focusing one brings its row forward; a click picks it. */
function bindChips(h) {
  const chips = $('poem-tokens');
  bindChipKeys(chips);
  const chipIndex = (e) => {
    const chip = e.target.closest?.('[data-testid=poem-token]');
    return chip ? Number(chip.dataset.index) : -1;
  };
  chips.addEventListener('mouseover', (e) => h.hover(chipIndex(e)));
  // A tap has no hover: a finger (or pen) touching a chip brings its row forward as pointing does.
  chips.addEventListener('pointerdown', (e) => {
    if (e.pointerType !== 'mouse' && chipIndex(e) >= 0) h.hover(chipIndex(e));
  });
  chips.addEventListener('focusin', (e) => h.hover(chipIndex(e)));
  chips.addEventListener('mouseleave', () => h.hover(-1));
  chips.addEventListener('focusout', () => h.hover(-1));
  chips.addEventListener('click', (e) => {
    const i = chipIndex(e);
    if (i >= 0) h.pickToken(i);
  });
}

/** The thumbnails and the large map: pointing brings a row forward, a click opens a head or picks a row. */
function bindMaps(h) {
  const hit = (e) => {
    const canvas = e.target;
    const meta = canvas instanceof HTMLCanvasElement ? h.mapOf(canvas) : null;
    if (!meta) return null;
    const r = canvas.getBoundingClientRect();
    return { meta, cell: cellUnder(meta.layout, e.clientX - r.left, e.clientY - r.top) };
  };

  const grid = $('model-grid');
  grid.addEventListener('mousemove', (e) => {
    const found = hit(e);
    if (found) h.hover(found.cell ? found.cell.i : -1);
  });
  grid.addEventListener('mouseleave', () => h.hover(-1));
  grid.addEventListener('click', (e) => {
    const button = e.target.closest('[data-testid=thumb]');
    if (button) h.openHead(Number(button.dataset.layer), Number(button.dataset.head));
  });

  const large = $('head-map');
  large.addEventListener('mousemove', (e) => {
    const found = hit(e);
    h.hover(found?.cell ? found.cell.i : -1);
  });
  large.addEventListener('mouseleave', () => h.hover(-1));
  large.addEventListener('click', (e) => {
    const found = hit(e);
    if (found?.cell) h.pickQuery(found.cell.i);
  });
  large.addEventListener('keydown', (e) => {
    if (!CURSOR_KEYS.includes(e.key)) return;
    e.preventDefault();
    h.key(e.key);
  });
  large.addEventListener('focus', () => h.focusLarge(true));
  large.addEventListener('blur', () => h.focusLarge(false));
  $('head-query').addEventListener('change', () => h.pickQuery(Number($('head-query').value)));
}
