// What the textbook's controls (controls.js) do to the tab: recompute after a settings change,
// pick a query or view, follow a map's focus, and export the run as JSON or PNG.
import { exportDocument, exportPanels } from './export.js';
import { downloadJSON, downloadPNG } from '../shared/export-files.js';
import { pickQuery } from './selection.js';

/** @param tab  the textbook tab (textbook.js): its views, selection, run and engine, read and set live */
export function textbookHandlers(tab) {
  const { views } = tab;
  return {
    settingsChanged: (delay) => tab.schedule(delay),
    mapOf: (canvas) => views.mapOf(canvas),
    pickRow(canvas, i) {
      tab.select(pickQuery(tab.selection, views.mapOf(canvas).key, i));
    },
    focus(canvas, focused) {
      const key = views.mapOf(canvas).key;
      tab.focused = focused ? key : tab.focused === key ? null : tab.focused;
      if (focused) views.setCursor(canvas, tab.selection.cell);
    },
    pickQuery: (i) => tab.select({ ...tab.selection, query: i, cell: { ...tab.selection.cell, i } }),
    pickView: (view) => tab.select({ ...tab.selection, view }),
    exportJSON() {
      if (tab.run) downloadJSON(exportDocument(tab.run, tab.engine.info));
    },
    exportPNG() {
      if (!tab.run) return;
      const { panels, domain, heading } = exportPanels(tab.run);
      tab.demo.lastPNG = { domain, titles: panels.map((p) => p.title) };
      downloadPNG(panels, { columns: 3, heading });
    },
  };
}
