// Float16Array in Chromium, which has it natively (Node 20 does not): wherever a Float32Array is
// accepted, a Float16Array gives the bits of the call with its values widened into a Float32Array —
// tensors and weights of one-shot and prepared layers, additive masks, tensor objects, state dicts and
// sampling logits — and readSafetensors(bytes, { widen: false }) returns F16 tensors as Float16Array.
const { blankPageSession, runInPage } = require('./harness');

let session;

beforeAll(async () => {
  session = await blankPageSession();
});

afterAll(async () => {
  if (session) await session.close();
});

// Runs in the page: each case once with Float16Arrays and once with their widened Float32Arrays.
const RUN = `async ({ entry, sampling }) => {
  const { createAttention, readSafetensors, attentionArgsFromStateDict } = entry;
  const E = 16, H = 4, T = 5;
  // Values that are not all float16-exact, rounded by Float16Array.from (to nearest even).
  const half = (n, s) => Float16Array.from({ length: n }, (_, i) => Math.sin(i * 0.731 + s) * 0.4);
  const wide = (a) => new Float32Array(a);
  const bits = (a) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));
  const same = (a, b) => a.length === b.length && bits(a).every((x, i) => x === bits(b)[i]);
  const attn = await createAttention({ threads: 2 });
  const weights = { qProjWeight: half(E * E, 1), kProjWeight: half(E * E, 2), vProjWeight: half(E * E, 3),
    outProjWeight: half(E * E, 4), qProjBias: half(E, 5) };
  const widened = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v instanceof Float16Array ? wide(v) : v]));
  const x = half(T * E, 6);
  const mask = Float16Array.from({ length: T * T }, (_, i) => (i % T > Math.floor(i / T) ? -Infinity : (i % 3) * 0.25));
  const call = { embedDim: E, numHeads: H, ...weights, query: x, key: x, value: x, attnMask: mask, needWeights: true };
  const results = {};
  const a = attn.multiHeadAttention(call), b = attn.multiHeadAttention(widened(call));
  results.oneShot = same(a.output, b.output) && same(a.weights, b.weights);
  // Read through its real contents: a subclass that misreports its length changes nothing, a Proxy is refused.
  class Liar extends Float16Array { get length() { return 1; } }
  const liar = new Liar(x);
  results.subclass = same(attn.multiHeadAttention({ ...call, query: liar, key: liar, value: liar }).output, a.output);
  try { attn.multiHeadAttention({ ...call, query: new Proxy(x, {}) }); results.proxy = 'accepted'; }
  catch (e) { results.proxy = e.constructor.name; }
  const layer = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, ...weights });
  const layerWide = attn.createMultiHeadAttention(widened({ embedDim: E, numHeads: H, ...weights }));
  const p = layer.forward({ query: x, isCausal: true }), q = layerWide.forward({ query: wide(x), isCausal: true });
  results.prepared = same(p.output, q.output);
  const object = attn.multiHeadAttention({ ...call, query: { dtype: 'F16', shape: [T, E], data: x } });
  results.tensorObject = same(object.output, a.output);
  const stateDict = { 'q_proj.weight': weights.qProjWeight, 'k_proj.weight': weights.kProjWeight,
    'v_proj.weight': weights.vProjWeight, 'o_proj.weight': { dtype: 'F16', shape: [E, E], data: weights.outProjWeight } };
  const args = attentionArgsFromStateDict(stateDict);
  results.stateDict = args.qProjWeight instanceof Float32Array && same(args.qProjWeight, wide(weights.qProjWeight))
    && same(args.outProjWeight, wide(weights.outProjWeight));
  const logits = half(40, 7);
  const draws = (row) => { const pick = sampling.createSampler({ temperature: 0.8, topP: 0.9, seed: 3 });
    return Array.from({ length: 12 }, () => pick(row)).join(); };
  results.greedy = sampling.greedy(logits) === sampling.greedy(wide(logits)) && draws(logits) === draws(wide(logits));
  // A one-tensor F16 file: with { widen: false } its data is a Float16Array over the file's bytes.
  const header = new TextEncoder().encode(JSON.stringify({ w: { dtype: 'F16', shape: [8], data_offsets: [0, 16] } }));
  const file = new Uint8Array(8 + header.length + 16);
  new DataView(file.buffer).setBigUint64(0, BigInt(header.length), true);
  file.set(header, 8);
  const stored = half(8, 8);
  file.set(new Uint8Array(stored.buffer), 8 + header.length);
  const own = readSafetensors(file, { widen: false }).tensors.w;
  results.readOwn = own.data instanceof Float16Array && own.dtype === 'F16'
    && Array.from(new Uint16Array(own.data.buffer)).join() === Array.from(new Uint16Array(stored.buffer)).join();
  results.readWidened = same(readSafetensors(file).tensors.w.data, wide(stored));
  // A model from an F16 checkpoint read with { widen: false } (Float16Array tensors): the logits of
  // the widened read, bit for bit.
  const folder = '../fixtures/models/llama-bias-partial-linear-f16/';
  const config = await (await fetch(folder + 'config.json')).json();
  const fileBytes = new Uint8Array(await (await fetch(folder + 'model.safetensors')).arrayBuffer());
  const halfFile = readSafetensors(fileBytes, { widen: false });
  results.modelTensors = Object.values(halfFile.tensors).some((t) => t.data instanceof Float16Array);
  const ids = [1, 5, 9, 2, 7];
  const m1 = await entry.loadModel(attn, { config, weights: halfFile });
  const m2 = await entry.loadModel(attn, { config, weights: readSafetensors(fileBytes) });
  results.model = same(m1.forward(ids).logits, m2.forward(ids).logits);
  results.float16 = typeof Float16Array;
  layer.dispose(); layerWide.dispose(); attn.dispose();
  return results;
}`;

test('Float16Array arguments give the bits of their widened Float32Array, everywhere one is taken', async () => {
  const got = await runInPage(session.page, { entry: '/dist/index.mjs', sampling: '/dist/sampling.mjs' }, RUN, {});
  expect(got).toEqual({
    float16: 'function',
    oneShot: true,
    subclass: true,
    proxy: 'TypeError',
    prepared: true,
    tensorObject: true,
    stateDict: true,
    greedy: true,
    readOwn: true,
    readWidened: true,
    modelTensors: true,
    model: true,
  });
  expect(session.problems).toEqual([]);
});
