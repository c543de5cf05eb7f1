// The model tab's state, one object shared by its parts (poem.js wires them): the model, the run
// on screen, the generation in flight, hover and selection, and the extras read beside the model.

/** A fresh state: no model yet, no run, nothing picked. */
export function createPoemState() {
  return {
    worker: null, // the model worker's client (open-model/client.js), once started
    model: null, // { config, vocab, kvHeads }
    run: null,
    generating: 0, // id of the generation in flight, 0 when none
    visible: true,
    frame: 0,
    picked: -1, // the chip whose top tokens are shown; -1: the latest step
    ui: { highlight: -1, open: null, query: 0, cursor: null, followLatest: true },
    stepsAsked: 0,
    owed: 0, // generation whose last token awaits drawing before the next is asked for
    mode: '', // what s.generating runs: 'prompt' or 'generate'
    stopReason: '', // 'edited': the running generation was stopped because the prompt changed
    heads: [], // heads.json's named heads (heads.js)
    recited: null, // recited.json's hashes (recited.js)
    segments: [], // the recited segments of the run on screen
  };
}
