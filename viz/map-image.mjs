// The colours of one attention map, kept in off-screen canvases so that showing the map again
// (a hover, a zoom, a pan) is one drawImage and never a pass over its T × S weights.
//
// Level f holds one pixel per f × f block of cells: the block's largest weight, so a sharp
// pattern (a diagonal, one bright key) survives being shown smaller than a pixel per cell, where
// plain down-scaling would drop it. A level's rows are coloured when first shown: zoomed into a
// 2,048-token map, only the rows in view are. When the same weights come back with one more query row (a
// token generated), only the pooled row that holds it is coloured again (one putImageData a level).
import { MASK_CSS, MASK_RGBA, WEIGHT_LUT, lutIndex } from './colour-scale.mjs';

const ROW_CAPACITY_STEP = 64;

/** Whether key j is masked for query i: queries are the last T of S positions. */
export const isMasked = (causal, i, j, T, S) => causal && j > i + S - T;

function newCanvas(width, height) {
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  return canvas;
}

function capacity(n, f) {
  const cells = Math.ceil(n / f);
  return Math.ceil((cells + 1) / ROW_CAPACITY_STEP) * ROW_CAPACITY_STEP;
}

/** Colours the level's rows r0 … r1−1 of the map { values, T, S, causal } in one putImageData. */
function paintRows({ values, T, S, causal }, level, r0, r1) {
  const { f } = level;
  const cols = Math.ceil(S / f);
  if (r1 <= r0 || cols === 0) return;
  const img = new ImageData(cols, r1 - r0);
  const px = new Uint32Array(img.data.buffer);
  const shift = Math.log2(f);
  const offset = S - T;
  const maxes = new Float32Array(cols);
  for (let r = r0; r < r1; r++) {
    const base = (r - r0) * cols;
    const i0 = r * f;
    const i1 = Math.min(T, i0 + f);
    maxes.fill(-Infinity);
    for (let i = i0; i < i1; i++) {
      const end = causal ? Math.min(S, i + offset + 1) : S;
      const row = i * S;
      for (let j = 0; j < end; j++) {
        const v = values[row + j];
        const c = j >> shift;
        if (v > maxes[c]) maxes[c] = v;
        else if (maxes[c] === -Infinity) maxes[c] = v !== v ? 0 : v; // NaN: drawn as 0, never as masked
      }
    }
    for (let c = 0; c < cols; c++) px[base + c] = maxes[c] === -Infinity ? MASK_RGBA : WEIGHT_LUT[lutIndex(maxes[c])];
  }
  level.ctx.putImageData(img, 0, r0);
}

// Room for the grown map [T, S]: a larger canvas holding a copy of the old pixels (not coloured again).
function grow(level, T, S) {
  const rows = capacity(T, level.f);
  const cols = capacity(S, level.f);
  if (rows <= level.rowCapacity && cols <= level.colCapacity) return;
  const canvas = newCanvas(Math.max(cols, level.colCapacity), Math.max(rows, level.rowCapacity));
  const ctx = canvas.getContext('2d');
  ctx.drawImage(level.canvas, 0, 0);
  const painted = new Uint8Array(canvas.height);
  painted.set(level.painted);
  Object.assign(level, { canvas, ctx, painted, rowCapacity: canvas.height, colCapacity: canvas.width });
}

class MapImage {
  constructor() {
    this.values = null;
    this.T = 0;
    this.S = 0;
    this.causal = false;
    this.levels = new Map(); // f → { f, canvas, ctx, rowCapacity, colCapacity, painted: Uint8Array per row }
  }

  /**
   * New weights [t, s]: 'same' (nothing to colour), 'append' (one query row more; one key more
   * with a causal mask; only that row coloured) or 'full' (every cached level dropped).
   */
  setData(weights, t, s, isCausal) {
    const { values, T, S, causal } = this;
    if (weights === values && t === T && s === S && isCausal === causal) return 'same';
    const appended =
      values !== null &&
      isCausal === causal &&
      t === T + 1 &&
      (s === S || (causal && s === S + 1)) &&
      this.sameRows(weights, s);
    const same = values !== null && !appended && t === T && s === S && isCausal === causal && this.sameRows(weights, s);
    this.values = weights;
    if (same) return 'same';
    this.T = t;
    this.S = s;
    this.causal = isCausal;
    if (!appended) {
      this.levels.clear();
      return 'full';
    }
    for (const level of this.levels.values()) this.appendRow(level, T, S);
    return 'append';
  }

  /** The canvas of level f (a power of two), its rows r0 … r1−1 (level rows) coloured. */
  level(f, r0 = 0, r1 = Infinity) {
    const level = this.levels.get(f) ?? this.build(f);
    this.ensureRows(level, r0, r1);
    return level.canvas;
  }

  dispose() {
    this.levels.clear();
    this.values = null;
  }

  // Whether the kept rows are the first rows of `weights`: old row i over the old keys is weights[i * s + j] now.
  sameRows(weights, s) {
    const { values, T, S } = this;
    for (let i = 0; i < T; i++) {
      const a = i * S;
      const b = i * s;
      for (let j = 0; j < S; j++) {
        const x = values[a + j];
        const y = weights[b + j];
        if (x !== y && !(x !== x && y !== y)) return false;
      }
    }
    return true;
  }

  // A kept level after one query row (and with a causal mask one key) more than its old [oldT, oldS].
  appendRow(level, oldT, oldS) {
    grow(level, this.T, this.S);
    const r = Math.floor(oldT / level.f);
    // A new key column is masked for every old row: one fill, the colour those pixels need.
    const col = Math.ceil(oldS / level.f);
    if (Math.ceil(this.S / level.f) > col && r > 0) {
      level.ctx.fillStyle = MASK_CSS;
      level.ctx.fillRect(col, 0, 1, r);
    }
    // The row holding the new query: coloured again if it was shown, else when it is.
    if (level.painted[r]) paintRows(this, level, r, r + 1);
  }

  build(f) {
    const level = { f, rowCapacity: capacity(this.T, f), colCapacity: capacity(this.S, f) };
    level.canvas = newCanvas(level.colCapacity, level.rowCapacity);
    level.ctx = level.canvas.getContext('2d');
    level.painted = new Uint8Array(level.rowCapacity);
    this.levels.set(f, level);
    return level;
  }

  // Colours the level's rows r0 … r1−1 not coloured yet, a run of them per putImageData.
  ensureRows(level, r0, r1) {
    const end = Math.min(r1, Math.ceil(this.T / level.f));
    for (let r = Math.max(0, r0); r < end;) {
      if (level.painted[r]) {
        r++;
        continue;
      }
      let stop = r;
      while (stop < end && !level.painted[stop]) stop++;
      paintRows(this, level, r, stop);
      level.painted.fill(1, r, stop);
      r = stop;
    }
  }
}

/** The kept colours of one map: { setData(weights, t, s, causal), level(f, r0, r1), dispose() }. */
export function createMapImage() {
  return new MapImage();
}

/** The pooling level for cells of `cellDevicePx` device pixels: a power of two, 1 when cells ≥ 1 px. */
export function levelFor(cellDevicePx) {
  if (cellDevicePx >= 1) return 1;
  return 2 ** Math.ceil(Math.log2(1 / cellDevicePx));
}
