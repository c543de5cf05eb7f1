'use strict';
// Engines of 1 and 2 threads for a test file: created before its tests, disposed after them.
const { createAttention } = require('wasm-attention');

/** Registers beforeAll/afterAll; returns { 1: attn, 2: attn }, filled once beforeAll has run. */
function useEngines() {
  const engines = {};
  beforeAll(async () => {
    engines[1] = await createAttention({ threads: 1 });
    engines[2] = await createAttention({ threads: 2 });
  });
  afterAll(() => {
    for (const attn of Object.values(engines)) attn.dispose();
  });
  return engines;
}

module.exports = { useEngines };
