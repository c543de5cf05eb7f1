// What the textbook's captions and legends say about a run: how each view was computed, and the
// colour scale its maps and bars share. Text only; the views place it.

/** What a legend line says of a view's bars: their axis, and the maps' one colour scale. */
export const barScale = (max, what) =>
  `Colours: weight 0 (dark purple) … 1 (yellow) on the maps' square-root scale, the same in the bars and steps below. ` +
  `The bars' axis runs 0 … ${max.toPrecision(3)}, the largest weight of ${what}.`;

/** The single head's caption, for settings s. */
export const selfCaption = (s) =>
  `Every token's embedding x (d_model = ${s.dModel}) is projected to a query q = x·W_Qᵀ, a key k = x·W_Kᵀ and a value v = x·W_Vᵀ. ` +
  `Row i shows where query token i looks: its scores q·kⱼ against every key are scaled by 1/√d_k = 1/√${s.dModel}, ` +
  `softmax turns them into weights that sum to 1 across the row, and the token's output is the weighted sum of the values. ` +
  `Bright = much attention.` +
  (s.isCausal
    ? ' Hatched grey cells are masked by the causal mask: a token may not look at later tokens, so their weight is exactly 0.'
    : '') +
  ' Hover a cell (or focus the map and use the arrow keys) to read its weight under the map; click a cell (or press Enter) to follow that query below.';

/** The heads' caption, for settings s (heads of headDim dimensions each). */
export const headsCaption = (s, headDim) =>
  `nn.MultiheadAttention splits d_model = ${s.dModel} into ${s.numHeads} heads of ${headDim} dimensions. ` +
  `Each head projects Q, K and V into its own ${headDim}-dimensional subspace and runs the same steps there — scores, scaling by 1/√${headDim}, softmax, weighted sum — ` +
  `so different heads can attend to different things. Their outputs are concatenated and mixed by the output projection. ` +
  `The last map is the average over heads, what PyTorch returns by default. All maps here share one colour scale.`;

/** The caption over the picked query's bars, in the view labelled viewLabel. */
export const rowCaption = (token, query, viewLabel) =>
  `Below: how query “${token}” (position ${query + 1}) spreads its attention over the keys in ${viewLabel}, on the colour scale of that heatmap.`;

export const NO_INTERMEDIATES =
  'The engine returned no intermediates (the returnIntermediates option), so the four steps cannot be shown with its numbers.';
