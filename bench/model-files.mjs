// The checkpoints the model rows run (Hugging Face layout: config.json + model.safetensors):
// - smollm-135m-shape: random f32 weights of SmolLM-135M's shape (~540 MB) from a seeded generator,
//   made at bench time in bench/.cache/ (ignored by git, never committed);
// - tang-poems: the demo's poem model, models/tang-poems/ as the repository has it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rng } from './util.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const CACHE = path.join(here, '.cache');
const log = (...a) => process.stderr.write(a.join(' ') + '\n');

// SmolLM-135M's config.json, its sizes and options (HuggingFaceTB/SmolLM-135M).
export const SMOLLM_CONFIG = {
  architectures: ['LlamaForCausalLM'],
  model_type: 'llama',
  hidden_size: 576,
  num_hidden_layers: 30,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  head_dim: 64,
  intermediate_size: 1536,
  vocab_size: 49152,
  max_position_embeddings: 2048,
  rope_theta: 10000.0,
  rms_norm_eps: 1e-5,
  hidden_act: 'silu',
  tie_word_embeddings: true,
  attention_bias: false,
  mlp_bias: false,
  bos_token_id: 0,
  eos_token_id: 0,
  torch_dtype: 'float32',
};

/** The tensors of a llama checkpoint (no lm_head: tied), in the order Hugging Face saves them. */
export function llamaTensorShapes(c) {
  const hd = c.head_dim ?? c.hidden_size / c.num_attention_heads;
  const out = [['model.embed_tokens.weight', [c.vocab_size, c.hidden_size]]];
  for (let i = 0; i < c.num_hidden_layers; i++) {
    const p = `model.layers.${i}.`;
    out.push(
      [p + 'input_layernorm.weight', [c.hidden_size]],
      [p + 'self_attn.q_proj.weight', [c.num_attention_heads * hd, c.hidden_size]],
      [p + 'self_attn.k_proj.weight', [c.num_key_value_heads * hd, c.hidden_size]],
      [p + 'self_attn.v_proj.weight', [c.num_key_value_heads * hd, c.hidden_size]],
      [p + 'self_attn.o_proj.weight', [c.hidden_size, c.num_attention_heads * hd]],
      [p + 'post_attention_layernorm.weight', [c.hidden_size]],
      [p + 'mlp.gate_proj.weight', [c.intermediate_size, c.hidden_size]],
      [p + 'mlp.up_proj.weight', [c.intermediate_size, c.hidden_size]],
      [p + 'mlp.down_proj.weight', [c.hidden_size, c.intermediate_size]],
    );
  }
  out.push(['model.norm.weight', [c.hidden_size]]);
  return out;
}

/** The safetensors header (8-byte size + JSON padded to 8) for tensors [name, shape, dtype, bytes]. */
function safetensorsHeader(entries, metadata) {
  const header = { __metadata__: metadata };
  let offset = 0;
  for (const [name, shape, dtype, bytes] of entries) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
  const head = Buffer.alloc(8 + json.length);
  head.writeBigUInt64LE(BigInt(json.length), 0);
  head.write(json, 8, 'utf8');
  return head;
}

/**
 * Writes the random checkpoint: every matrix uniform with standard deviation 0.02 (logits of order
 * one through the tied head), norm weights 1 ± 0.1 (not all ones, so a norm weight applied wrongly
 * shows in the logits check). Each tensor has its own seed: the file is the same on every machine.
 */
function writeRandomCheckpoint(dir, config) {
  const shapes = llamaTensorShapes(config);
  const size = (s) => s.reduce((a, b) => a * b, 1);
  const entries = shapes.map(([name, shape]) => [name, shape, 'F32', 4 * size(shape)]);
  fs.mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, 'model.safetensors.tmp');
  const fd = fs.openSync(tmp, 'w');
  fs.writeSync(fd, safetensorsHeader(entries, { format: 'pt', made_by: 'bench/model-files.mjs (seeded, random)' }));
  const half = 0.02 * Math.sqrt(3); // uniform on ±half has std 0.02
  shapes.forEach(([name, shape], k) => {
    const rand = rng(0x5eed + 7919 * k);
    const a = new Float32Array(size(shape));
    if (shape.length === 1) for (let i = 0; i < a.length; i++) a[i] = 1 + 0.2 * (rand() - 0.5);
    else for (let i = 0; i < a.length; i++) a[i] = (2 * rand() - 1) * half;
    fs.writeSync(fd, new Uint8Array(a.buffer));
  });
  fs.closeSync(fd);
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  fs.renameSync(tmp, path.join(dir, 'model.safetensors'));
}

/** bench/.cache/smollm-135m-shape/, made when missing (~5 s). */
export function ensureSmolCheckpoint() {
  const dir = path.join(CACHE, 'smollm-135m-shape');
  const file = path.join(dir, 'model.safetensors');
  const cfg = path.join(dir, 'config.json');
  const same =
    fs.existsSync(cfg) && JSON.stringify(JSON.parse(fs.readFileSync(cfg, 'utf8'))) === JSON.stringify(SMOLLM_CONFIG);
  if (!fs.existsSync(file) || !same) {
    log('bench: writing a random SmolLM-135M-shaped checkpoint to', path.relative(process.cwd(), dir), '…');
    const t = performance.now();
    writeRandomCheckpoint(dir, SMOLLM_CONFIG);
    log(`bench: … ${(fs.statSync(file).size / 1e6).toFixed(0)} MB in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  return dir;
}

/** models/tang-poems/, the poem model in the Hugging Face layout. */
export function ensurePoemCheckpoint() {
  const dir = path.join(here, '..', 'models', 'tang-poems');
  for (const f of ['config.json', 'model.safetensors'])
    if (!fs.existsSync(path.join(dir, f))) throw new Error(`bench: models/tang-poems/${f} is missing`);
  return dir;
}
