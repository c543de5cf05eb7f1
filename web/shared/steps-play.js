// The four steps played one at a time: scores, scale, softmax, weighted sum. Each part of the steps
// view carries data-stage (1 … 4); while playing, the parts of later stages are hidden (their place kept) and the
// current one is marked, its cells appearing one after another (CSS transitions). Play advances by
// itself; Next advances by hand; Show all skips to the end. With prefers-reduced-motion, nothing
// moves: Play shows the first step and Next the following ones, without transitions.

export const STAGES = ['scores', 'scale', 'softmax', 'weighted sum'];
const STAGE_MS = 1800;

const reducedMotion = () => globalThis.matchMedia?.('(prefers-reduced-motion: reduce)').matches ?? false;

/**
 * @param {HTMLElement} container   the steps view, whose parts carry data-stage
 * @param {{ play: HTMLButtonElement, next: HTMLButtonElement, all: HTMLButtonElement, status: HTMLElement }} ui
 * @returns {{ stage: () => number, dispose() }}
 */
export function bindStepPlayer(container, { play, next, all, status }) {
  let stage = 0; // 0: everything shown (not playing)
  let timer = 0;

  function show() {
    container.classList.toggle('stepping', stage > 0);
    container.dataset.stage = String(stage);
    for (const part of container.querySelectorAll('[data-stage]')) {
      const k = Number(part.dataset.stage);
      part.classList.toggle('pending', stage > 0 && k > stage);
      part.classList.toggle('current', stage > 0 && k === stage);
    }
    next.disabled = stage === 0;
    all.disabled = stage === 0;
    status.textContent =
      stage === 0 ? '' : `Step ${stage} of ${STAGES.length}: ${STAGES[stage - 1]}${timer ? ' (playing)' : ''}.`;
  }

  function go(k) {
    clearTimeout(timer);
    timer = 0;
    stage = k > STAGES.length ? 0 : k;
    if (stage > 0 && stage < STAGES.length && playing && !reducedMotion())
      timer = setTimeout(() => go(stage + 1), STAGE_MS);
    if (stage === 0) playing = false;
    show();
  }

  let playing = false;
  play.addEventListener('click', () => {
    playing = true;
    go(1);
  });
  next.addEventListener('click', () => go(stage + 1));
  all.addEventListener('click', () => {
    playing = false;
    go(0);
  });
  show();
  return {
    stage: () => stage,
    dispose() {
      clearTimeout(timer);
    },
  };
}
