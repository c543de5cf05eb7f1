"""Rewrites the poem model's first file format as a Hugging Face checkpoint folder, once, renaming
only: the weights keep every fp16 value.

The first model.safetensors (commit 901bcc0) used model.py's own names (embed.weight,
layers.N.attn.q_proj.weight, layers.N.attn_norm.weight, …) and kept the config and the vocabulary
as JSON in its metadata. This writes config.json, tokenizer.json and model.safetensors with
transformers' LlamaForCausalLM names beside it (hf_layout.py), and checks that every tensor reads
back equal and that the config is model.py's.

    /usr/bin/python3 models/tang-poems/to_hf.py [OLD_FILE]      # default: model.safetensors here
"""
import json
import os
import re
import sys

import torch

import hf_layout
import safetensors_io

HERE = os.path.dirname(os.path.abspath(__file__))

# the first format's config keys → config.json's
OLD_CONFIG = {'d_model': 'hidden_size', 'n_layers': 'num_hidden_layers', 'n_heads': 'num_attention_heads',
              'n_kv_heads': 'num_key_value_heads', 'head_dim': 'head_dim', 'ffn_hidden': 'intermediate_size',
              'rope_base': 'rope_theta', 'norm_eps': 'rms_norm_eps', 'max_len': 'max_position_embeddings',
              'vocab_size': 'vocab_size'}
RENAMES = [(r'^embed\.weight$', 'model.embed_tokens.weight'),
           (r'^norm\.weight$', 'model.norm.weight'),
           (r'^layers\.(\d+)\.attn_norm\.weight$', r'model.layers.\1.input_layernorm.weight'),
           (r'^layers\.(\d+)\.mlp_norm\.weight$', r'model.layers.\1.post_attention_layernorm.weight'),
           (r'^layers\.(\d+)\.attn\.([qkvo])_proj\.weight$', r'model.layers.\1.self_attn.\2_proj.weight'),
           (r'^layers\.(\d+)\.mlp\.(gate|up|down)_proj\.weight$', r'model.layers.\1.mlp.\2_proj.weight')]


def hf_name(name):
    for pattern, replacement in RENAMES:
        if re.match(pattern, name):
            return re.sub(pattern, replacement, name)
    raise ValueError(f'{name}: not a tensor of the first poem model format')


def main():
    source = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, 'model.safetensors')
    tensors, metadata = safetensors_io.load(source)
    if 'config' not in metadata or 'vocab' not in metadata:
        sys.exit(f'{source}: no config/vocab in its metadata: not the first format (already converted?)')
    old_config, vocab = json.loads(metadata['config']), json.loads(metadata['vocab'])
    config = hf_layout.config_json(len(vocab))
    for old, new in OLD_CONFIG.items():
        if old_config[old] != config[new]:
            raise ValueError(f'metadata config {old} = {old_config[old]}, model.py has {new} = {config[new]}')
    renamed = {hf_name(n): t.to(torch.float16) for n, t in tensors.items()}   # fp16 → float64 → fp16: exact
    hf_layout.save(HERE, renamed, vocab, {k: metadata[k] for k in ('corpus', 'training')})

    model, read_vocab = hf_layout.load(HERE)
    if read_vocab != vocab:
        raise ValueError('tokenizer.json does not give back the vocabulary')
    state = model.state_dict()
    for name, t in tensors.items():
        if not torch.equal(state[hf_name(name)], t):
            raise ValueError(f'{name} changed on the way to {hf_name(name)}')
    print(f'{len(tensors)} tensors renamed, equal; config.json, tokenizer.json, model.safetensors in {HERE}')


if __name__ == '__main__':
    main()
