// A forward's repeated layer arguments: one object may serve both create and forward, so a forward
// may give the layer's own arguments again, and each must agree with the layer it was made as.
import { parseAlibi, parseRope } from './layer-options.mjs';
import { parseWeightDtype } from './storage-dtypes.mjs';

// The layer's sizes by their public names (embedDim, numHeads, … or dModel).
export function layerSizes(layer) {
  return layer.outProjection
    ? {
        embedDim: layer.qIn,
        numHeads: layer.numHeads,
        kdim: layer.kIn,
        vdim: layer.vIn,
        numKvHeads: layer.numKvHeads,
        headDim: layer.headDimQk,
      }
    : { dModel: layer.qIn };
}

// A forward may repeat the layer's own arguments (one object may serve both create and forward):
// each is checked as at creation and must agree with the layer, else a RangeError — a setting the
// layer was made without (a window, RoPE, ALiBi) is never silently ignored.
export function checkRepeatedLayerArgs(c, layer, sizes, tensorLengths) {
  for (const name in c.args) {
    if (c.args[name] === undefined) continue;
    if (Object.hasOwn(sizes, name) && c.size(name) !== sizes[name]) {
      throw c.rangeError(name, `${sizes[name]} as when the layer was created`, c.args[name]);
    }
    if (Object.hasOwn(tensorLengths, name) && c.has(name)) c.length(name, c.tensor(name), ...tensorLengths[name]);
  }
  if (c.args.weightDtype !== undefined) {
    const dtype = parseWeightDtype(c, 'weightDtype');
    if (dtype !== layer.weightDtype)
      throw c.rangeError('weightDtype', `'${layer.weightDtype}' as when the layer was created`, `'${dtype}'`);
  }
  if (!layer.outProjection) return;
  const differs = (name, given, made) => {
    throw c.rangeError(name, `${made} as when the layer was created (a forward cannot change it)`, given);
  };
  if (c.args.slidingWindow !== undefined) {
    const window = c.has('slidingWindow') ? c.size('slidingWindow') : 0;
    if (window !== layer.slidingWindow)
      differs('slidingWindow', window || String(c.args.slidingWindow), layer.slidingWindow || 'absent (no window)');
  }
  if (c.args.rope !== undefined) {
    const rope = parseRope(c, layer.headDimQk);
    const text = (r) => (r ? `{ dim: ${r.dim}, base: ${r.base}, interleaved: ${r.interleaved} }` : 'absent (no RoPE)');
    if (text(rope) !== text(layer.rope)) differs('rope', text(rope), text(layer.rope));
  }
  if (c.args.alibi !== undefined) {
    const alibi = parseAlibi(c, layer.numHeads);
    const made = layer.alibi ? (layer.weights.alibiSlopes ?? true) : null;
    const same =
      alibi === made ||
      (alibi !== null &&
        typeof alibi === 'object' &&
        made !== null &&
        typeof made === 'object' &&
        Float32Array.from(alibi).every((x, h) => Object.is(x, Math.fround(made[h]))));
    const text = (a) =>
      a === null
        ? 'absent (no ALiBi)'
        : a === true
          ? "true (the paper's slopes)"
          : `slopes [${Array.from(a).join(', ')}]`;
    if (!same) differs('alibi', text(alibi), text(made));
  }
}
