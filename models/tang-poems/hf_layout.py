"""The poem model as a Hugging Face checkpoint folder: config.json (family `llama`), tokenizer.json
(one token per character) and model.safetensors (fp16, transformers' tensor names), the files
wasm-attention's loadModel and transformers read. train.py writes them, to_hf.py wrote them once from
the model's first file format, make_fixture.py and heads.py read them.
"""
import json
import os

import safetensors_io
from model import CONFIG, PoemModel

POEM_START = '<s>'   # token 0: starts every poem; the model ends a poem by starting the next
LINE_BREAK = '\n'    # token 1: ends every couplet line


def config_json(vocab_size):
    return dict(CONFIG, vocab_size=vocab_size)


def tokenizer_json(vocab):
    """tokenizer.json for a character vocabulary (vocab[0] the poem start, then single characters).

    A BPE model with no merges: the text stays one word, BPE splits it into code points and looks
    each up, so every character is one token (none is split into UTF-16 halves or bytes) and a
    character outside the vocabulary yields no token (there is no unknown token; the page names
    such characters before it encodes). The post-processor puts the poem start before the text, as
    the corpus has it; the Fuse decoder joins the characters with nothing between them.
    """
    if vocab[0] != POEM_START or vocab[1] != LINE_BREAK:
        raise ValueError(f'the vocabulary must start with {POEM_START!r} and {LINE_BREAK!r}, got {vocab[:2]!r}')
    if len(set(vocab)) != len(vocab) or any(len(t) != 1 for t in vocab[1:]):
        raise ValueError('after the poem start, the vocabulary must hold distinct single characters')
    start = {'id': POEM_START, 'type_id': 0}
    return {
        'version': '1.0',
        'truncation': None,
        'padding': None,
        'added_tokens': [{'id': 0, 'content': POEM_START, 'single_word': False, 'lstrip': False,
                          'rstrip': False, 'normalized': False, 'special': True}],
        'normalizer': None,
        'pre_tokenizer': None,
        'post_processor': {
            'type': 'TemplateProcessing',
            'single': [{'SpecialToken': start}, {'Sequence': {'id': 'A', 'type_id': 0}}],
            'pair': [{'SpecialToken': start}, {'Sequence': {'id': 'A', 'type_id': 0}},
                     {'SpecialToken': dict(start, type_id=1)}, {'Sequence': {'id': 'B', 'type_id': 1}}],
            'special_tokens': {POEM_START: {'id': POEM_START, 'ids': [0], 'tokens': [POEM_START]}},
        },
        'decoder': {'type': 'Fuse'},
        'model': {
            'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': None,
            'end_of_word_suffix': None, 'fuse_unk': False, 'byte_fallback': False, 'ignore_merges': False,
            'vocab': {t: i for i, t in enumerate(vocab)},
            'merges': [],
        },
    }


def _write_json(path, value):
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(value, f, ensure_ascii=False, indent=2)
        f.write('\n')


def save(folder, tensors, vocab, metadata):
    """config.json, tokenizer.json and model.safetensors (fp16) in folder. tensors: name → torch tensor
    by transformers' names; metadata: strings for the safetensors header (format 'pt' is added)."""
    _write_json(os.path.join(folder, 'config.json'), config_json(len(vocab)))
    _write_json(os.path.join(folder, 'tokenizer.json'), tokenizer_json(vocab))
    safetensors_io.save(os.path.join(folder, 'model.safetensors'), tensors, {'format': 'pt', **metadata})


def read_vocab(folder):
    """Token strings by id, from tokenizer.json."""
    with open(os.path.join(folder, 'tokenizer.json'), encoding='utf-8') as f:
        ids = json.load(f)['model']['vocab']
    vocab = sorted(ids, key=ids.get)
    if [ids[t] for t in vocab] != list(range(len(vocab))):
        raise ValueError('tokenizer.json: the vocabulary ids must be 0 … n−1, each once')
    return vocab


def load(folder):
    """(PoemModel in float64 with the stored fp16 weights, eval mode; vocabulary)."""
    with open(os.path.join(folder, 'config.json'), encoding='utf-8') as f:
        config = json.load(f)
    vocab = read_vocab(folder)
    if config['vocab_size'] != len(vocab):
        raise ValueError(f'config.json says vocab_size {config["vocab_size"]}, tokenizer.json has {len(vocab)} tokens')
    tensors, _ = safetensors_io.load(os.path.join(folder, 'model.safetensors'))
    model = PoemModel(len(vocab), config).double()
    model.load_state_dict(tensors)
    return model.eval(), vocab
