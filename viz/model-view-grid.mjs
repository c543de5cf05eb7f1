// The model view's elements for one shape of model: a row per computed layer, in it a framed
// group per K/V head holding its query heads' thumbnails, and the line naming the groups.
import { el } from './dom.mjs';
import { createThumbnail } from './thumbnail.mjs';

// Visible numbers count from `base` (0, as attention is indexed, or 1); onSelect always from 0.
const headRange = (g, size, base) =>
  size === 1 ? `head ${g * size + base}` : `heads ${g * size + base}–${g * size + size - 1 + base}`;

/** The names of the K/V groups (none without grouped-query attention). */
export function groupNameNodes({ heads, kv }, base) {
  if (kv >= heads) return [];
  const size = heads / kv;
  return [
    el('span', { text: `Grouped-query attention: ${heads} query heads share ${kv} K/V heads, ${size} each:` }),
    ...Array.from({ length: kv }, (_, g) =>
      el('span', { class: 'wa-viz-groupname', text: `K/V head ${g + base}: ${headRange(g, size, base)}` }),
    ),
  ];
}

// Layer l, head h (of K/V head g): its cell, named for assistive technology, and its thumbnail.
function thumbCell(l, h, g, { heads, kv }, base) {
  const size = heads / kv;
  const canvas = el('canvas', {
    'aria-hidden': 'true',
    'data-testid': 'thumb-map',
    'data-layer': String(l),
    'data-head': String(h),
  });
  const groupText = kv < heads ? `, K/V head ${g + base} (shared by ${headRange(g, size, base)})` : '';
  const node = el(
    'div',
    {
      class: 'wa-viz-thumb',
      role: 'gridcell',
      tabindex: '-1',
      'aria-selected': 'false',
      'aria-label': `Layer ${l + base}, head ${h + base}${groupText}`,
      'data-layer': String(l),
      'data-head': String(h),
      'data-kv-head': String(g),
      'data-testid': 'thumb',
    },
    canvas,
    el('div', { 'aria-hidden': 'true', text: `L${l + base} H${h + base}` }),
  );
  return { node, thumb: createThumbnail(canvas) };
}

// One layer's row: { cells: [head] → { node, thumb }, node }.
function layerRow(l, shape, base) {
  const { heads, kv } = shape;
  const size = heads / kv;
  const cells = [];
  const groups = [];
  for (let g = 0; g < kv; g++) {
    const members = [];
    for (let h = g * size; h < (g + 1) * size; h++) {
      const cell = thumbCell(l, h, g, shape, base);
      cells.push(cell);
      members.push(cell.node);
    }
    groups.push(
      kv < heads
        ? el('div', { class: 'wa-viz-group', title: `K/V head ${g + base}: ${headRange(g, size, base)}` }, ...members)
        : el('div', { class: 'wa-viz-group wa-viz-group-plain' }, ...members),
    );
  }
  const node = el(
    'div',
    { role: 'row', class: 'wa-viz-row' },
    el('div', { role: 'rowheader', class: 'wa-viz-rowhead', text: `layer ${l + base}` }),
    ...groups,
  );
  return { cells, node };
}

/**
 * The grid's rows for `attention` (layers not computed, null, get no row) and shape { heads, kv }:
 * { cells: [layer][head] → { node, thumb } (empty for a missing layer), rows: the row elements }.
 */
export function buildGrid(attention, shape, base) {
  const cells = [];
  const rows = [];
  for (let l = 0; l < attention.length; l++) {
    if (!attention[l]) {
      cells.push([]);
      continue;
    }
    const row = layerRow(l, shape, base);
    cells.push(row.cells);
    rows.push(row.node);
  }
  return { cells, rows };
}
