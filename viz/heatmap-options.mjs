// The options of createHeatmap: their names, and the checks every set of them passes, at creation
// and at each update (a TypeError or RangeError naming the option, the view unchanged).
import {
  checkBoolean,
  checkFloat32,
  checkFunction,
  checkIndex,
  checkNumberFrom,
  checkString,
  checkTokens,
  describe,
} from './checks.mjs';

export const VIEW = 'createHeatmap';
export const KNOWN = [
  'weights',
  'queryTokens',
  'keyTokens',
  'causal',
  'title',
  'highlightRow',
  'onHover',
  'onSelect',
  'onCursor',
  'height',
  'cursor',
  'numberFrom',
  'legend',
  'controls',
];

export function validate(o) {
  checkTokens(VIEW, 'queryTokens', o.queryTokens);
  checkTokens(VIEW, 'keyTokens', o.keyTokens);
  checkFloat32(VIEW, 'weights', o.weights, o.queryTokens.length * o.keyTokens.length);
  checkBoolean(VIEW, 'causal', o.causal);
  checkBoolean(VIEW, 'legend', o.legend);
  checkBoolean(VIEW, 'controls', o.controls);
  checkString(VIEW, 'title', o.title);
  checkIndex(VIEW, 'highlightRow', o.highlightRow, -1, Number.MAX_SAFE_INTEGER);
  checkFunction(VIEW, 'onHover', o.onHover);
  checkFunction(VIEW, 'onSelect', o.onSelect);
  checkFunction(VIEW, 'onCursor', o.onCursor);
  checkNumberFrom(VIEW, o.numberFrom);
  if (o.cursor != null) {
    if (typeof o.cursor !== 'object')
      throw new TypeError(`${VIEW}: cursor must be { query, key } or null, got ${describe(o.cursor)}`);
    checkIndex(VIEW, 'cursor.query', o.cursor.query, 0, o.queryTokens.length - 1);
    checkIndex(VIEW, 'cursor.key', o.cursor.key, 0, o.keyTokens.length - 1);
  }
  if (o.height !== undefined && !(typeof o.height === 'number' && o.height >= 40 && Number.isFinite(o.height)))
    throw new RangeError(`${VIEW}: height must be a number of CSS pixels ≥ 40, got ${describe(o.height)}`);
}
