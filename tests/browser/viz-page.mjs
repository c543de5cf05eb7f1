// Page-side helpers of the viz tests (imported in Chromium from the test server): made-up
// attention, spies on the canvas API and on event listeners, and a mounting point.
import { mulberry32 as random } from '/lib/random.mjs';

/** Softmax-like rows [T, T] (causal: zero above the diagonal), each row summing to 1. */
export function causalMap(T, seed = 1) {
  const rand = random(seed);
  const w = new Float32Array(T * T);
  for (let i = 0; i < T; i++) {
    let sum = 0;
    for (let j = 0; j <= i; j++) {
      w[i * T + j] = rand() ** 4;
      sum += w[i * T + j];
    }
    for (let j = 0; j <= i; j++) w[i * T + j] /= sum;
  }
  return w;
}

/** An array over layers of Float32Array [H, T, T], every head a different causal map. */
export function attentionOf(layers, heads, T, seed = 1) {
  return Array.from({ length: layers }, (_, l) => {
    const a = new Float32Array(heads * T * T);
    for (let h = 0; h < heads; h++) a.set(causalMap(T, seed + 100 * l + h), h * T * T);
    return a;
  });
}

/** Rows 0 … T−2 of a [T, T] map as a [T−1, T−1] map: the same run one token earlier. */
export function shorter(w, T) {
  const out = new Float32Array((T - 1) * (T - 1));
  for (let i = 0; i < T - 1; i++) out.set(w.subarray(i * T, i * T + T - 1), i * (T - 1));
  return out;
}

export const tokens = (T, prefix = 't') => Array.from({ length: T }, (_, i) => `${prefix}${i}`);

/** A fresh element of the given width, appended to the body. */
export function mount(width = 700) {
  // A page as axe-core expects one: a main landmark with a level-one heading.
  let main = document.querySelector('main');
  if (!main) {
    main = document.createElement('main');
    const h1 = document.createElement('h1');
    h1.textContent = 'Views under test';
    main.append(h1);
    document.body.append(main);
  }
  const div = document.createElement('div');
  div.style.width = `${width}px`;
  main.append(div);
  return div;
}

/**
 * Counts the rows of every putImageData (how many map rows were coloured; byWidth: per image width,
 * i.e. per pooling level) until stop(): { rows, calls, byWidth, stop() }.
 */
export function spyCanvas() {
  const proto = CanvasRenderingContext2D.prototype;
  const put = proto.putImageData;
  const spy = { rows: 0, calls: 0, byWidth: {} };
  proto.putImageData = function (img, ...rest) {
    spy.rows += img.height;
    spy.calls++;
    spy.byWidth[img.width] = (spy.byWidth[img.width] ?? 0) + img.height;
    return put.call(this, img, ...rest);
  };
  spy.stop = () => {
    proto.putImageData = put;
  };
  return spy;
}

/** Listeners added and not yet removed, counted from now on: { live(), stop() }. */
export function spyListeners() {
  const proto = EventTarget.prototype;
  const add = proto.addEventListener;
  const remove = proto.removeEventListener;
  const key = (t, type, fn, o) => [t, type, fn, typeof o === 'object' ? Boolean(o?.capture) : Boolean(o)];
  const keys = [];
  const find = (k) => keys.findIndex((x) => x.every((v, n) => v === k[n]));
  proto.addEventListener = function (type, fn, o) {
    const k = key(this, type, fn, o);
    if (find(k) < 0) keys.push(k);
    return add.call(this, type, fn, o);
  };
  proto.removeEventListener = function (type, fn, o) {
    const at = find(key(this, type, fn, o));
    if (at >= 0) keys.splice(at, 1);
    return remove.call(this, type, fn, o);
  };
  return {
    live: () => keys.length,
    stop() {
      proto.addEventListener = add;
      proto.removeEventListener = remove;
    },
  };
}

/** Waits for two animation frames (whatever was scheduled has been painted). */
export const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));

/** Calls each function; its error as "Name: message", or 'no error'. */
export function errorsOf(tries) {
  return Object.fromEntries(
    Object.entries(tries).map(([k, f]) => {
      try {
        f();
        return [k, 'no error'];
      } catch (e) {
        return [k, `${e.name}: ${e.message}`];
      }
    }),
  );
}
