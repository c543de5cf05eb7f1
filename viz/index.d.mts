// Types of wasm-attention/viz: views of attention weights for any page (no engine import).

/** What every view returns. */
export interface VizView<Options> {
  /** Redraws with any of the creation options; the ones not given keep their values. */
  update(data: Partial<Options>): void;
  /** Removes every element and listener the view added (the shared style sheet may stay). */
  dispose(): void;
}

export interface HeatmapOptions {
  /** Row-major weights [T, S]: T = queryTokens.length, S = keyTokens.length. */
  weights: Float32Array;
  queryTokens: readonly string[];
  /** Defaults to queryTokens. */
  keyTokens?: readonly string[];
  /** Masks key j for query i when j > i + S − T (the queries are the last T positions). Default false. */
  causal?: boolean;
  title?: string;
  /** Extension: a query row marked in the map (e.g. a token hovered elsewhere); −1 for none. */
  highlightRow?: number;
  /** Extension: called with the cell under the pointer, or null when it leaves the map. */
  onHover?: (cell: { query: number; key: number } | null) => void;
  /** Extension: called on a click or tap on a cell, or Enter/Space on the keyboard cursor's cell. */
  onSelect?: (cell: { query: number; key: number }) => void;
  /** Extension: called with the cursor's cell whenever a key (arrow, Home/End, Page Up/Down) moves it; not when `cursor` is set. */
  onCursor?: (cell: { query: number; key: number }) => void;
  /** Extension: the grid's height at zoom 1 in CSS pixels (default: 70 % of the window, at most the width). */
  height?: number;
  /** Extension: token positions in the read-out count from 0 (default, as the arrays are indexed) or 1. */
  numberFrom?: 0 | 1;
  /** Extension: puts the keyboard cursor on a cell (read out, panned into view); null hides it. */
  cursor?: { query: number; key: number } | null;
  /** Extension: the colour-scale bar above the map; false hides it (e.g. small maps beside one that shows it). Default true. */
  legend?: boolean;
  /** Extension: the −, + and Fit buttons; false hides them (the keys, Ctrl + wheel and a pinch still zoom). Default true. */
  controls?: boolean;
}

export interface HeadViewOptions {
  /** An array over layers of Float32Array [numHeads, T, T], as model.forward(…, { attention: true }) returns (null: a layer not computed; the drawn one must be there). */
  attention: ReadonlyArray<Float32Array | null>;
  /** T tokens. */
  tokens: readonly string[];
  /** The layer drawn, from 0. Default 0. */
  layer?: number;
  /** Extension: the title's layer, the head buttons' and the read-out's token numbers count from 0 (default) or 1. */
  numberFrom?: 0 | 1;
}

export interface ModelViewOptions {
  /** An array over layers of Float32Array [numHeads, T, T]; null for a layer not computed (it gets no row). */
  attention: ReadonlyArray<Float32Array | null>;
  tokens: readonly string[];
  /** K/V heads (grouped-query attention): numHeads / numKvHeads consecutive heads share one. Default numHeads. */
  numKvHeads?: number;
  /** Called on a click, Enter or Space on a thumbnail; layer and head count from 0. */
  onSelect?: (pick: { layer: number; head: number }) => void;
  /** Extension: a query row marked in every thumbnail; −1 for none. */
  highlightRow?: number;
  /** Extension: visible layer, head and K/V head numbers count from 0 (default, as attention is indexed) or 1; onSelect is always 0-based. */
  numberFrom?: 0 | 1;
  /** Extension: the thumbnail shown as selected (aria-selected), or null. */
  selected?: { layer: number; head: number } | null;
}

export function createHeatmap(element: HTMLElement, options: HeatmapOptions): VizView<HeatmapOptions>;
export function createHeadView(element: HTMLElement, options: HeadViewOptions): VizView<HeadViewOptions>;
export function createModelView(element: HTMLElement, options: ModelViewOptions): VizView<ModelViewOptions>;
/** A weight's colour exactly as the views paint it: [r, g, b] bytes (weights clamped to [0, 1]; NaN counts as 0). */
export function weightRGB(weight: number): [number, number, number];
