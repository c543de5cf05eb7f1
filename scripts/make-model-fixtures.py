#!/usr/bin/python3
"""Writes tests/fixtures/models/<name>/: tiny random checkpoints of every family issue 18 runs, in
Hugging Face's layout (config.json, model.safetensors or shards with model.safetensors.index.json,
tokenizer.json), with what a float64 evaluation of them computes (expected.json + reference.f32).

    /usr/bin/python3 scripts/make-model-fixtures.py      # Debian's python3-torch and python3-numpy

Deterministic (fixed seeds): running it again rewrites the same bytes. The references are
scripts/model_references.py (models) and scripts/model_tokenizers.py (tokenizers); before writing,
each model is checked against an independent formulation where torch has one (BERT and GPT-2 against
nn.TransformerEncoderLayer, RoPE against complex rotation, grouped-query attention against the
multi-head model with repeated K/V heads) and each decoder's whole-prompt logits against chunked and
token-by-token feeding through its KV cache."""
import json
import math
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_references as R  # noqa: E402
import model_tokenizers as TK  # noqa: E402
from model_contract import contract_config  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures', 'models')
D = torch.float64
PROMPT = 'the cat sat on the mat, hello world'
NEW_TOKENS = 6


# ---------------------------------------------------------------- safetensors

def to_bytes(t, dtype):
    t = t.detach().contiguous()
    if dtype == 'F32':
        return t.to(torch.float32).numpy().astype('<f4').tobytes()
    if dtype == 'F16':
        return t.to(torch.float16).numpy().astype('<f2').tobytes()
    if dtype == 'BF16':
        return t.to(torch.bfloat16).view(torch.int16).numpy().astype('<i2').tobytes()
    raise ValueError(dtype)


def write_safetensors(path, tensors, dtype):
    header, chunks, offset = {'__metadata__': {'format': 'pt'}}, [], 0
    for name in sorted(tensors):
        raw = to_bytes(tensors[name], dtype)
        header[name] = {'dtype': dtype, 'shape': list(tensors[name].shape), 'data_offsets': [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(',', ':')).encode()
    head += b' ' * (-len(head) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(head)) + head + b''.join(chunks))
    return offset


def read_safetensors(path):
    """Widens exactly what was written: the reference computes with the stored values."""
    blob = open(path, 'rb').read()
    (size,) = struct.unpack('<Q', blob[:8])
    header = json.loads(blob[8:8 + size])
    header.pop('__metadata__', None)
    data, out = blob[8 + size:], {}
    for name, info in header.items():
        raw = data[info['data_offsets'][0]:info['data_offsets'][1]]
        if info['dtype'] == 'BF16':
            halves = np.frombuffer(raw, '<u2').astype(np.uint32) << 16
            array = halves.view(np.float32)
        else:
            array = np.frombuffer(raw, {'F32': '<f4', 'F16': '<f2'}[info['dtype']])
        out[name] = torch.from_numpy(array.astype(np.float64).reshape(info['shape']))
    return out


def write_weights(folder, tensors, dtype, shards):
    for f in os.listdir(folder):
        if f.endswith('.safetensors') or f.endswith('.index.json'):
            os.remove(os.path.join(folder, f))
    if shards == 1:
        write_safetensors(os.path.join(folder, 'model.safetensors'), tensors, dtype)
        return read_safetensors(os.path.join(folder, 'model.safetensors'))
    names = sorted(tensors)
    weight_map, total, stored = {}, 0, {}
    for s in range(shards):
        file = f'model-{s + 1:05d}-of-{shards:05d}.safetensors'
        part = {n: tensors[n] for n in names[s::shards]}
        total += write_safetensors(os.path.join(folder, file), part, dtype)
        weight_map.update({n: file for n in part})
        stored.update(read_safetensors(os.path.join(folder, file)))
    index = {'metadata': {'total_size': total}, 'weight_map': dict(sorted(weight_map.items()))}
    write_json(os.path.join(folder, 'model.safetensors.index.json'), index)
    return stored


def write_json(path, value):
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(value, f, ensure_ascii=False, indent=1)
        f.write('\n')


# ---------------------------------------------------------------- random checkpoints

class Weights:
    """Random tensors sized so activations stay O(1) through two layers (logits that differ)."""

    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)
        self.tensors = {}

    def randn(self, *shape):
        return torch.randn(*shape, generator=self.g, dtype=D)

    def linear(self, name, out_f, in_f, bias=False, transpose=False):
        w = self.randn(out_f, in_f) / math.sqrt(in_f)
        self.tensors[name + '.weight'] = w.T.contiguous() if transpose else w
        if bias:
            self.tensors[name + '.bias'] = 0.2 * self.randn(out_f)

    def norm(self, name, size, bias=False):
        self.tensors[name + '.weight'] = 1 + 0.2 * self.randn(size)
        if bias:
            self.tensors[name + '.bias'] = 0.1 * self.randn(size)

    def table(self, name, rows, cols, scale=1.0):
        self.tensors[name + '.weight'] = scale * self.randn(rows, cols)


def decoder_weights(cfg, seed):
    w = Weights(seed)
    E, H = cfg['hidden_size'], cfg['num_attention_heads']
    KV = cfg.get('num_key_value_heads') or H
    hd = cfg.get('head_dim') or E // H
    qkv_bias = cfg['model_type'] == 'qwen2' or cfg.get('attention_bias', False)
    o_bias = cfg.get('attention_bias', False)
    mlp_bias = cfg.get('mlp_bias', False)
    # A tied head scores a token's own embedding highly; smaller embeddings let the layers decide.
    w.table('model.embed_tokens', cfg['vocab_size'], E, 0.3 if cfg.get('tie_word_embeddings') else 1.0)
    for i in range(cfg['num_hidden_layers']):
        p = f'model.layers.{i}.'
        w.norm(p + 'input_layernorm', E)
        w.norm(p + 'post_attention_layernorm', E)
        w.linear(p + 'self_attn.q_proj', H * hd, E, qkv_bias)
        w.linear(p + 'self_attn.k_proj', KV * hd, E, qkv_bias)
        w.linear(p + 'self_attn.v_proj', KV * hd, E, qkv_bias)
        w.linear(p + 'self_attn.o_proj', E, H * hd, o_bias)
        w.linear(p + 'mlp.gate_proj', cfg['intermediate_size'], E, mlp_bias)
        w.linear(p + 'mlp.up_proj', cfg['intermediate_size'], E, mlp_bias)
        w.linear(p + 'mlp.down_proj', E, cfg['intermediate_size'], mlp_bias)
    w.norm('model.norm', E)
    if not cfg.get('tie_word_embeddings'):
        w.linear('lm_head', cfg['vocab_size'], E)
    return w.tensors


def gpt2_weights(cfg, seed):
    w = Weights(seed)
    E, inner = cfg['n_embd'], cfg.get('n_inner') or 4 * cfg['n_embd']
    w.table('transformer.wte', cfg['vocab_size'], E, 0.3)
    w.tensors['transformer.wpe.weight'] = 0.5 * w.randn(cfg['n_positions'], E)
    for i in range(cfg['n_layer']):
        p = f'transformer.h.{i}.'
        w.norm(p + 'ln_1', E, bias=True)
        w.norm(p + 'ln_2', E, bias=True)
        w.linear(p + 'attn.c_attn', 3 * E, E, bias=True, transpose=True)  # Conv1D: [in, out]
        w.linear(p + 'attn.c_proj', E, E, bias=True, transpose=True)
        w.linear(p + 'mlp.c_fc', inner, E, bias=True, transpose=True)
        w.linear(p + 'mlp.c_proj', E, inner, bias=True, transpose=True)
    w.norm('transformer.ln_f', E, bias=True)
    return w.tensors


def bert_weights(cfg, seed):
    w = Weights(seed)
    E, inner = cfg['hidden_size'], cfg['intermediate_size']
    e = 'bert.embeddings.'
    w.table(e + 'word_embeddings', cfg['vocab_size'], E)
    w.table(e + 'position_embeddings', cfg['max_position_embeddings'], E)
    w.table(e + 'token_type_embeddings', cfg['type_vocab_size'], E)
    w.norm(e + 'LayerNorm', E, bias=True)
    for i in range(cfg['num_hidden_layers']):
        p = f'bert.encoder.layer.{i}.'
        for n in ('query', 'key', 'value'):
            w.linear(p + 'attention.self.' + n, E, E, bias=True)
        w.linear(p + 'attention.output.dense', E, E, bias=True)
        w.norm(p + 'attention.output.LayerNorm', E, bias=True)
        w.linear(p + 'intermediate.dense', inner, E, bias=True)
        w.linear(p + 'output.dense', E, inner, bias=True)
        w.norm(p + 'output.LayerNorm', E, bias=True)
    w.linear('bert.pooler.dense', E, E, bias=True)  # unused by the MLM head: a checkpoint carries it
    w.linear('cls.predictions.transform.dense', E, E, bias=True)
    w.norm('cls.predictions.transform.LayerNorm', E, bias=True)
    w.tensors['cls.predictions.bias'] = 0.2 * w.randn(cfg['vocab_size'])
    return w.tensors


# ---------------------------------------------------------------- the fixtures

def padded(n, multiple):
    return -(-n // multiple) * multiple


SP, BYTES, BYTES_EOS, WP = TK.SentencePieceBPE(), TK.ByteLevelBPE(), TK.ByteLevelBPE(append='<|endoftext|>'), TK.WordPiece()

FIXTURES = [
    # GQA, an explicit head_dim (16, not hidden/heads = 8), llama3 rope scaling (original context 48:
    # one frequency kept, one blended, the rest slowed), untied head, a vocabulary padded past the
    # tokenizer's, two shards.
    dict(name='llama-gqa-llama3-sharded', tokenizer=SP, dtype='F32', shards=2, seed=1, config=dict(
        model_type='llama', architectures=['LlamaForCausalLM'], hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=padded(SP.size, 16),
        max_position_embeddings=64, rms_norm_eps=1e-5, rope_theta=500000.0, hidden_act='silu',
        rope_scaling=dict(rope_type='llama3', factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                          original_max_position_embeddings=48),
        attention_bias=False, mlp_bias=False, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)),
    # attention_bias and mlp_bias, partial rotary (half of each head), linear scaling under the older
    # key `type`, multi-head (no num_key_value_heads), tied embeddings, stored as F16.
    dict(name='llama-bias-partial-linear-f16', tokenizer=SP, dtype='F16', shards=1, seed=2, config=dict(
        model_type='llama', architectures=['LlamaForCausalLM'], hidden_size=32, intermediate_size=48,
        num_hidden_layers=2, num_attention_heads=4, vocab_size=SP.size, max_position_embeddings=32,
        rms_norm_eps=1e-6, rope_theta=10000.0, partial_rotary_factor=0.5, hidden_act='silu',
        rope_scaling=dict(type='linear', factor=2.0), attention_bias=True, mlp_bias=True,
        tie_word_embeddings=True, bos_token_id=1, eos_token_id=2)),
    # A sliding window shorter than the prompt, one K/V head for four query heads, rope_type default.
    dict(name='mistral-window', tokenizer=SP, dtype='F32', shards=1, seed=3, config=dict(
        model_type='mistral', architectures=['MistralForCausalLM'], hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1, head_dim=8, vocab_size=SP.size,
        max_position_embeddings=64, rms_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=dict(rope_type='default'),
        sliding_window=4, hidden_act='silu', tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)),
    # Q/K/V biases (none on o_proj), tied embeddings, BF16, a byte-level tokenizer whose template
    # appends <|endoftext|>.
    dict(name='qwen2-bias-tied-bf16', tokenizer=BYTES_EOS, dtype='BF16', shards=1, seed=4, config=dict(
        model_type='qwen2', architectures=['Qwen2ForCausalLM'], hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=padded(BYTES_EOS.size, 8),
        max_position_embeddings=64, rms_norm_eps=1e-6, rope_theta=1000000.0, hidden_act='silu',
        use_sliding_window=False, sliding_window=None, max_window_layers=2, tie_word_embeddings=True,
        bos_token_id=BYTES_EOS.size - 1, eos_token_id=BYTES_EOS.size - 1)),
    dict(name='gpt2', tokenizer=BYTES, dtype='F32', shards=1, seed=5, config=dict(
        model_type='gpt2', architectures=['GPT2LMHeadModel'], n_embd=32, n_head=4, n_layer=2, n_positions=32,
        n_inner=None, vocab_size=BYTES.size, activation_function='gelu_new', layer_norm_epsilon=1e-5,
        bos_token_id=BYTES.size - 1, eos_token_id=BYTES.size - 1)),
    dict(name='bert-mlm', tokenizer=WP, dtype='F32', shards=1, seed=6, config=dict(
        model_type='bert', architectures=['BertForMaskedLM'], hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, vocab_size=WP.size, max_position_embeddings=32,
        type_vocab_size=2, hidden_act='gelu', layer_norm_eps=1e-12, position_embedding_type='absolute',
        pad_token_id=0, tie_word_embeddings=True)),
]

TOKENIZER_CASES = {
    'SentencePieceBPE': ['Hello world', 'the cat sat on the mat', 'héllo 你好 🙂', 'a  b', ''],
    'ByteLevelBPE': ['Hello world', "the cat's hat, 42 times!", '  spaced  out ', 'héllo 你好 🙂',
                     'hi<|endoftext|>there', ''],
    'WordPiece': ['Hello, World!', 'Héllo the unaffable CAT', 'running jumped 42', '你好 cafe', 'zzz qqq', ''],
}


def model_of(cfg, tensors):
    kind = cfg['model_type']
    return R.GPT2(cfg, tensors) if kind == 'gpt2' else R.Bert(cfg, tensors) if kind == 'bert' else R.Decoder(cfg, tensors)


def close(a, b, tol=1e-10):
    assert torch.allclose(a, b, rtol=tol, atol=tol), f'max difference {(a - b).abs().max().item()}'


def check_rope_complex(model, positions):
    """RoPE as complex rotation: entries (i, i + rot/2) form z = x_i + i·x_{i+rot/2}, z·e^{iθ}."""
    x = torch.randn(model.H, len(positions), model.hd, generator=torch.Generator().manual_seed(9), dtype=D)
    rot = 2 * model.inv_freq.numel()
    z = torch.complex(x[..., :rot // 2], x[..., rot // 2:rot]) * torch.polar(
        torch.ones(len(positions), rot // 2, dtype=D), positions.to(D)[:, None] * model.inv_freq)
    expected = torch.cat([z.real, z.imag, x[..., rot:]], dim=-1)
    close(R.apply_rope(x, positions, model.inv_freq), expected)


def check_gqa_expansion(cfg, t, ids, logits):
    """Grouped-query attention is multi-head attention whose K/V heads are repeated, head n reading
    K/V head n // (H / KV) (transformers' repeat_kv): the same checkpoint with k_proj/v_proj rows
    repeated that way, as a plain multi-head model, gives the same logits."""
    H, KV = cfg['num_attention_heads'], cfg.get('num_key_value_heads') or cfg['num_attention_heads']
    if H == KV:
        return
    hd = cfg.get('head_dim') or cfg['hidden_size'] // H
    expanded = dict(t)
    for name, v in t.items():
        if '.k_proj.' in name or '.v_proj.' in name:
            heads = v.reshape(KV, hd, *v.shape[1:])
            expanded[name] = heads.repeat_interleave(H // KV, 0).reshape(H * hd, *v.shape[1:])
    close(R.Decoder({**cfg, 'num_key_value_heads': H}, expanded).forward(ids)[0], logits)


def check_with_torch_layers(cfg, t, ids, types, hidden):
    """BERT (post-norm, erf GELU) and GPT-2 (pre-norm, tanh GELU, causal) are torch's own
    TransformerEncoderLayer with the right weights: an independent evaluation of the same graph."""
    kind = cfg['model_type']
    E = cfg.get('hidden_size') or cfg['n_embd']
    H = cfg.get('num_attention_heads') or cfg['n_head']
    T = len(ids)
    if kind == 'bert':
        e = 'bert.embeddings.'
        h = t[e + 'word_embeddings.weight'][ids] + t[e + 'position_embeddings.weight'][:T] \
            + t[e + 'token_type_embeddings.weight'][types]
        h = R.layer_norm(h, t[e + 'LayerNorm.weight'], t[e + 'LayerNorm.bias'], cfg['layer_norm_eps'])[None]
        mask = None
        for i in range(cfg['num_hidden_layers']):
            p = f'bert.encoder.layer.{i}.'
            layer = torch.nn.TransformerEncoderLayer(E, H, cfg['intermediate_size'], 0.0, 'gelu', cfg['layer_norm_eps'],
                                                     batch_first=True, norm_first=False).to(D).eval()
            a = p + 'attention.self.'
            with torch.no_grad():
                layer.self_attn.in_proj_weight.copy_(torch.cat([t[a + n + '.weight'] for n in ('query', 'key', 'value')]))
                layer.self_attn.in_proj_bias.copy_(torch.cat([t[a + n + '.bias'] for n in ('query', 'key', 'value')]))
                for mod, name in [(layer.self_attn.out_proj, 'attention.output.dense'), (layer.linear1, 'intermediate.dense'),
                                  (layer.linear2, 'output.dense'), (layer.norm1, 'attention.output.LayerNorm'),
                                  (layer.norm2, 'output.LayerNorm')]:
                    mod.weight.copy_(t[p + name + '.weight'])
                    mod.bias.copy_(t[p + name + '.bias'])
                h = layer(h, src_mask=mask)
        close(h[0], hidden)
    else:
        h = (t['transformer.wte.weight'][ids] + t['transformer.wpe.weight'][:T])[None]
        mask = torch.triu(torch.full((T, T), float('-inf'), dtype=D), 1)
        gelu = lambda x: torch.nn.functional.gelu(x, approximate='tanh')
        for i in range(cfg['n_layer']):
            p = f'transformer.h.{i}.'
            layer = torch.nn.TransformerEncoderLayer(E, H, 4 * E, 0.0, gelu, cfg['layer_norm_epsilon'],
                                                     batch_first=True, norm_first=True).to(D).eval()
            with torch.no_grad():
                layer.self_attn.in_proj_weight.copy_(t[p + 'attn.c_attn.weight'].T)  # Conv1D [in, out] → [out, in]
                layer.self_attn.in_proj_bias.copy_(t[p + 'attn.c_attn.bias'])
                for mod, name, tr in [(layer.self_attn.out_proj, 'attn.c_proj', True), (layer.linear1, 'mlp.c_fc', True),
                                      (layer.linear2, 'mlp.c_proj', True), (layer.norm1, 'ln_1', False),
                                      (layer.norm2, 'ln_2', False)]:
                    w = t[p + name + '.weight']
                    mod.weight.copy_(w.T if tr else w)
                    mod.bias.copy_(t[p + name + '.bias'])
                h = layer(h, src_mask=mask)
        h = R.layer_norm(h[0], t['transformer.ln_f.weight'], t['transformer.ln_f.bias'], cfg['layer_norm_epsilon'])
        close(h, hidden)


def check_chunked(model, ids, logits):
    for chunks in ([len(ids)], [3, len(ids) - 3], [1] * len(ids)):
        model.reset()
        got, start = [], 0
        for n in chunks:
            got.append(model.forward(ids[start:start + n])[0])
            start += n
        close(torch.cat(got), logits)
    model.reset()


def greedy(model, ids):
    """Greedy continuation (first maximal logit), the whole sequence evaluated again at each step;
    the margin is each step's best minus second-best logit (how safely a float32 engine agrees)."""
    out, margins = [], []
    for _ in range(NEW_TOKENS):
        if hasattr(model, 'reset'):
            model.reset()
        logits = model.forward(ids + out)[0][-1]
        top = torch.topk(logits, 2).values
        margins.append(float(top[0] - top[1]))
        out.append(int(torch.argmax(logits)))
    return out, margins


def make(fx):
    folder = os.path.join(ROOT, fx['name'])
    os.makedirs(folder, exist_ok=True)
    cfg, tok = fx['config'], fx['tokenizer']
    write_json(os.path.join(folder, 'config.json'), cfg)
    write_json(os.path.join(folder, 'tokenizer.json'), tok.json())
    builder = {'gpt2': gpt2_weights, 'bert': bert_weights}.get(cfg['model_type'], decoder_weights)
    t = write_weights(folder, builder(cfg, fx['seed']), fx['dtype'], fx['shards'])
    model = model_of(cfg, t)

    types = None
    if cfg['model_type'] == 'bert':
        a, b = tok.encode('the cat sat on the mat', False), tok.encode('hello world!', False)
        ids = [2] + a + [3] + b + [3]
        types = [0] * (len(a) + 2) + [1] * (len(b) + 1)
        ids[3] = tok.vocab['[MASK]']
        logits, hidden, attention = model.forward(ids, types)
    else:
        ids = tok.encode(PROMPT)
        logits, hidden, attention = model.forward(ids)
    if cfg['model_type'] in ('bert', 'gpt2'):
        check_with_torch_layers(cfg, t, torch.tensor(ids), torch.tensor(types) if types else None, hidden)
    else:
        check_rope_complex(model, torch.arange(len(ids)))
        check_gqa_expansion(cfg, t, ids, logits)
        check_chunked(model, ids, logits)
    continuation, margins = greedy(model, ids) if cfg['model_type'] != 'bert' else (None, None)

    # One float32 little-endian file; expected.json says where each array starts (in floats).
    arrays, sections, offset = [], {}, 0
    for name, a in [('logits', logits), ('hidden', hidden)] + [(f'attention.{i}', p) for i, p in enumerate(attention)]:
        sections[name] = {'offset': offset, 'shape': list(a.shape)}
        arrays.append(a.reshape(-1).numpy().astype('<f4'))
        offset += a.numel()
    np.concatenate(arrays).tofile(os.path.join(folder, 'reference.f32'))

    kind = type(tok).__name__
    cases = [{'text': s, 'ids': tok.encode(s), 'idsWithoutSpecialTokens': tok.encode(s, False),
              'decoded': tok.decode(tok.encode(s)), 'decodedWithSpecialTokens': tok.decode(tok.encode(s), False)}
             for s in TOKENIZER_CASES[kind]]
    write_json(os.path.join(folder, 'expected.json'), {
        'about': 'float64 reference (scripts/make-model-fixtures.py) of this checkpoint as stored; arrays in '
                 'reference.f32 (float32 little-endian) at the given offset, in floats',
        'tokenizer': kind, 'tokenizerVocabSize': tok.size,
        'prompt': None if types else PROMPT, 'ids': ids, 'tokenTypeIds': types,
        'sections': sections, 'greedy': continuation, 'greedyMargins': margins,
        'tensors': {n: list(v.shape) for n, v in sorted(t.items())},
        'ropeInverseFrequencies': model.inv_freq.tolist() if hasattr(model, 'inv_freq') else None,
        'tokenizerCases': cases,
        'modelConfig': contract_config(cfg),
    })
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    print(f"{fx['name']}: {len(ids)} tokens, {size / 1024:.0f} KiB, greedy {continuation}, "
          f"min margin {min(margins) if margins else None}")


def main():
    torch.set_grad_enabled(False)
    for fx in FIXTURES:
        make(fx)


if __name__ == '__main__':
    main()
