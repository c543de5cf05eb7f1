"""A small decoder-only transformer over characters, LLaMA-shaped: pre-norm RMSNorm,
grouped-query attention with rotary positions (half-split, as LLaMA's rotate_half),
a SwiGLU MLP and an LM head tied to the embedding.

Its modules carry Hugging Face's LlamaForCausalLM names (model.embed_tokens,
model.layers.N.self_attn.q_proj, …), so its state_dict is a `llama` checkpoint as
transformers and wasm-attention's loadModel read it, and CONFIG is that checkpoint's
config.json. The attention is written out (no fused kernels) so that each term can be
compared with what the engine computes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

# config.json without vocab_size (the corpus decides it): transformers' LlamaConfig keys.
CONFIG = dict(
    model_type='llama', architectures=['LlamaForCausalLM'],
    hidden_size=128, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
    intermediate_size=384, hidden_act='silu', rms_norm_eps=1e-5, rope_theta=10000.0,
    max_position_embeddings=256,        # the page's limit (training windows are 128 tokens)
    attention_bias=False, mlp_bias=False, tie_word_embeddings=True,
    bos_token_id=0, eos_token_id=0,     # <s> starts every poem; the model ends one by starting the next
    torch_dtype='float16',
)


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
        self.n_heads, self.n_kv, self.hd = c['num_attention_heads'], c['num_key_value_heads'], c['head_dim']
        d = c['hidden_size']
        self.q_proj = nn.Linear(d, self.n_heads * self.hd, bias=False)
        self.k_proj = nn.Linear(d, self.n_kv * self.hd, bias=False)
        self.v_proj = nn.Linear(d, self.n_kv * self.hd, bias=False)
        self.o_proj = nn.Linear(self.n_heads * self.hd, d, bias=False)

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
        d, hidden = c['hidden_size'], c['intermediate_size']
        self.gate_proj = nn.Linear(d, hidden, bias=False)
        self.up_proj = nn.Linear(d, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    """transformers' LlamaDecoderLayer (modules registered in the order they run, which is the order
    the weights were first drawn in: the same seed gives the same model as before the renaming)."""
    def __init__(self, c):
        super().__init__()
        self.input_layernorm, self.self_attn = RMSNorm(c['hidden_size'], c['rms_norm_eps']), Attention(c)
        self.post_attention_layernorm, self.mlp = RMSNorm(c['hidden_size'], c['rms_norm_eps']), MLP(c)

    def forward(self, x, cos, sin, keep_weights=False):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, keep_weights)
        return x + self.mlp(self.post_attention_layernorm(x))


class Body(nn.Module):
    """transformers' LlamaModel: the embedding, the layers, the final norm."""
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c['vocab_size'], c['hidden_size'])
        self.layers = nn.ModuleList(Block(c) for _ in range(c['num_hidden_layers']))
        self.norm = RMSNorm(c['hidden_size'], c['rms_norm_eps'])


class PoemModel(nn.Module):
    """LlamaForCausalLM with tied embeddings: state_dict() holds model.* only (no lm_head.weight)."""
    def __init__(self, vocab_size, c=CONFIG):
        super().__init__()
        self.config = dict(c, vocab_size=vocab_size)
        self.model = Body(self.config)
        self.apply(self._init)
        n_layers = self.config['num_hidden_layers']
        for layer in self.model.layers:   # GPT-2's scaling: residual branches add up over the layers
            for proj in (layer.self_attn.o_proj, layer.mlp.down_proj):
                nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * n_layers))

    @staticmethod
    def _init(module):
        # small weights: the tied LM head gives logits of order one from the start
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)

    def forward(self, ids, keep_weights=False):
        """Logits [batch, t, vocab] for token ids [batch, t] at positions 0 … t−1."""
        body = self.model
        x = body.embed_tokens(ids)
        cos, sin = rope_tables(ids.shape[1], self.config['head_dim'], self.config['rope_theta'], x.dtype)
        for layer in body.layers:
            x = layer(x, cos, sin, keep_weights)
        return body.norm(x) @ body.embed_tokens.weight.T       # the LM head is the embedding, transposed

    def attention_weights(self):
        """[layer][batch, head, t, t] of the last forward run with keep_weights=True."""
        return [layer.self_attn.last_weights for layer in self.model.layers]
