'use strict';
// The package against PyTorch: fixtures written by scripts/make-fixtures.py (torch 1.13, float64);
// dec-*.json: decoder models' own code (repeat_kv, rotate_half / rotate_every_two, BLOOM's slopes).
// No torch at run time: the fixtures hold the inputs and PyTorch's expected output / weights.
const { createAttention } = require('wasm-attention');
const ref = require('./reference');
const { loadFixtures } = require('./fixtures');
const { checkRowSums } = require('./cases');
const {
  MHA_DECODER_CALL_ARGS,
  MHA_DECODER_LAYER_ARGS,
  MHA_V1_CALL_ARGS,
  MHA_V1_LAYER_ARGS,
  SA_CALL_ARGS,
  SA_LAYER_ARGS,
} = require('./contract-args');

const fixtures = loadFixtures();

let attn;
beforeAll(async () => {
  attn = await createAttention({ threads: 1 });
});

test('the fixture set covers every argument of the contract', () => {
  expect(fixtures.length).toBeGreaterThanOrEqual(40);
  const used = new Set();
  for (const fx of fixtures) for (const k of Object.keys(fx.args)) used.add(`${fx.fn}.${k}`);
  const mha = [...MHA_V1_LAYER_ARGS, ...MHA_V1_CALL_ARGS];
  const sa = [...SA_LAYER_ARGS, ...SA_CALL_ARGS];
  const decoder = [...MHA_DECODER_LAYER_ARGS, ...MHA_DECODER_CALL_ARGS];
  const missing = [
    ...[...mha, ...decoder].map((k) => `multiHeadAttention.${k}`),
    ...sa.map((k) => `selfAttention.${k}`),
  ].filter((k) => !used.has(k));
  expect(missing).toEqual([]);
});

describe.each(fixtures.map((fx) => [fx.name, fx]))('%s', (name, fx) => {
  const label = `${fx.file} (${fx.description})`;

  test('package output and weights match PyTorch', () => {
    const got = attn[fx.fn](fx.decodedArgs);
    expect(got.output).toBeInstanceOf(Float32Array);
    ref.expectClose(got.output, fx.expected.output, `${label} output`, fx.expected.outputShape);
    if (fx.expected.weights === null) {
      expect(got.weights).toBeNull();
    } else {
      expect(got.weights).toBeInstanceOf(Float32Array);
      ref.expectClose(got.weights, fx.expected.weights, `${label} weights`, fx.expected.weightsShape);
      checkRowSums(got.weights, fx.expected.weights, fx.expected.weightsShape, label);
    }
  });

  test('the JS reference (tests/js/reference.js) matches PyTorch to 1e-10', () => {
    const want = ref[fx.fn](fx.decodedArgs);
    ref.expectClose(
      want.output,
      fx.expected.output,
      `reference ${label} output`,
      fx.expected.outputShape,
      1e-10,
      1e-10,
    );
    if (fx.expected.weights === null) expect(want.weights).toBeNull();
    else
      ref.expectClose(
        want.weights,
        fx.expected.weights,
        `reference ${label} weights`,
        fx.expected.weightsShape,
        1e-10,
        1e-10,
      );
  });
});
