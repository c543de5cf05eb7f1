"""A small decoder-only transformer over characters, LLaMA-shaped: pre-norm RMSNorm,
grouped-query attention with rotary positions (half-split, as LLaMA's rotate_half),
a SwiGLU MLP and an LM head tied to the embedding.

The attention is written out (no fused kernels) so that it is, term for term, what
wasm-attention computes for `numKvHeads`, `headDim` and `rope: true`.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG = dict(d_model=128, n_layers=4, n_heads=4, n_kv_heads=2, head_dim=32,
              ffn_hidden=384, rope_base=10000.0, norm_eps=1e-5, max_len=256)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(length, dim, base, dtype):
    inv_freq = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    angles = torch.arange(length, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return angles.cos().to(dtype), angles.sin().to(dtype)


def rotate_half_split(x, cos, sin):
    """(a, b) → (a·cos − b·sin, b·cos + a·sin) with a = x[:dim/2], b = x[dim/2:]."""
    a, b = x.chunk(2, dim=-1)
    return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_heads, self.n_kv, self.hd = c['n_heads'], c['n_kv_heads'], c['head_dim']
        self.q_proj = nn.Linear(c['d_model'], self.n_heads * self.hd, bias=False)
        self.k_proj = nn.Linear(c['d_model'], self.n_kv * self.hd, bias=False)
        self.v_proj = nn.Linear(c['d_model'], self.n_kv * self.hd, bias=False)
        self.o_proj = nn.Linear(self.n_heads * self.hd, c['d_model'], bias=False)

    def forward(self, x, cos, sin, keep_weights=False):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.n_heads, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.n_kv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.n_kv, self.hd).transpose(1, 2)
        q, k = rotate_half_split(q, cos[:t], sin[:t]), rotate_half_split(k, cos[:t], sin[:t])
        group = self.n_heads // self.n_kv           # query head h reads K/V head h // group
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.hd)
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        weights = scores.masked_fill(causal, float('-inf')).softmax(-1)
        self.last_weights = weights.detach() if keep_weights else None
        out = (weights @ v).transpose(1, 2).reshape(b, t, self.n_heads * self.hd)
        return self.o_proj(out)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gate_proj = nn.Linear(c['d_model'], c['ffn_hidden'], bias=False)
        self.up_proj = nn.Linear(c['d_model'], c['ffn_hidden'], bias=False)
        self.down_proj = nn.Linear(c['ffn_hidden'], c['d_model'], bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attn_norm, self.attn = RMSNorm(c['d_model'], c['norm_eps']), Attention(c)
        self.mlp_norm, self.mlp = RMSNorm(c['d_model'], c['norm_eps']), MLP(c)

    def forward(self, x, cos, sin, keep_weights=False):
        x = x + self.attn(self.attn_norm(x), cos, sin, keep_weights)
        return x + self.mlp(self.mlp_norm(x))


class PoemModel(nn.Module):
    def __init__(self, vocab_size, c=CONFIG):
        super().__init__()
        self.config = dict(c, vocab_size=vocab_size)
        self.embed = nn.Embedding(vocab_size, c['d_model'])
        self.layers = nn.ModuleList(Block(c) for _ in range(c['n_layers']))
        self.norm = RMSNorm(c['d_model'], c['norm_eps'])
        self.apply(self._init)
        for layer in self.layers:   # GPT-2's scaling: residual branches add up over the layers
            for proj in (layer.attn.o_proj, layer.mlp.down_proj):
                nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * c['n_layers']))

    @staticmethod
    def _init(module):
        # small weights: the tied LM head gives logits of order one from the start
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)

    def forward(self, ids, keep_weights=False):
        """Logits [batch, t, vocab] for token ids [batch, t] at positions 0 … t−1."""
        x = self.embed(ids)
        cos, sin = rope_tables(ids.shape[1], self.config['head_dim'], self.config['rope_base'], x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin, keep_weights)
        return self.norm(x) @ self.embed.weight.T       # the LM head is the embedding, transposed

    def attention_weights(self):
        """[layer][batch, head, t, t] of the last forward run with keep_weights=True."""
        return [layer.attn.last_weights for layer in self.layers]
