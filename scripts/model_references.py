"""Float64 PyTorch forwards of the model families issue 18 runs (llama, mistral, qwen2, gpt2, bert),
written from Hugging Face transformers' modeling code (modeling_llama.py, modeling_mistral.py,
modeling_qwen2.py, modeling_gpt2.py, modeling_bert.py, modeling_rope_utils.py), which cannot be
installed here. They read a checkpoint's tensors by their Hugging Face names and return the logits,
the final hidden states and every layer's attention probabilities [heads, T, keys].

Layouts: activations [T, hidden] (batch 1); nn.Linear weights [out, in] (y = x·Wᵀ + b); GPT-2's
Conv1D weights [in, out] (y = x·W + b)."""
import math

import torch
import torch.nn.functional as F

D = torch.float64


def rms_norm(x, weight, eps):
    # LlamaRMSNorm: the variance is the mean square (no mean subtraction), the weight multiplies last.
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def layer_norm(x, weight, bias, eps):
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def silu(x):
    return x * torch.sigmoid(x)


def gelu_tanh(x):
    # gelu_new / gelu_pytorch_tanh (the same formula; transformers' NewGELUActivation).
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gelu_erf(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


ACTIVATIONS = {'silu': silu, 'swish': silu, 'gelu': gelu_erf, 'gelu_new': gelu_tanh, 'gelu_pytorch_tanh': gelu_tanh}


def rope_inv_freq(cfg, head_dim):
    """modeling_rope_utils: _compute_default_rope_parameters, then the linear or llama3 rescaling."""
    dim = int(head_dim * cfg.get('partial_rotary_factor', 1.0))
    base = cfg.get('rope_theta', 10000.0)
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=D) / dim))
    scaling = cfg.get('rope_scaling') or {}
    kind = scaling.get('rope_type', scaling.get('type', 'default'))
    if kind == 'default':
        return inv_freq
    if kind == 'linear':
        return inv_freq / scaling['factor']
    if kind == 'llama3':
        factor, low, high = scaling['factor'], scaling['low_freq_factor'], scaling['high_freq_factor']
        old_context = scaling['original_max_position_embeddings']
        low_freq_wavelen, high_freq_wavelen = old_context / low, old_context / high
        wavelen = 2 * math.pi / inv_freq
        scaled = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
        smooth = (old_context / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
        return torch.where(medium, smoothed, scaled)
    raise ValueError(f'rope kind {kind}')


def apply_rope(x, positions, inv_freq):
    """x [H, T, head_dim]: rotate_half over the first 2·len(inv_freq) entries of each head (the
    half-split pairing, entry i with i + rot/2); the rest pass through (partial rotary)."""
    rot = 2 * inv_freq.numel()
    freqs = positions.to(D)[:, None] * inv_freq[None, :]
    emb = torch.cat([freqs, freqs], dim=-1)
    cos, sin = emb.cos(), emb.sin()
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    x1, x2 = x_rot[..., :rot // 2], x_rot[..., rot // 2:]
    rotated = torch.cat([-x2, x1], dim=-1)
    return torch.cat([x_rot * cos + rotated * sin, x_pass], dim=-1)


def attend(q, k, v, scale, causal, window=None, q_offset=0):
    """q [H, T, d], k/v [H, S, d] (already one per query head) → (out [T, H·d], probs [H, T, S]).
    Query i sits at position q_offset + i; key j is hidden when j > i (causal) or i − j ≥ window."""
    scores = q @ k.transpose(-1, -2) * scale
    T, S = q.shape[1], k.shape[1]
    qi = torch.arange(T)[:, None] + q_offset
    kj = torch.arange(S)[None, :]
    hidden = torch.zeros(T, S, dtype=torch.bool)
    if causal:
        hidden |= kj > qi
    if window is not None:
        hidden |= (qi - kj) >= window
    probs = torch.softmax(scores.masked_fill(hidden, float('-inf')), dim=-1)
    out = (probs @ v).transpose(0, 1).reshape(T, -1)
    return out, probs


def linear(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


class Decoder:
    """llama / mistral / qwen2 (the same graph; the family decides biases and the window), with a
    KV cache so a prompt can be fed whole or in chunks."""

    def __init__(self, cfg, tensors):
        self.cfg, self.t = cfg, tensors
        self.H = cfg['num_attention_heads']
        self.KV = cfg.get('num_key_value_heads') or self.H
        self.hd = cfg.get('head_dim') or cfg['hidden_size'] // self.H
        self.inv_freq = rope_inv_freq(cfg, self.hd)
        self.window = cfg.get('sliding_window') if cfg['model_type'] == 'mistral' else None
        self.act = ACTIVATIONS[cfg.get('hidden_act', 'silu')]
        self.eps = cfg.get('rms_norm_eps', 1e-6)
        self.reset()

    def reset(self):
        self.cache = [(None, None) for _ in range(self.cfg['num_hidden_layers'])]
        self.length = 0

    def g(self, name):
        return self.t.get(name)

    def forward(self, ids):
        t, T = self.t, len(ids)
        positions = torch.arange(self.length, self.length + T)
        h = t['model.embed_tokens.weight'][torch.tensor(ids)]
        attention = []
        for i in range(self.cfg['num_hidden_layers']):
            p = f'model.layers.{i}.'
            x = rms_norm(h, t[p + 'input_layernorm.weight'], self.eps)
            a = p + 'self_attn.'
            q = linear(x, t[a + 'q_proj.weight'], self.g(a + 'q_proj.bias')).view(T, self.H, self.hd).transpose(0, 1)
            k = linear(x, t[a + 'k_proj.weight'], self.g(a + 'k_proj.bias')).view(T, self.KV, self.hd).transpose(0, 1)
            v = linear(x, t[a + 'v_proj.weight'], self.g(a + 'v_proj.bias')).view(T, self.KV, self.hd).transpose(0, 1)
            q, k = apply_rope(q, positions, self.inv_freq), apply_rope(k, positions, self.inv_freq)
            past_k, past_v = self.cache[i]
            if past_k is not None:
                k, v = torch.cat([past_k, k], dim=1), torch.cat([past_v, v], dim=1)
            self.cache[i] = (k, v)
            # repeat_kv: query head n reads K/V head n // (H / KV)
            rep = self.H // self.KV
            out, probs = attend(q, k.repeat_interleave(rep, 0), v.repeat_interleave(rep, 0), self.hd ** -0.5,
                                True, self.window, self.length)
            attention.append(probs)
            h = h + linear(out, t[a + 'o_proj.weight'], self.g(a + 'o_proj.bias'))
            x = rms_norm(h, t[p + 'post_attention_layernorm.weight'], self.eps)
            m = p + 'mlp.'
            gate = linear(x, t[m + 'gate_proj.weight'], self.g(m + 'gate_proj.bias'))
            up = linear(x, t[m + 'up_proj.weight'], self.g(m + 'up_proj.bias'))
            h = h + linear(self.act(gate) * up, t[m + 'down_proj.weight'], self.g(m + 'down_proj.bias'))
        self.length += T
        hidden = rms_norm(h, t['model.norm.weight'], self.eps)
        head = t['model.embed_tokens.weight'] if self.cfg.get('tie_word_embeddings') else t['lm_head.weight']
        return hidden @ head.T, hidden, attention


class GPT2:
    """GPT2LMHeadModel: learned positions, pre-norm LayerNorm, fused c_attn, gelu_new, tied head.
    Tensor names as GPT2LMHeadModel saves them (`transformer.` prefix)."""

    def __init__(self, cfg, tensors):
        self.cfg, self.t = cfg, tensors
        self.H = cfg['n_head']
        self.hd = cfg['n_embd'] // self.H
        self.act = ACTIVATIONS[cfg.get('activation_function', 'gelu_new')]
        self.eps = cfg.get('layer_norm_epsilon', 1e-5)

    def forward(self, ids):
        t, T, E = self.t, len(ids), self.cfg['n_embd']
        ln = lambda x, n: layer_norm(x, t[n + '.weight'], t[n + '.bias'], self.eps)
        conv = lambda x, n: x @ t[n + '.weight'] + t[n + '.bias']
        h = t['transformer.wte.weight'][torch.tensor(ids)] + t['transformer.wpe.weight'][:T]
        attention = []
        for i in range(self.cfg['n_layer']):
            p = f'transformer.h.{i}.'
            qkv = conv(ln(h, p + 'ln_1'), p + 'attn.c_attn')
            q, k, v = (qkv[:, j * E:(j + 1) * E].view(T, self.H, self.hd).transpose(0, 1) for j in range(3))
            out, probs = attend(q, k, v, self.hd ** -0.5, True)
            attention.append(probs)
            h = h + conv(out, p + 'attn.c_proj')
            h = h + conv(self.act(conv(ln(h, p + 'ln_2'), p + 'mlp.c_fc')), p + 'mlp.c_proj')
        hidden = ln(h, 'transformer.ln_f')
        return hidden @ t['transformer.wte.weight'].T, hidden, attention


class Bert:
    """BertForMaskedLM: post-norm encoder, gelu (erf), token types, the MLM head's transform and the
    decoder tied to the word embeddings with its own bias. Names with the `bert.` prefix."""

    def __init__(self, cfg, tensors):
        self.cfg, self.t = cfg, tensors
        self.H = cfg['num_attention_heads']
        self.hd = cfg['hidden_size'] // self.H
        self.act = ACTIVATIONS[cfg.get('hidden_act', 'gelu')]
        self.eps = cfg.get('layer_norm_eps', 1e-12)

    def forward(self, ids, token_types=None):
        t, T = self.t, len(ids)
        ln = lambda x, n: layer_norm(x, t[n + '.weight'], t[n + '.bias'], self.eps)
        lin = lambda x, n: linear(x, t[n + '.weight'], t[n + '.bias'])
        types = torch.tensor(token_types if token_types is not None else [0] * T)
        e = 'bert.embeddings.'
        h = t[e + 'word_embeddings.weight'][torch.tensor(ids)] + t[e + 'position_embeddings.weight'][:T] \
            + t[e + 'token_type_embeddings.weight'][types]
        h = ln(h, e + 'LayerNorm')
        attention = []
        for i in range(self.cfg['num_hidden_layers']):
            p = f'bert.encoder.layer.{i}.'
            heads = lambda n: lin(h, p + 'attention.self.' + n).view(T, self.H, self.hd).transpose(0, 1)
            out, probs = attend(heads('query'), heads('key'), heads('value'), self.hd ** -0.5, False)
            attention.append(probs)
            h = ln(lin(out, p + 'attention.output.dense') + h, p + 'attention.output.LayerNorm')
            inner = self.act(lin(h, p + 'intermediate.dense'))
            h = ln(lin(inner, p + 'output.dense') + h, p + 'output.LayerNorm')
        c = 'cls.predictions.'
        x = ln(self.act(lin(h, c + 'transform.dense')), c + 'transform.LayerNorm')
        logits = x @ t[e + 'word_embeddings.weight'].T + t[c + 'bias']
        return logits, h, attention
