"""Exports a llama-family checkpoint in the Hugging Face layout (config.json + model.safetensors) to
ONNX with torch.onnx, for the bench's onnxruntime-web rows (bench/model.mjs).

The model is a float32 PyTorch module written from transformers' LlamaForCausalLM (the same graph
as scripts/model_references.py's float64 Decoder, which checks it here), with the KV cache as
explicit inputs and outputs, as onnxruntime-web runs a decoder:

  inputs   input_ids [1, T] int64, position_ids [1, T] int64,
           past_key.N / past_value.N [1, kv_heads, P, head_dim] float32 (P = 0 for a prefill)
  outputs  logits [1, 1, vocab] (the last token's: what generation reads, and what the bench asks of
           our engine with logits: 'last', so both do the same work),
           present_key.N / present_value.N [1, kv_heads, P + T, head_dim]

T and P are dynamic. RoPE's cos/sin come from float64 tables (rounded to float32) gathered by
position; grouped-query attention is a broadcasting MatMul (no copy of K/V per query head).

Checks, before writing the file: the module's logits against the float64 reference (prefill and
one decode step); then the .onnx run by onnxruntime-web (bench/verify-onnx.mjs, in Node) against
the module's own logits, within 1e-4 + 1e-4·|ref|.

  /usr/bin/python3 bench/export-onnx.py MODEL_DIR OUT.onnx
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'scripts'))
import model_references  # noqa: E402  (the project's float64 forwards, from transformers' code)

ST_DTYPES = {'F32': np.float32, 'F16': np.float16, 'F64': np.float64}


def read_safetensors(path):
    """{name: float32 tensor}; BF16 widened by hand (numpy has no bfloat16)."""
    with open(path, 'rb') as f:
        blob = f.read()
    size = int.from_bytes(blob[:8], 'little')
    header = json.loads(blob[8:8 + size])
    header.pop('__metadata__', None)
    data = memoryview(blob)[8 + size:]
    out = {}
    for name, info in header.items():
        start, end = info['data_offsets']
        if info['dtype'] == 'BF16':
            raw = np.frombuffer(data[start:end], dtype='<u2').astype(np.uint32) << 16
            array = raw.view(np.float32)
        else:
            array = np.frombuffer(data[start:end], dtype=np.dtype(ST_DTYPES[info['dtype']]).newbyteorder('<'))
        out[name] = torch.from_numpy(array.astype(np.float32).reshape(info['shape']))
    return out


def rms_norm(x, weight, eps):
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        E, self.H, self.KV, self.hd = cfg['hidden_size'], cfg['num_attention_heads'], cfg['kv'], cfg['hd']
        self.eps = cfg['rms_norm_eps']
        self.input_layernorm = nn.Parameter(torch.ones(E))
        self.post_attention_layernorm = nn.Parameter(torch.ones(E))
        self.q_proj = nn.Linear(E, self.H * self.hd, bias=False)
        self.k_proj = nn.Linear(E, self.KV * self.hd, bias=False)
        self.v_proj = nn.Linear(E, self.KV * self.hd, bias=False)
        self.o_proj = nn.Linear(self.H * self.hd, E, bias=False)
        self.gate_proj = nn.Linear(E, cfg['intermediate_size'], bias=False)
        self.up_proj = nn.Linear(E, cfg['intermediate_size'], bias=False)
        self.down_proj = nn.Linear(cfg['intermediate_size'], E, bias=False)

    def forward(self, h, cos, sin, mask, past_k, past_v):
        KV, rep, hd = self.KV, self.H // self.KV, self.hd
        x = rms_norm(h, self.input_layernorm, self.eps)
        # query head n = g·rep + r reads K/V head g (transformers' repeat_kv)
        q = self.q_proj(x).view(1, -1, KV, rep, hd).permute(0, 2, 3, 1, 4)  # [1, KV, rep, T, hd]
        k = self.k_proj(x).view(1, -1, KV, hd).transpose(1, 2)  # [1, KV, T, hd]
        v = self.v_proj(x).view(1, -1, KV, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin  # cos, sin [T, hd] broadcast over the heads
        k = k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)  # [1, KV, P + T, hd]
        v = torch.cat([past_v, v], dim=2)
        scores = torch.matmul(q, k.unsqueeze(2).transpose(-1, -2)) * (hd ** -0.5)  # [1, KV, rep, T, P + T]
        probs = torch.softmax(scores + mask, dim=-1)
        out = torch.matmul(probs, v.unsqueeze(2))  # [1, KV, rep, T, hd]
        out = out.permute(0, 3, 1, 2, 4).reshape(1, -1, self.H * hd)
        h = h + self.o_proj(out)
        x = rms_norm(h, self.post_attention_layernorm, self.eps)
        h = h + self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))
        return h, k, v


class Llama(nn.Module):
    def __init__(self, cfg, tensors):
        super().__init__()
        cfg = dict(cfg)
        cfg['kv'] = cfg.get('num_key_value_heads') or cfg['num_attention_heads']
        cfg['hd'] = cfg.get('head_dim') or cfg['hidden_size'] // cfg['num_attention_heads']
        self.cfg, L = cfg, cfg['num_hidden_layers']
        self.embed_tokens = nn.Parameter(tensors['model.embed_tokens.weight'])
        self.layers = nn.ModuleList(Layer(cfg) for _ in range(L))
        self.norm = nn.Parameter(tensors['model.norm.weight'])
        tied = cfg.get('tie_word_embeddings', False)  # LlamaConfig's default, as the reference reads it
        self.lm_head = None if tied else nn.Parameter(tensors['lm_head.weight'])
        for i, layer in enumerate(self.layers):
            p = f'model.layers.{i}.'
            with torch.no_grad():
                layer.input_layernorm.copy_(tensors[p + 'input_layernorm.weight'])
                layer.post_attention_layernorm.copy_(tensors[p + 'post_attention_layernorm.weight'])
                for n in ('q_proj', 'k_proj', 'v_proj', 'o_proj'):
                    getattr(layer, n).weight.copy_(tensors[p + 'self_attn.' + n + '.weight'])
                for n in ('gate_proj', 'up_proj', 'down_proj'):
                    getattr(layer, n).weight.copy_(tensors[p + 'mlp.' + n + '.weight'])
        # cos/sin per position, from the float64 inverse frequencies (rope_theta, scaling) of the reference
        inv_freq = model_references.rope_inv_freq(cfg, cfg['hd'])
        angles = torch.arange(cfg['max_position_embeddings'], dtype=torch.float64)[:, None] * inv_freq[None, :]
        angles = torch.cat([angles, angles], dim=-1)
        self.register_buffer('rope_cos', angles.cos().float())
        self.register_buffer('rope_sin', angles.sin().float())
        self.register_buffer('masked', torch.tensor(float('-inf')))  # a buffer, not a constant the tracer warns of
        self.register_buffer('visible', torch.tensor(0.0))

    def forward(self, input_ids, position_ids, *past):
        h = self.embed_tokens[input_ids[0]].unsqueeze(0)  # [1, T, E]
        pos = position_ids[0]
        cos, sin = self.rope_cos[pos], self.rope_sin[pos]  # [T, hd]
        keys = torch.arange(past[0].shape[2] + input_ids.shape[1])  # positions of every key: 0 … P+T−1
        mask = torch.where(keys[None, :] > pos[:, None], self.masked, self.visible)
        presents = []
        for i, layer in enumerate(self.layers):
            h, k, v = layer(h, cos, sin, mask, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        last = rms_norm(h[:, -1:], self.norm, self.cfg['rms_norm_eps'])
        head = self.embed_tokens if self.lm_head is None else self.lm_head
        return (torch.matmul(last, head.t()), *presents)


def empty_past(model):
    c = model.cfg
    return [torch.zeros(1, c['kv'], 0, c['hd']) for _ in range(2 * c['num_hidden_layers'])]


def run(model, ids, start, past):
    with torch.no_grad():
        ids_t = torch.tensor([ids], dtype=torch.int64)
        pos = torch.arange(start, start + len(ids), dtype=torch.int64)[None]
        out = model(ids_t, pos, *past)
    return out[0][0, 0], list(out[1:])


def worst(got, ref):
    return float(((got.double() - ref).abs() / (1e-4 + 1e-4 * ref.abs())).max())


def main(model_dir, out_path):
    with open(os.path.join(model_dir, 'config.json')) as f:
        cfg = json.load(f)
    if cfg.get('model_type') not in ('llama', 'mistral', 'qwen2') or cfg.get('attention_bias') or \
            cfg.get('sliding_window') and cfg['model_type'] == 'mistral':
        sys.exit(f'export-onnx.py: a llama without biases or window is what it exports, got {cfg.get("model_type")}')
    tensors = read_safetensors(os.path.join(model_dir, 'model.safetensors'))
    torch.manual_seed(0)
    model = Llama(cfg, tensors).eval()

    # the module against the project's float64 reference: a 9-token prompt, then one token
    vocab = cfg['vocab_size']
    gen = torch.Generator().manual_seed(1)
    prompt = torch.randint(0, vocab, (9,), generator=gen).tolist()
    step = int(torch.randint(0, vocab, (1,), generator=gen))
    ref = model_references.Decoder(cfg, {k: v.double() for k, v in tensors.items()})
    ref_prefill = ref.forward(prompt)[0][-1]
    ref_step = ref.forward([step])[0][-1]
    got_prefill, present = run(model, prompt, 0, empty_past(model))
    got_step, _ = run(model, [step], len(prompt), present)
    e = max(worst(got_prefill, ref_prefill), worst(got_step, ref_step))
    print(f'export-onnx: float32 module vs float64 reference: worst error {e:.3f} of the tolerance 1e-4 + 1e-4·|ref|')
    if not e <= 1:
        sys.exit('export-onnx: the float32 module disagrees with the reference')

    L = cfg['num_hidden_layers']
    past_names = [f'past_{kv}.{i}' for i in range(L) for kv in ('key', 'value')]
    present_names = [f'present_{kv}.{i}' for i in range(L) for kv in ('key', 'value')]
    dynamic = {'input_ids': {1: 'T'}, 'position_ids': {1: 'T'}}
    dynamic.update({n: {2: 'P'} for n in past_names})
    dynamic.update({n: {2: 'P_plus_T'} for n in present_names})
    # traced with a non-empty past and several tokens, so no size is folded into a constant
    _, trace_past = run(model, prompt[:2], 0, empty_past(model))
    example = (torch.tensor([prompt[2:5]]), torch.tensor([[2, 3, 4]]), *trace_past)
    tmp = out_path + '.tmp'
    torch.onnx.export(model, example, tmp, input_names=['input_ids', 'position_ids', *past_names],
                      output_names=['logits', *present_names], dynamic_axes=dynamic, opset_version=17,
                      do_constant_folding=True)

    # the .onnx in onnxruntime-web against the module: the prompt from an empty past, then the step
    with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as f:
        json.dump({'prompt': prompt, 'step': step, 'numLayers': L, 'kvHeads': model.cfg['kv'],
                   'headDim': model.cfg['hd'], 'prefillLogits': got_prefill.tolist(),
                   'stepLogits': got_step.tolist()}, f)
        ref_json = f.name
    try:
        r = subprocess.run(['node', os.path.join(HERE, 'verify-onnx.mjs'), tmp, ref_json])
    finally:
        os.unlink(ref_json)
    if r.returncode != 0:
        os.unlink(tmp)
        sys.exit('export-onnx: onnxruntime-web disagrees with the PyTorch module')
    os.replace(tmp, out_path)
    print(f'export-onnx: wrote {out_path} ({os.path.getsize(out_path) / 1e6:.1f} MB)')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
