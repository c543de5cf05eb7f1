// What the page's own canvases (bars, the Q/K/V strips, the PNG export) share: the font and a
// canvas sized for the device pixel ratio.

export const FONT_FAMILY = 'system-ui, "WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans CJK JP", sans-serif';

/** Sizes a canvas for the device pixel ratio; returns its 2D context scaled to CSS pixels. */
export function prepareCanvas(canvas, width, height) {
  const dpr = (typeof window !== 'undefined' && window.devicePixelRatio) || 1;
  canvas.width = Math.max(1, Math.round(width * dpr));
  canvas.height = Math.max(1, Math.round(height * dpr));
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}
