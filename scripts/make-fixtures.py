#!/usr/bin/python3
"""Generates tests/fixtures/*.json: PyTorch's answers for the wasm-attention contract.

Run with Debian's python (it has torch 1.13 and numpy):

    /usr/bin/python3 scripts/make-fixtures.py

Every fixture holds the call's arguments (camelCase, as the package API takes them) and the
expected `output` / `weights`. The JS test (tests/js/pytorch.test.js) reads them without torch.

How the expectations are computed:

* Inputs and parameters are drawn in float32 (so the JS side's Float32Arrays hold exactly the
  same numbers), then every computation runs in float64.
* multiHeadAttention: `torch.nn.MultiheadAttention(batch_first=True)` after `module.double()`,
  in training mode with dropout 0 so the Python path (not the fused fast path) runs.
  - `isCausal`: torch 1.13's MHA has no usable is_causal (at best a hint), so the contract's
    causal mask — key j > query i masked, top-left aligned when tgtLen != srcLen — is passed as
    an explicit bool attn_mask (OR-ed with a bool mask, or -inf filled into a float one).
  - torch 1.13 has no `scale` argument, gives NaN rows where every key is masked (the contract
    says zero weights and zero attention result), and cannot combine a float key_padding_mask
    with an attn_mask. Those cases ("source": "torch float64 ops") are computed by
    `manual_mha` below: the same formula written with torch float64 ops (F.linear, matmul,
    softmax), fully masked rows set to zero. On every case the module can compute too, the
    script checks manual_mha against the module (max difference < 1e-12), so the manual
    path is validated against nn.MultiheadAttention itself.
* selfAttention (the worked example's single head, no output projection): three float64 nn.Linear
  layers, Q·Kᵀ·scale + masks, softmax, ·V, fully masked rows zero.
* Decoder-grade multiHeadAttention (dec-*.json, `decoder_mha`): what decoder models' own code does,
  in float64 torch ops — grouped-query K/V heads repeated per query head (as LLaMA's `repeat_kv`),
  RoPE by LLaMA / GPT-NeoX's `rotate_half` or GPT-J's `rotate_every_two` with their cos/sin tables,
  BLOOM's ALiBi `get_slopes`, and causal / sliding-window masks by absolute positions.

* Safetensors round trips (tests/fixtures/safetensors/, `make_safetensors`): real modules'
  state_dicts — nn.MultiheadAttention, and LLaMA / Qwen-style attention modules written here after
  Hugging Face's code (q/k/v/o_proj nn.Linear, rotate_half, repeat_kv) — saved by `write_safetensors`
  (the format by hand: Debian has no `safetensors` package) in F32, F16 and BF16, with the module's
  float64 output for a query beside each file (`<name>.json`: prefix, layer and forward arguments,
  expected output). Half-precision files' outputs are computed from the rounded weights, so they
  test the loader, not the rounding.

JSON: floats are written as float(x) (shortest round-trip repr, nothing rounded). A float mask's
-inf is written as the string "-Infinity" (JSON has no infinities). Masks are
{"dtype": "bool" | "float32", "data": [...]}; every other tensor is a flat row-major list.
"""

import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures')


# ----------------------------------------------------------------------------- random inputs

class Rand:
    """float32 tensors from a seeded torch.Generator."""

    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)

    def uniform(self, *shape, scale=1.0):
        return ((torch.rand(*shape, generator=self.g, dtype=torch.float32) * 2 - 1) * scale).float()

    def weight(self, out_dim, in_dim):
        """nn.Linear-like weights: uniform in ±1/sqrt(in_dim)."""
        return self.uniform(out_dim, in_dim, scale=1 / math.sqrt(in_dim))

    def bool_mask(self, *shape, p=0.25, keep_first_key=True):
        m = torch.rand(*shape, generator=self.g) < p
        if keep_first_key:
            m[..., 0] = False  # key 0 always visible: no fully masked row (torch gives NaN there)
        return m

    def float_mask(self, *shape, p_inf=0.15, keep_first_key=True):
        m = (torch.rand(*shape, generator=self.g, dtype=torch.float32) * 4 - 2).float()
        inf = torch.rand(*shape, generator=self.g) < p_inf
        if keep_first_key:
            inf[..., 0] = False
        return m.masked_fill(inf, float('-inf'))


def causal_mask(L, S):
    """bool [L, S]: True where key j > query i (top-left aligned)."""
    i = torch.arange(L).unsqueeze(1)
    j = torch.arange(S).unsqueeze(0)
    return j > i


def additive(mask):
    """A bool mask (True = masked) as 0 / -inf float64; a float mask as float64."""
    if mask is None:
        return None
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=torch.float64).masked_fill(mask, float('-inf'))
    return mask.double()


def masked_softmax(scores):
    """Softmax over the last axis; a row whose every score is -inf becomes zeros (not NaN)."""
    fully = torch.isneginf(scores).all(dim=-1, keepdim=True)
    p = torch.softmax(scores, dim=-1)
    return torch.where(fully, torch.zeros_like(p), p)


# ----------------------------------------------------------------------------- JSON encoding

def flat(t):
    return [float(x) for x in t.detach().double().reshape(-1).tolist()]


def enc_mask(m):
    if m.dtype == torch.bool:
        return {'dtype': 'bool', 'data': [int(x) for x in m.reshape(-1).tolist()]}
    data = []
    for x in m.double().reshape(-1).tolist():
        if math.isinf(x) and x < 0:
            data.append('-Infinity')
        elif math.isfinite(x):
            data.append(float(x))
        else:
            raise ValueError(f'unsupported mask value {x}')
    return {'dtype': 'float32', 'data': data}


def check_finite(name, t):
    if t is not None and not torch.isfinite(t).all():
        raise RuntimeError(f'{name}: expected values contain NaN/Inf')


# ----------------------------------------------------------------------------- multiHeadAttention

def manual_mha(p, query, key, value, H, attn_mask, kpm, causal, scale, need_weights, average):
    """The contract's MHA in float64 torch ops. p: dict of float32 parameters."""
    B, L, E = query.shape
    S = key.shape[1]
    hd = E // H
    d = lambda t: None if t is None else t.double()
    if p.get('in_proj_weight') is not None:
        Wq, Wk, Wv = d(p['in_proj_weight']).chunk(3)
    else:
        Wq, Wk, Wv = d(p['q_proj_weight']), d(p['k_proj_weight']), d(p['v_proj_weight'])
    bq = bk = bv = None
    if p.get('in_proj_bias') is not None:
        bq, bk, bv = d(p['in_proj_bias']).chunk(3)
    # 1. project, split heads: [B, H, len, hd]
    q = F.linear(query.double(), Wq, bq).view(B, L, H, hd).transpose(1, 2)
    k = F.linear(key.double(), Wk, bk).view(B, S, H, hd).transpose(1, 2)
    v = F.linear(value.double(), Wv, bv).view(B, S, H, hd).transpose(1, 2)
    # 2. scores, scaled, plus every mask as an additive term
    s = torch.matmul(q, k.transpose(-2, -1)) * scale
    if attn_mask is not None:
        am = additive(attn_mask)
        s = s + (am.view(B, H, L, S) if am.dim() == 3 else am)
    if kpm is not None:
        s = s + additive(kpm).view(B, 1, 1, S)
    if causal:
        s = s.masked_fill(causal_mask(L, S), float('-inf'))
    # 3. softmax by row (fully masked rows → 0), 4. weighted sum of V
    w = masked_softmax(s)
    a = torch.matmul(w, v).transpose(1, 2).reshape(B, L, E)
    # 5. output projection
    out = F.linear(a, d(p['out_proj_weight']), d(p.get('out_proj_bias')))
    weights = None
    if need_weights:
        weights = w.mean(dim=1) if average else w
    return out, weights


def torch_mha(p, query, key, value, E, H, kdim, vdim, bias, attn_mask, kpm, causal, need_weights, average):
    """nn.MultiheadAttention(batch_first=True) in float64, causal passed as an explicit mask."""
    m = nn.MultiheadAttention(E, H, dropout=0.0, bias=bias, kdim=kdim, vdim=vdim, batch_first=True)
    with torch.no_grad():
        if m._qkv_same_embed_dim:
            m.in_proj_weight.copy_(p['in_proj_weight'])
        else:
            m.q_proj_weight.copy_(p['q_proj_weight'])
            m.k_proj_weight.copy_(p['k_proj_weight'])
            m.v_proj_weight.copy_(p['v_proj_weight'])
        if bias:
            m.in_proj_bias.copy_(p['in_proj_bias'])
            m.out_proj.bias.copy_(p['out_proj_bias'])
        m.out_proj.weight.copy_(p['out_proj_weight'])
    m = m.double()
    m.train()  # the Python path; dropout is 0 so training mode changes nothing else
    B, L, _ = query.shape
    S = key.shape[1]
    am = attn_mask
    if causal:
        c = causal_mask(L, S)
        if am is None:
            am = c
        elif am.dtype == torch.bool:
            am = am | c
        else:
            am = am.double().masked_fill(c, float('-inf'))
    if am is not None and am.dtype != torch.bool:
        am = am.double()
    k_in = kpm if kpm is None or kpm.dtype == torch.bool else kpm.double()
    with torch.no_grad():
        out, w = m(query.double(), key.double(), value.double(), key_padding_mask=k_in,
                   need_weights=need_weights, attn_mask=am, average_attn_weights=average)
    return out, w


def mha_dims(c):
    """A multi-head case's generator and sizes: Rand, batch, tgtLen, srcLen, embedDim, numHeads."""
    return Rand(c['seed']), c.get('batch', 1), c['tgtLen'], c.get('srcLen', c['tgtLen']), c['embedDim'], c['numHeads']


def make_mha(c):
    r, B, L, S, E, H = mha_dims(c)
    kdim, vdim = c.get('kdim', E), c.get('vdim', E)
    bias = c.get('bias', True)
    separate = kdim != E or vdim != E
    cross = c.get('cross', False) or S != L or separate
    manual = c.get('manual', False)
    need_weights = c.get('needWeights', True)
    average = c.get('averageAttnWeights', True)
    causal = c.get('isCausal', False)
    scale = c.get('scale', None)

    query = r.uniform(B, L, E)
    key = r.uniform(B, S, kdim) if cross else query
    value = (key if c.get('valueIsKey') else r.uniform(B, S, vdim)) if cross else query
    p = {}
    if separate:
        p['q_proj_weight'] = r.weight(E, E)
        p['k_proj_weight'] = r.weight(E, kdim)
        p['v_proj_weight'] = r.weight(E, vdim)
    else:
        p['in_proj_weight'] = r.weight(3 * E, E)
    if bias:
        p['in_proj_bias'] = r.uniform(3 * E, scale=0.5)
        p['out_proj_bias'] = r.uniform(E, scale=0.5)
    p['out_proj_weight'] = r.weight(E, E)

    keep = not c.get('allowFullyMasked', False)
    attn_mask = None
    kind = c.get('attnMask')
    if kind:
        shape = (B * H, L, S) if kind.endswith('3d') else (L, S)
        attn_mask = r.bool_mask(*shape, keep_first_key=keep) if kind.startswith('bool') \
            else r.float_mask(*shape, keep_first_key=keep)
    for (bh, i) in c.get('maskedRows', []):  # rows with every key masked (3-D: slice bh; 2-D: bh ignored)
        row = attn_mask[bh, i] if attn_mask.dim() == 3 else attn_mask[i]
        row.fill_(True if attn_mask.dtype == torch.bool else float('-inf'))
    kpm = None
    if c.get('keyPaddingMask'):
        kpm = r.bool_mask(B, S, keep_first_key=keep) if c['keyPaddingMask'] == 'bool' \
            else r.float_mask(B, S, keep_first_key=keep)
    for b in c.get('paddedBatches', []):
        kpm[b].fill_(True if kpm.dtype == torch.bool else float('-inf'))

    eff_scale = scale if scale is not None else 1 / math.sqrt(E // H)
    out_m, w_m = manual_mha(p, query, key, value, H, attn_mask, kpm, causal, eff_scale, need_weights, average)
    if manual:
        out, w = out_m, w_m
        source = 'torch float64 ops (manual_mha): scale / fully masked rows / float padding with a mask'
    else:
        out, w = torch_mha(p, query, key, value, E, H, kdim, vdim, bias, attn_mask, kpm, causal,
                           need_weights, average)
        source = 'torch.nn.MultiheadAttention(batch_first=True), float64'
        # validate the manual path against the module
        diff = (out - out_m).abs().max().item()
        if need_weights:
            diff = max(diff, (w - w_m).abs().max().item())
        if diff > 1e-12:
            raise RuntimeError(f"{c['name']}: manual_mha differs from nn.MultiheadAttention by {diff}")
    check_finite(c['name'] + ' output', out)
    check_finite(c['name'] + ' weights', w)
    if not need_weights:
        assert w is None

    args = {'query': flat(query)}
    if cross:
        args['key'] = flat(key)
        if not c.get('valueIsKey'):
            args['value'] = flat(value)
    elif c.get('explicitKeyValue'):
        args['key'] = flat(query)
        args['value'] = flat(query)
    args['embedDim'] = E
    args['numHeads'] = H
    if 'batch' in c:
        args['batch'] = B
    if 'kdim' in c:
        args['kdim'] = kdim
    if 'vdim' in c:
        args['vdim'] = vdim
    if c.get('passLens'):
        args['tgtLen'] = L
        args['srcLen'] = S
    if separate:
        args['qProjWeight'] = flat(p['q_proj_weight'])
        args['kProjWeight'] = flat(p['k_proj_weight'])
        args['vProjWeight'] = flat(p['v_proj_weight'])
    else:
        args['inProjWeight'] = flat(p['in_proj_weight'])
    if bias:
        args['inProjBias'] = flat(p['in_proj_bias'])
    args['outProjWeight'] = flat(p['out_proj_weight'])
    if bias:
        args['outProjBias'] = flat(p['out_proj_bias'])
    if attn_mask is not None:
        args['attnMask'] = enc_mask(attn_mask)
    if kpm is not None:
        args['keyPaddingMask'] = enc_mask(kpm)
    for name in ('isCausal', 'scale', 'needWeights', 'averageAttnWeights'):
        if name in c:
            args[name] = c[name]
    return {
        'name': c['name'],
        'description': c['desc'],
        'fn': 'multiHeadAttention',
        'source': source,
        'args': args,
        'expected': {
            'output': flat(out),
            'outputShape': list(out.shape),
            'weights': None if w is None else flat(w),
            'weightsShape': None if w is None else list(w.shape),
        },
    }


# ----------------------------------------------------------------------------- decoder models

def rotate_half(x):
    """LLaMA / GPT-NeoX: (x1, x2) → (−x2, x1) over the two halves of the last axis."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotate_every_two(x):
    """GPT-J: (x0, x1, x2, x3, …) → (−x1, x0, −x3, x2, …)."""
    return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)


def apply_rope(x, positions, dim, base, interleaved):
    """x [B, heads, len, hd]: the first dim entries rotated as the models do, the rest unchanged."""
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    freqs = torch.outer(positions.double(), inv_freq)  # [len, dim/2]
    if interleaved:  # GPT-J: sin/cos repeated per pair
        cos, sin = freqs.cos().repeat_interleave(2, dim=-1), freqs.sin().repeat_interleave(2, dim=-1)
        rot = rotate_every_two
    else:  # LLaMA: emb = cat(freqs, freqs)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        rot = rotate_half
    xr = x[..., :dim]
    return torch.cat((xr * cos + rot(xr) * sin, x[..., dim:]), dim=-1)


def bloom_slopes(n):
    """BLOOM's build_alibi_tensor slopes."""
    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    m = 2 ** math.floor(math.log2(n))
    return power_of_2(m) + bloom_slopes(2 * m)[0::2][:n - m]


def make_decoder(c):
    r, B, L, S, E, H = mha_dims(c)
    Hkv, hd = c.get('numKvHeads', H), c.get('headDim', E // H)
    kdim = c.get('kdim', E)
    cross = S != L or kdim != E
    off = c.get('positionOffset', 0)
    query = r.uniform(B, L, E)
    key = r.uniform(B, S, kdim) if cross else query
    value = r.uniform(B, S, kdim) if cross else query
    wq, wk, wv = r.weight(H * hd, E), r.weight(Hkv * hd, kdim), r.weight(Hkv * hd, kdim)
    bq, bk, bv = r.uniform(H * hd, scale=0.5), r.uniform(Hkv * hd, scale=0.5), r.uniform(Hkv * hd, scale=0.5)
    wo, bo = r.weight(E, H * hd), r.uniform(E, scale=0.5)
    kpm = r.bool_mask(B, S) if c.get('keyPaddingMask') else None
    d = lambda t: t.double()
    # 1. project, split heads: [B, heads, len, hd]; rotate Q (at off + i) and K (at j)
    q = F.linear(d(query), d(wq), d(bq)).view(B, L, H, hd).transpose(1, 2)
    k = F.linear(d(key), d(wk), d(bk)).view(B, S, Hkv, hd).transpose(1, 2)
    v = F.linear(d(value), d(wv), d(bv)).view(B, S, Hkv, hd).transpose(1, 2)
    rope = c.get('rope')
    if rope is not None:
        ro = {} if rope is True else rope
        dim, base, inter = ro.get('dim', hd), ro.get('base', 10000), ro.get('interleaved', False)
        q = apply_rope(q, torch.arange(L) + off, dim, base, inter)
        k = apply_rope(k, torch.arange(S), dim, base, inter)
    # grouped-query: each K/V head repeated for its numHeads / numKvHeads query heads (LLaMA's repeat_kv)
    rep_ = H // Hkv
    k = k[:, :, None].expand(B, Hkv, rep_, S, hd).reshape(B, H, S, hd)
    v = v[:, :, None].expand(B, Hkv, rep_, S, hd).reshape(B, H, S, hd)
    # 2. scores + ALiBi + masks by position
    s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hd)
    pos_q = (torch.arange(L) + off).view(L, 1)
    pos_k = torch.arange(S).view(1, S)
    alibi = c.get('alibi')
    if alibi is not None:
        slopes = torch.tensor(bloom_slopes(H) if alibi is True else alibi, dtype=torch.float64)
        s = s + slopes.view(1, H, 1, 1) * (pos_k - pos_q).double()
    masked = torch.zeros(L, S, dtype=torch.bool)
    if c.get('isCausal'):
        masked |= pos_k > pos_q
    if c.get('slidingWindow'):
        masked |= pos_q - pos_k >= c['slidingWindow']
    s = s.masked_fill(masked, float('-inf'))
    if kpm is not None:
        s = s.masked_fill(kpm.view(B, 1, 1, S), float('-inf'))
    w = masked_softmax(s)
    a = torch.matmul(w, v).transpose(1, 2).reshape(B, L, H * hd)
    out = F.linear(a, d(wo), d(bo))
    average = c.get('averageAttnWeights', True)
    w = w.mean(dim=1) if average else w
    check_finite(c['name'] + ' output', out)

    args = {'query': flat(query)}
    if cross:
        args['key'], args['value'] = flat(key), flat(value)
    args.update(embedDim=E, numHeads=H)
    for name in ('batch', 'kdim', 'numKvHeads', 'headDim', 'positionOffset', 'slidingWindow', 'isCausal',
                 'averageAttnWeights'):
        if name in c:
            args[name] = c[name]
    if 'kdim' in c:
        args['vdim'] = kdim
    args.update(qProjWeight=flat(wq), kProjWeight=flat(wk), vProjWeight=flat(wv), qProjBias=flat(bq),
                kProjBias=flat(bk), vProjBias=flat(bv), outProjWeight=flat(wo), outProjBias=flat(bo))
    if rope is not None:
        args['rope'] = rope
    if alibi is not None:
        args['alibi'] = alibi
    if kpm is not None:
        args['keyPaddingMask'] = enc_mask(kpm)
    return {
        'name': c['name'],
        'description': c['desc'],
        'fn': 'multiHeadAttention',
        'source': 'decoder models\' code in torch float64 ops: repeat_kv, rotate_half / rotate_every_two, BLOOM slopes',
        'args': args,
        'expected': {
            'output': flat(out),
            'outputShape': list(out.shape),
            'weights': flat(w),
            'weightsShape': list(w.shape),
        },
    }


DECODER_CASES = [
    dict(name='dec-gqa', desc='grouped-query: 4 heads on 2 K/V heads, causal', seed=300, batch=2, tgtLen=5,
         embedDim=16, numHeads=4, numKvHeads=2, isCausal=True),
    dict(name='dec-mqa-rope-llama', desc='multi-query, LLaMA RoPE (rotate_half), offset 3', seed=301, tgtLen=6,
         embedDim=16, numHeads=4, numKvHeads=1, rope=True, positionOffset=3, isCausal=True),
    dict(name='dec-rope-gptj-partial', desc='GPT-J RoPE (rotate_every_two) on 4 of 8 entries, base 100', seed=302,
         tgtLen=6, embedDim=16, numHeads=2, rope={'dim': 4, 'interleaved': True, 'base': 100}),
    dict(name='dec-rope-llama-partial-headdim', desc='headDim 6 ≠ embedDim/numHeads, LLaMA RoPE on 4 entries',
         seed=303, tgtLen=5, embedDim=12, numHeads=4, numKvHeads=2, headDim=6, rope={'dim': 4},
         averageAttnWeights=False),
    dict(name='dec-alibi-window', desc='BLOOM ALiBi for 6 heads, window 3, causal, padding', seed=304, batch=2,
         tgtLen=7, embedDim=12, numHeads=6, alibi=True, slidingWindow=3, isCausal=True, keyPaddingMask=True),
    dict(name='dec-cross-offset', desc='cross attention, kdim 5, offset 4, RoPE, GQA, slopes given', seed=305,
         tgtLen=3, srcLen=7, kdim=5, embedDim=8, numHeads=4, numKvHeads=2, positionOffset=4, isCausal=True,
         rope=True, alibi=[0.5, -0.25, 0.125, 1.0]),
]


# ----------------------------------------------------------------------------- safetensors

SAFETENSORS_DIR = os.path.join(OUT_DIR, 'safetensors')
ST_DTYPES = {torch.float32: 'F32', torch.float16: 'F16', torch.bfloat16: 'BF16', torch.int64: 'I64'}


def write_safetensors(path, tensors, metadata):
    """The safetensors format: u64 little-endian header length, JSON header (padded with spaces to a
    multiple of 8, as the reference writer does), then each tensor's little-endian bytes in order."""
    header, chunks, offset = {'__metadata__': metadata}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous()
        raw = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy()  # numpy has no bfloat16
        data = raw.astype(raw.dtype.newbyteorder('<'), copy=False).tobytes()
        header[name] = {'dtype': ST_DTYPES[t.dtype], 'shape': list(t.shape), 'data_offsets': [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(',', ':')).encode('utf-8')
    text += b' ' * (-len(text) % 8)
    blob = len(text).to_bytes(8, 'little') + text + b''.join(chunks)
    with open(path, 'wb') as f:
        f.write(blob)
    return len(blob)


class HfAttention(nn.Module):
    """Hugging Face LLaMA / Qwen2 attention (modeling_llama.py): q/k/v/o_proj Linear layers, RoPE by
    rotate_half on Q and K, K/V heads repeated for grouped-query (repeat_kv), causal softmax."""

    def __init__(self, E, H, Hkv, qkv_bias):
        super().__init__()
        self.H, self.Hkv, self.hd = H, Hkv, E // H
        self.q_proj = nn.Linear(E, H * self.hd, bias=qkv_bias)
        self.k_proj = nn.Linear(E, Hkv * self.hd, bias=qkv_bias)
        self.v_proj = nn.Linear(E, Hkv * self.hd, bias=qkv_bias)
        self.o_proj = nn.Linear(H * self.hd, E, bias=False)

    def forward(self, x):
        B, L, _ = x.shape
        q = self.q_proj(x).view(B, L, self.H, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, L, self.Hkv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, L, self.Hkv, self.hd).transpose(1, 2)
        q = apply_rope(q, torch.arange(L), self.hd, 10000, False)
        k = apply_rope(k, torch.arange(L), self.hd, 10000, False)
        rep = self.H // self.Hkv
        k = k[:, :, None].expand(B, self.Hkv, rep, L, self.hd).reshape(B, self.H, L, self.hd)
        v = v[:, :, None].expand(B, self.Hkv, rep, L, self.hd).reshape(B, self.H, L, self.hd)
        s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.hd)
        s = s.masked_fill(causal_mask(L, L), float('-inf'))
        a = torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2).reshape(B, L, self.H * self.hd)
        return self.o_proj(a)


def randomize(module, r):
    """Seeded parameters (nn.Module's own init draws from the global generator)."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(r.uniform(*p.shape, scale=1 / math.sqrt(p.shape[-1])))


def make_safetensors(c):
    r, B, L = Rand(c['seed']), c['batch'], c['tgtLen']
    E, H = c['embedDim'], c['numHeads']
    dtype, prefix = c['dtype'], c['prefix']
    if c['kind'] == 'mha':
        module = nn.MultiheadAttention(E, H, bias=True, batch_first=True)
        layer = {'embedDim': E, 'numHeads': H}
        forward = {'isCausal': False}
    else:
        Hkv = c['numKvHeads']
        module = HfAttention(E, H, Hkv, c['qkvBias'])
        layer = {'embedDim': E, 'numHeads': H, 'numKvHeads': Hkv, 'rope': True}
        forward = {'isCausal': True}
    randomize(module, r)
    # What the file holds, and the module computing from exactly that (the weights rounded to dtype).
    stored = {k: v.to(dtype) for k, v in module.state_dict().items()}
    module.load_state_dict({k: v.float() for k, v in stored.items()})
    module = module.double()
    module.train()  # nn.MultiheadAttention's Python path; dropout is 0
    query = r.uniform(B, L, E)
    with torch.no_grad():
        out = module(query.double(), query.double(), query.double(), need_weights=False)[0] \
            if c['kind'] == 'mha' else module(query.double())
    check_finite(c['name'], out)
    tensors = {prefix + k: v for k, v in stored.items()}
    tensors.update({k: v.to(dtype) if v.is_floating_point() else v for k, v in c.get('others', {}).items()})
    size = write_safetensors(os.path.join(SAFETENSORS_DIR, c['name'] + '.safetensors'), tensors, {'format': 'pt'})
    forward.update(query=flat(query), batch=B)
    sidecar = {'name': c['name'], 'description': c['desc'], 'prefix': prefix, 'layer': layer, 'forward': forward,
               'expected': {'output': flat(out), 'outputShape': list(out.shape)}}
    text = json.dumps(sidecar, allow_nan=False, separators=(',', ':')) + '\n'
    with open(os.path.join(SAFETENSORS_DIR, c['name'] + '.json'), 'w') as f:
        f.write(text)
    return size + len(text)


SAFETENSORS_CASES = [
    dict(name='mha-in-proj-f32', desc='nn.MultiheadAttention(16, 4) state_dict in F32, among other tensors', kind='mha',
         seed=400, batch=2, tgtLen=5, embedDim=16, numHeads=4, dtype=torch.float32, prefix='encoder.layers.0.self_attn.',
         others={'encoder.layers.0.norm1.weight': torch.ones(16), 'encoder.position_ids': torch.arange(8).view(1, 8)}),
    dict(name='llama-gqa-f16', desc='LLaMA attention, 4 heads on 2 K/V heads, RoPE, causal, F16', kind='hf',
         seed=401, batch=1, tgtLen=7, embedDim=32, numHeads=4, numKvHeads=2, qkvBias=False, dtype=torch.float16,
         prefix='model.layers.0.self_attn.', others={'model.norm.weight': torch.ones(32)}),
    dict(name='qwen-bias-bf16', desc='Qwen2-style attention (q/k/v biases, none on o_proj), RoPE, causal, BF16',
         kind='hf', seed=402, batch=2, tgtLen=4, embedDim=16, numHeads=2, numKvHeads=2, qkvBias=True,
         dtype=torch.bfloat16, prefix='model.layers.1.self_attn.'),
]


# ----------------------------------------------------------------------------- selfAttention

def make_sa(c):
    r = Rand(c['seed'])
    B = c.get('batch', 1)
    L, D, dK, dV = c['seqLen'], c['dModel'], c['dK'], c['dV']
    bias = c.get('bias', False)
    x = r.uniform(B, L, D)
    lin = {}
    for name, out_dim in (('q', dK), ('k', dK), ('v', dV)):
        layer = nn.Linear(D, out_dim, bias=bias)
        with torch.no_grad():
            layer.weight.copy_(r.weight(out_dim, D))
            if bias:
                layer.bias.copy_(r.uniform(out_dim, scale=0.5))
        lin[name] = layer.double()
    keep = not c.get('allowFullyMasked', False)
    mask = None
    if c.get('attnMask') == 'bool':
        mask = r.bool_mask(L, L, keep_first_key=keep)
    elif c.get('attnMask') == 'float':
        mask = r.float_mask(L, L, keep_first_key=keep)
    for i in c.get('maskedRows', []):
        mask[i].fill_(True if mask.dtype == torch.bool else float('-inf'))
    scale = c.get('scale', 1 / math.sqrt(dK))
    need_weights = c.get('needWeights', True)

    with torch.no_grad():
        xd = x.double()
        q, k, v = lin['q'](xd), lin['k'](xd), lin['v'](xd)          # 1. project
        s = torch.matmul(q, k.transpose(-2, -1)) * scale              # 2. scores
        if mask is not None:
            s = s + additive(mask)
        if c.get('isCausal'):
            s = s.masked_fill(causal_mask(L, L), float('-inf'))
        w = masked_softmax(s)                                         # 3. softmax
        out = torch.matmul(w, v)                                      # 4. weighted sum
    check_finite(c['name'] + ' output', out)
    check_finite(c['name'] + ' weights', w)

    args = {'x': flat(x), 'seqLen': L, 'dModel': D}
    if 'batch' in c:
        args['batch'] = B
    args['wq'] = flat(lin['q'].weight)
    args['wk'] = flat(lin['k'].weight)
    args['wv'] = flat(lin['v'].weight)
    if bias:
        args['bq'] = flat(lin['q'].bias)
        args['bk'] = flat(lin['k'].bias)
        args['bv'] = flat(lin['v'].bias)
    if mask is not None:
        args['attnMask'] = enc_mask(mask)
    for name in ('isCausal', 'scale', 'needWeights'):
        if name in c:
            args[name] = c[name]
    return {
        'name': c['name'],
        'description': c['desc'],
        'fn': 'selfAttention',
        'source': 'torch float64 ops: three nn.Linear, matmul, softmax, matmul',
        'args': args,
        'expected': {
            'output': flat(out),
            'outputShape': list(out.shape),
            'weights': flat(w) if need_weights else None,
            'weightsShape': list(w.shape) if need_weights else None,
        },
    }


# ----------------------------------------------------------------------------- the cases

MHA_CASES = [
    # in-projection and biases
    dict(name='mha-packed-bias', desc='packed inProjWeight, biases, self-attention', seed=1,
         tgtLen=5, embedDim=8, numHeads=2),
    dict(name='mha-packed-nobias', desc='bias=False: no inProjBias, no outProjBias', seed=2,
         batch=2, tgtLen=4, embedDim=8, numHeads=4, bias=False),
    dict(name='mha-explicit-key-value', desc='key and value passed explicitly (= query)', seed=3,
         batch=2, tgtLen=5, embedDim=12, numHeads=3, explicitKeyValue=True),
    dict(name='mha-batch3-lens', desc='batch 3, tgtLen/srcLen passed', seed=4,
         batch=3, tgtLen=6, embedDim=12, numHeads=3, passLens=True),
    dict(name='mha-headdim1', desc='headDim 1 (embedDim 4, 4 heads)', seed=5,
         batch=2, tgtLen=3, embedDim=4, numHeads=4),
    dict(name='mha-larger', desc='batch 2, 17 tokens, embedDim 32, 4 heads, float mask', seed=6,
         batch=2, tgtLen=17, embedDim=32, numHeads=4, attnMask='float2d'),
    # cross-attention
    dict(name='mha-cross-tgt3-src6', desc='cross-attention, tgtLen < srcLen, packed', seed=7,
         batch=2, tgtLen=3, srcLen=6, embedDim=8, numHeads=2, cross=True),
    dict(name='mha-cross-tgt7-src2', desc='cross-attention, tgtLen > srcLen, no bias', seed=8,
         tgtLen=7, srcLen=2, embedDim=6, numHeads=3, cross=True, bias=False),
    dict(name='mha-value-is-key', desc='value omitted: defaults to key', seed=9,
         batch=2, tgtLen=4, srcLen=5, embedDim=8, numHeads=2, cross=True, valueIsKey=True),
    dict(name='mha-separate-kdim-vdim', desc='q/k/v weights, kdim 5, vdim 7', seed=10,
         batch=2, tgtLen=4, srcLen=6, embedDim=8, numHeads=4, kdim=5, vdim=7),
    dict(name='mha-separate-kdim-vdim-nobias', desc='q/k/v weights, kdim 3, vdim 10, bias=False', seed=11,
         tgtLen=5, srcLen=3, embedDim=6, numHeads=2, kdim=3, vdim=10, bias=False),
    dict(name='mha-separate-kdim-only', desc='q/k/v weights, kdim 9, vdim = embedDim', seed=12,
         batch=2, tgtLen=3, srcLen=4, embedDim=8, numHeads=2, kdim=9),
    # attn_mask
    dict(name='mha-attnmask-bool-2d', desc='bool attn_mask [L, S]', seed=13,
         batch=2, tgtLen=6, embedDim=8, numHeads=2, attnMask='bool2d'),
    dict(name='mha-attnmask-float-2d', desc='float attn_mask [L, S] with -inf', seed=14,
         tgtLen=5, srcLen=7, embedDim=8, numHeads=2, cross=True, attnMask='float2d'),
    dict(name='mha-attnmask-bool-3d', desc='bool attn_mask [batch*numHeads, L, S]', seed=15,
         batch=2, tgtLen=5, embedDim=8, numHeads=2, attnMask='bool3d'),
    dict(name='mha-attnmask-float-3d', desc='float attn_mask [batch*numHeads, L, S]', seed=16,
         batch=2, tgtLen=4, srcLen=6, embedDim=16, numHeads=4, cross=True, attnMask='float3d'),
    # key_padding_mask
    dict(name='mha-kpm-bool', desc='bool key_padding_mask [batch, S]', seed=17,
         batch=3, tgtLen=5, embedDim=8, numHeads=2, keyPaddingMask='bool'),
    dict(name='mha-kpm-float', desc='float key_padding_mask [batch, S] (additive)', seed=18,
         batch=2, tgtLen=3, srcLen=6, embedDim=8, numHeads=2, cross=True, keyPaddingMask='float'),
    # causal (passed to torch as an explicit mask)
    dict(name='mha-causal', desc='isCausal, L = S', seed=19,
         batch=2, tgtLen=6, embedDim=8, numHeads=2, isCausal=True),
    dict(name='mha-causal-tgt4-src7', desc='isCausal, tgtLen < srcLen: top-left aligned', seed=20,
         tgtLen=4, srcLen=7, embedDim=8, numHeads=2, cross=True, isCausal=True),
    dict(name='mha-causal-tgt7-src4', desc='isCausal, tgtLen > srcLen: top-left aligned', seed=21,
         tgtLen=7, srcLen=4, embedDim=8, numHeads=4, cross=True, isCausal=True),
    dict(name='mha-not-causal-explicit', desc='isCausal false passed explicitly', seed=22,
         tgtLen=4, embedDim=8, numHeads=2, isCausal=False),
    # results
    dict(name='mha-no-weights', desc='needWeights false: weights null', seed=23,
         batch=2, tgtLen=5, embedDim=8, numHeads=2, needWeights=False),
    dict(name='mha-per-head-weights', desc='averageAttnWeights false: [batch, numHeads, L, S]', seed=24,
         batch=2, tgtLen=4, srcLen=5, embedDim=16, numHeads=4, cross=True, averageAttnWeights=False),
    dict(name='mha-need-weights-average-explicit', desc='needWeights and averageAttnWeights true, explicit', seed=25,
         tgtLen=4, embedDim=8, numHeads=2, needWeights=True, averageAttnWeights=True),
    # combinations
    dict(name='mha-causal-bool2d-kpm-bool', desc='causal + bool attn_mask + bool padding', seed=26,
         batch=2, tgtLen=6, embedDim=12, numHeads=3, isCausal=True, attnMask='bool2d', keyPaddingMask='bool'),
    dict(name='mha-causal-float3d-kpm-bool-perhead', desc='causal + float 3-D mask + bool padding, per-head weights, separate weights',
         seed=27, batch=2, tgtLen=5, srcLen=6, embedDim=8, numHeads=2, kdim=5, vdim=8,
         isCausal=True, attnMask='float3d', keyPaddingMask='bool', averageAttnWeights=False),
    dict(name='mha-bool3d-kpm-bool-noweights', desc='bool 3-D mask + bool padding, needWeights false', seed=28,
         batch=3, tgtLen=4, embedDim=8, numHeads=2, attnMask='bool3d', keyPaddingMask='bool', needWeights=False),
    # computed with torch float64 ops (torch 1.13 MHA cannot)
    dict(name='mha-scale', desc='scale 0.3 (torch 1.13 MHA has no scale)', seed=29, manual=True,
         batch=2, tgtLen=5, embedDim=8, numHeads=2, scale=0.3),
    dict(name='mha-scale-causal-masks', desc='scale 1.7 + causal + float mask + float padding', seed=30, manual=True,
         batch=2, tgtLen=5, srcLen=6, embedDim=12, numHeads=3, cross=True, scale=1.7, isCausal=True,
         attnMask='float2d', keyPaddingMask='float'),
    dict(name='mha-fully-masked-bool3d', desc='rows fully masked by a bool 3-D mask: zero weights, output = outProjBias',
         seed=31, manual=True, allowFullyMasked=True, batch=2, tgtLen=4, embedDim=8, numHeads=2,
         attnMask='bool3d', maskedRows=[(0, 1), (1, 3), (2, 0), (3, 0)], averageAttnWeights=False),
    dict(name='mha-fully-masked-float2d-nobias', desc='a row fully -inf in a float 2-D mask, no bias: zeros',
         seed=32, manual=True, allowFullyMasked=True, tgtLen=5, embedDim=8, numHeads=2, bias=False,
         attnMask='float2d', maskedRows=[(0, 2)]),
    dict(name='mha-fully-padded-batch', desc='every key of batch 1 padded: zero weights, output = outProjBias',
         seed=33, manual=True, allowFullyMasked=True, batch=3, tgtLen=4, srcLen=5, embedDim=8, numHeads=2,
         cross=True, keyPaddingMask='bool', paddedBatches=[1], isCausal=True),
    dict(name='mha-float-kpm-float-mask', desc='float padding with a float mask (torch 1.13 cannot combine)',
         seed=34, manual=True, batch=2, tgtLen=4, embedDim=8, numHeads=2, attnMask='float3d', keyPaddingMask='float'),
]

SA_CASES = [
    dict(name='sa-basic', desc='dK != dV, no bias', seed=101, seqLen=5, dModel=8, dK=4, dV=6),
    dict(name='sa-bias-batch', desc='biases, batch 2', seed=102, batch=2, seqLen=4, dModel=6, dK=5, dV=3, bias=True),
    dict(name='sa-causal', desc='isCausal, batch 3', seed=103, batch=3, seqLen=6, dModel=8, dK=4, dV=4, isCausal=True),
    dict(name='sa-mask-bool', desc='bool attnMask', seed=104, batch=2, seqLen=7, dModel=5, dK=8, dV=4, attnMask='bool'),
    dict(name='sa-mask-float', desc='float attnMask with -inf', seed=105, seqLen=6, dModel=8, dK=4, dV=9,
         attnMask='float', bias=True),
    dict(name='sa-scale', desc='scale 0.25', seed=106, seqLen=5, dModel=8, dK=4, dV=4, scale=0.25),
    dict(name='sa-no-weights', desc='needWeights false', seed=107, batch=2, seqLen=4, dModel=8, dK=4, dV=4,
         needWeights=False),
    dict(name='sa-causal-mask-bias', desc='causal + float mask + biases + scale', seed=108, batch=2, seqLen=6,
         dModel=8, dK=4, dV=5, isCausal=True, attnMask='float', bias=True, scale=0.6),
    dict(name='sa-fully-masked', desc='fully masked rows: zero weights, zero output', seed=109, batch=2,
         seqLen=5, dModel=8, dK=4, dV=3, attnMask='bool', maskedRows=[0, 3], allowFullyMasked=True, bias=True),
    dict(name='sa-dmodel64', desc='8 tokens, dModel 64, dK 16, dV 24', seed=110, seqLen=8, dModel=64, dK=16, dV=24,
         bias=True, isCausal=True),
]


def main():
    torch.set_default_dtype(torch.float32)
    os.makedirs(OUT_DIR, exist_ok=True)
    for f in os.listdir(OUT_DIR):
        if f.endswith('.json'):
            os.remove(os.path.join(OUT_DIR, f))
    total = 0
    for c in MHA_CASES:
        fx = make_mha(c)
        total += write(fx)
    for c in SA_CASES:
        fx = make_sa(c)
        total += write(fx)
    for c in DECODER_CASES:
        total += write(make_decoder(c))
    os.makedirs(SAFETENSORS_DIR, exist_ok=True)
    for c in SAFETENSORS_CASES:
        size = make_safetensors(c)
        if size > 60_000:
            sys.exit(f"{c['name']}: {size} bytes, over the 60 KB a fixture may take")
        total += size
    print(f'{len(MHA_CASES) + len(SA_CASES) + len(DECODER_CASES) + len(SAFETENSORS_CASES)} fixtures, {total} bytes in {os.path.normpath(OUT_DIR)}')
    if total > 1_500_000:
        sys.exit('fixtures exceed 1.5 MB')


def write(fx):
    text = json.dumps(fx, allow_nan=False, separators=(',', ':'))
    with open(os.path.join(OUT_DIR, fx['name'] + '.json'), 'w') as f:
        f.write(text + '\n')
    return len(text) + 1


if __name__ == '__main__':
    main()
