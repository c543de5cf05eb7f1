"""The contract's model.config of a fixture's config.json (the fields loadModel reports, in order),
computed in Python from the Hugging Face keys, so each fixture carries what the JavaScript must read
from it: a new fixture brings its own expectation, and no test keeps a table of fixtures."""

# config.json's key for each field, by layout: GPT-2 names its sizes its own way.
GPT2_KEYS = {'numLayers': 'n_layer', 'hiddenSize': 'n_embd', 'numHeads': 'n_head', 'maxPositions': 'n_positions'}
KEYS = {'numLayers': 'num_hidden_layers', 'hiddenSize': 'hidden_size', 'numHeads': 'num_attention_heads',
        'maxPositions': 'max_position_embeddings'}


def contract_config(cfg):
    keys = GPT2_KEYS if cfg['model_type'] == 'gpt2' else KEYS
    hidden, heads = cfg[keys['hiddenSize']], cfg[keys['numHeads']]
    return {
        'modelType': cfg['model_type'],
        'numLayers': cfg[keys['numLayers']],
        'hiddenSize': hidden,
        'numHeads': heads,
        'numKvHeads': cfg.get('num_key_value_heads') or heads,
        'headDim': cfg.get('head_dim') or hidden // heads,
        'vocabSize': cfg['vocab_size'],
        'maxPositions': cfg[keys['maxPositions']],
        'causal': cfg['model_type'] != 'bert',
    }


if __name__ == '__main__':
    # Adds (or refreshes) modelConfig in each fixture's expected.json, from its config.json.
    import json
    import os
    import sys
    for folder in sys.argv[1:]:
        with open(os.path.join(folder, 'config.json')) as f:
            cfg = json.load(f)
        path = os.path.join(folder, 'expected.json')
        with open(path) as f:
            expected = json.load(f)
        expected['modelConfig'] = contract_config(cfg)
        with open(path, 'w') as f:
            json.dump(expected, f, ensure_ascii=False, indent=1)
            f.write('\n')
