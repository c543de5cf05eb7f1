// The views' shared style sheet, added once to the document (it may stay after dispose: other
// views can share it). Class names start with wa-viz- so they don't meet a page's own.

const STYLE_ID = 'wa-viz-styles';

const CSS = `
.wa-viz { font: 13px/1.4 system-ui, "WenQuanYi Micro Hei", "Noto Sans CJK SC", sans-serif; color: #1d1f23; max-width: 100%; }
.wa-viz-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 8px; margin: 0 0 4px; }
.wa-viz-bar > [hidden] { display: none; }
.wa-viz-title { font-weight: 600; margin-right: auto; }
.wa-viz button { font: inherit; padding: 2px 8px; min-width: 28px; min-height: 24px; border: 1px solid #b9c0cc; border-radius: 5px; background: #f4f6fa; color: #1d1f23; cursor: pointer; }
.wa-viz button:hover { background: #e4eaf4; }
.wa-viz button:focus-visible, .wa-viz canvas:focus-visible, .wa-viz [role=gridcell]:focus-visible { outline: 2px solid #1a56c4; outline-offset: 2px; }
.wa-viz canvas { display: block; max-width: none; }
.wa-viz-stage { overflow: hidden; max-width: 100%; }
.wa-viz-readout { margin: 4px 0 0; min-height: 1.4em; font-size: 12.5px; color: #333; overflow-wrap: anywhere; }
.wa-viz-legend { display: inline-flex; align-items: center; gap: 4px; font-size: 11px; color: #4a505c; }
.wa-viz-legend-bar { position: relative; width: 96px; height: 10px; border: 1px solid #9aa1ad; }
.wa-viz-heads { display: flex; flex-wrap: wrap; gap: 4px; }
.wa-viz-heads button[aria-pressed=false] { opacity: 0.65; background: #fff; text-decoration: line-through; }
.wa-viz-swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; border-radius: 2px; vertical-align: -1px; }
.wa-viz-scroll { max-height: 70vh; overflow: auto; }
.wa-viz-grid { display: grid; gap: 4px; align-items: start; overflow-x: auto; padding: 3px; }
.wa-viz-grid [role=row] { display: contents; }
.wa-viz-rowhead { align-self: center; font-size: 11px; color: #4a505c; white-space: nowrap; }
.wa-viz-group { display: flex; gap: 3px; padding: 2px 3px 3px; border: 1px solid #c9ced8; border-radius: 5px; }
.wa-viz-groupname { font-size: 11px; color: #4a505c; text-align: center; white-space: nowrap; }
.wa-viz-thumb { margin: 0; padding: 1px; border: 2px solid transparent; border-radius: 4px; cursor: pointer; text-align: center; font-size: 10.5px; color: #333; }
.wa-viz-thumb[aria-selected=true] { border-color: #c0392b; }
.wa-viz-thumb:hover { border-color: #7a8496; }
.wa-viz-thumb canvas { margin: 0 auto; }
`;

/** Adds the shared style sheet to the element's document unless it is already there. */
export function ensureStyles(doc) {
  if (doc.getElementById(STYLE_ID)) return;
  const style = doc.createElement('style');
  style.id = STYLE_ID;
  style.textContent = CSS;
  doc.head.append(style);
}
