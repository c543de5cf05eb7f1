'use strict';
// attentionArgsFromStateDict: PyTorch's own files (nn.MultiheadAttention in F32, LLaMA GQA in F16,
// Qwen-style biases in BF16) through readSafetensors into prepared layers give PyTorch's output; both
// naming schemes map; anything it cannot place is a TypeError that lists it.
const { createAttention, readSafetensors, attentionArgsFromStateDict } = require('wasm-attention');
const ref = require('./reference');
const { decodeArgs } = require('./fixtures');
const { loadSafetensorsFixture } = require('./safetensors-file');

let attn;
beforeAll(async () => {
  attn = await createAttention({ threads: 1 });
});
afterAll(() => attn.dispose());

describe.each(['mha-in-proj-f32', 'llama-gqa-f16', 'qwen-bias-bf16'])("%s: PyTorch's file and output", (name) => {
  const { bytes, sidecar } = loadSafetensorsFixture(name);
  const weights = () => attentionArgsFromStateDict(readSafetensors(bytes).tensors, sidecar.prefix);
  const forward = decodeArgs(sidecar.forward);

  test("a prepared layer gives PyTorch's output", () => {
    const layer = attn.createMultiHeadAttention({ ...weights(), ...sidecar.layer });
    const { output } = layer.forward({ ...forward, needWeights: false });
    layer.dispose();
    ref.expectClose(output, sidecar.expected.output, `${name} output`, sidecar.expected.outputShape);
  });

  test("the one-shot call gives PyTorch's output too", () => {
    const { output } = attn.multiHeadAttention({ ...weights(), ...sidecar.layer, ...forward, needWeights: false });
    ref.expectClose(output, sidecar.expected.output, `${name} one-shot output`, sidecar.expected.outputShape);
  });
});

test.each(['llama-gqa-f16', 'qwen-bias-bf16'])(
  '%s read with { widen: false }: the same arguments, bit for bit, as the widened read',
  (name) => {
    const { bytes, sidecar } = loadSafetensorsFixture(name);
    const own = attentionArgsFromStateDict(readSafetensors(bytes, { widen: false }).tensors, sidecar.prefix);
    const widened = attentionArgsFromStateDict(readSafetensors(bytes).tensors, sidecar.prefix);
    expect(Object.keys(own)).toEqual(Object.keys(widened));
    for (const key of Object.keys(own)) {
      expect(own[key]).toBeInstanceOf(Float32Array);
      expect(new Uint32Array(own[key].buffer, own[key].byteOffset, own[key].length)).toEqual(
        new Uint32Array(widened[key].buffer, widened[key].byteOffset, widened[key].length),
      );
    }
  },
);

test('the files map to the arguments each scheme has', () => {
  const keys = (name) => {
    const { bytes, sidecar } = loadSafetensorsFixture(name);
    return Object.keys(attentionArgsFromStateDict(readSafetensors(bytes).tensors, sidecar.prefix)).sort();
  };
  expect(keys('mha-in-proj-f32')).toEqual(['inProjBias', 'inProjWeight', 'outProjBias', 'outProjWeight']);
  expect(keys('llama-gqa-f16')).toEqual(['kProjWeight', 'outProjWeight', 'qProjWeight', 'vProjWeight']);
  expect(keys('qwen-bias-bf16')).toEqual([
    'kProjBias',
    'kProjWeight',
    'outProjWeight',
    'qProjBias',
    'qProjWeight',
    'vProjBias',
    'vProjWeight',
  ]);
});

describe('names', () => {
  const v = (n, x = 0) => Float32Array.from({ length: n }, (_, i) => x + i);

  test('nn.MultiheadAttention with separate q/k/v weights (kdim, vdim ≠ embedDim)', () => {
    const sd = {
      q_proj_weight: v(4),
      k_proj_weight: v(6),
      v_proj_weight: v(8),
      in_proj_bias: v(6),
      'out_proj.weight': v(4),
      'out_proj.bias': v(2),
    };
    const args = attentionArgsFromStateDict(sd);
    expect(Object.keys(args).sort()).toEqual([
      'inProjBias',
      'kProjWeight',
      'outProjBias',
      'outProjWeight',
      'qProjWeight',
      'vProjWeight',
    ]);
    expect(args.kProjWeight).toBe(sd.k_proj_weight);
  });

  test('Hugging Face names with every bias, out_proj as the output (as BART, Whisper)', () => {
    const sd = {};
    for (const p of ['q', 'k', 'v', 'out']) for (const w of ['weight', 'bias']) sd[`enc.attn.${p}_proj.${w}`] = v(2);
    const args = attentionArgsFromStateDict(sd, 'enc.attn.');
    expect(Object.keys(args).sort()).toEqual([
      'kProjBias',
      'kProjWeight',
      'outProjBias',
      'outProjWeight',
      'qProjBias',
      'qProjWeight',
      'vProjBias',
      'vProjWeight',
    ]);
    expect(args.outProjBias).toBe(sd['enc.attn.out_proj.bias']);
  });

  test('the prefix is taken literally: "layers.1." is not "layers.10."', () => {
    const sd = {};
    for (const l of [1, 10]) for (const p of ['q', 'k', 'v', 'o']) sd[`layers.${l}.${p}_proj.weight`] = v(4, l);
    const args = attentionArgsFromStateDict(sd, 'layers.1.');
    expect(Object.values(args).map((a) => a[0])).toEqual([1, 1, 1, 1]);
    expect(() => attentionArgsFromStateDict(sd, 'layers.1')).toThrow(
      /unrecognised tensor names under the prefix "layers.1": "layers.1.q_proj.weight", .*"layers.10.q_proj.weight".*; a module's prefix ends with its dot, as in "layers.1."\)$/,
    );
  });

  test('Float32Arrays are passed as they are; Float64Array, number[] and { data } are converted to Float32Array', () => {
    const f32 = v(3);
    const args = attentionArgsFromStateDict({
      'q_proj.weight': f32,
      'k_proj.weight': Float64Array.of(0.1, 1e40, -2),
      'v_proj.weight': [0.1, 2, 3],
      'o_proj.weight': { data: Float64Array.of(0.5), shape: [1, 1] },
      'o_proj.bias': { dtype: 'F32', shape: [3], data: f32 },
    });
    expect(args.qProjWeight).toBe(f32);
    expect(args.outProjBias).toBe(f32);
    for (const a of Object.values(args)) expect(a).toBeInstanceOf(Float32Array);
    expect([...args.kProjWeight]).toEqual([Math.fround(0.1), Infinity, -2]);
    expect([...args.vProjWeight]).toEqual([Math.fround(0.1), 2, 3]);
    expect([...args.outProjWeight]).toEqual([0.5]);
  });
});

describe('errors', () => {
  const W = Float32Array.of(1, 2, 3, 4);
  const hf = { 'q_proj.weight': W, 'k_proj.weight': W, 'v_proj.weight': W, 'o_proj.weight': W };

  test.each([
    [
      'a stateDict that is not an object',
      [null],
      TypeError,
      /^attentionArgsFromStateDict: stateDict must be an object of named tensors .*, got null$/,
    ],
    [
      'a stateDict that is a Float32Array',
      [W],
      TypeError,
      /stateDict must be an object of named tensors .*, got a Float32Array of length 4/,
    ],
    [
      'a Map',
      [new Map(Object.entries(hf))],
      TypeError,
      /stateDict must be an object of named tensors, got a Map \(pass Object.fromEntries\(map\)\)/,
    ],
    ['a prefix that is not a string', [hf, 3], TypeError, /prefix must be a string, got number 3/],
    [
      'no name under the prefix',
      [hf, 'model.layers.0.'],
      TypeError,
      /no tensor name starts with the prefix "model.layers.0."; the state dict has "q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight"$/,
    ],
    ['an empty state dict', [{}], TypeError, /no tensor name starts with the prefix ""; the state dict is empty/],
    [
      'names it does not know',
      [{ ...hf, 'rotary_emb.inv_freq': W, 'norm.weight': W }],
      TypeError,
      /unrecognised tensor names under the prefix "": "rotary_emb.inv_freq", "norm.weight" \(recognised after the prefix: in_proj_weight, .*o_proj.weight/,
    ],
    [
      'bias_k and bias_v (add_bias_kv)',
      [{ in_proj_weight: W, 'out_proj.weight': W, bias_k: W, bias_v: W }],
      TypeError,
      /"bias_k", "bias_v": nn.MultiheadAttention's add_bias_kv \(bias_k, bias_v\) is not supported by the engine/,
    ],
    [
      'two names for one argument',
      [{ ...hf, 'out_proj.weight': W }],
      TypeError,
      /both "o_proj.weight" and "out_proj.weight" give outProjWeight; keep one/,
    ],
    [
      'no output projection',
      [{ 'q_proj.weight': W }],
      TypeError,
      /no output projection \(out_proj.weight or o_proj.weight\) under the prefix ""; found "q_proj.weight"/,
    ],
    [
      'an integer tensor as a weight',
      [{ ...hf, 'q_proj.weight': { dtype: 'I64', shape: [1], data: BigInt64Array.of(1n) } }],
      TypeError,
      /"q_proj.weight" must be a floating-point tensor \(Float32Array, Float16Array, Float64Array, number\[\], or \{ data \} of one\), got dtype I64 \(a BigInt64Array of length 1\)/,
    ],
    [
      'a string as a weight',
      [{ ...hf, 'q_proj.weight': 'w' }],
      TypeError,
      /"q_proj.weight" must be a floating-point tensor .*, got the string "w"/,
    ],
    [
      'a number[] holding a string',
      [{ ...hf, 'q_proj.weight': [1, '2'] }],
      TypeError,
      /"q_proj.weight" must be a floating-point tensor .*, got an Array/,
    ],
    [
      'a shape that does not match the data',
      [{ ...hf, 'q_proj.weight': { data: W, shape: [2, 3] } }],
      RangeError,
      /"q_proj.weight" must have a shape \[out, in\] matching its 4 values, got shape \[2,3\]/,
    ],
    [
      'a weight that is not a matrix',
      [{ ...hf, 'q_proj.weight': { data: W, shape: [4] } }],
      RangeError,
      /"q_proj.weight" must have a shape \[out, in\]/,
    ],
    [
      'a bias that is not a vector',
      [{ ...hf, 'o_proj.bias': { data: W, shape: [2, 2] } }],
      RangeError,
      /"o_proj.bias" must have a shape \[n\] matching its 4 values/,
    ],
  ])('%s', (_, args, ErrorClass, message) => {
    let error;
    try {
      attentionArgsFromStateDict(...args);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error.message).toMatch(/^attentionArgsFromStateDict: /);
    expect(error.message).toMatch(message);
  });

  test('a long list of unknown names is cut short and counted', () => {
    const sd = { ...hf };
    for (let i = 0; i < 20; i++) sd[`mlp.${i}.weight`] = W;
    expect(() => attentionArgsFromStateDict(sd)).toThrow(/"mlp.7.weight", … \(20 in all\)/);
  });
});
