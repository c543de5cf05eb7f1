"""Writes tests/fixtures/models/tang-poems.json (its own folder: scripts/make-fixtures.py owns the
top level): what PyTorch computes, in float64, from the shipped
fp16 weights — the logits of every position of a prompt and the greedy continuation — so the
JavaScript/WebAssembly forward can be checked without torch at test time; and texts with the ids
the character vocabulary gives them, one per character after the poem start, which tokenizer.json
must reproduce.

    /usr/bin/python3 models/tang-poems/make_fixture.py
"""
import json
import os
import torch

import hf_layout

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', '..', 'tests', 'fixtures', 'models', 'tang-poems.json')
PROMPTS = ['床前明月光，', '春眠不觉晓，', '白日依山尽，']
GREEDY_TOKENS = 48
# Whole lines with their breaks, every punctuation mark of the vocabulary, and every character.
TEXTS = ['床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n', '，。？；！：《》“”、\n']


def load_model():
    return hf_layout.load(HERE)


def texts(vocab):
    index = {tok: i for i, tok in enumerate(vocab)}
    every = ''.join(vocab[1:])
    return [{'text': t, 'ids': [0] + [index[ch] for ch in t]} for t in TEXTS + [every]]


def main():
    torch.manual_seed(0)
    model, vocab = load_model()
    index = {tok: i for i, tok in enumerate(vocab)}
    cases = []
    with torch.no_grad():
        for prompt in PROMPTS:
            ids = [0] + [index[ch] for ch in prompt]
            logits = model(torch.tensor([ids]))[0]
            if cases:   # every position of the first prompt; only the last of the others
                logits = logits[-1:]
            generated, margins = list(ids), []
            for _ in range(GREEDY_TOKENS):
                last = model(torch.tensor([generated]))[0, -1]
                top2 = last.topk(2).values
                margins.append(float(top2[0] - top2[1]))
                generated.append(int(last.argmax()))
            cases.append({
                'prompt': prompt,
                'ids': ids,
                'logitsFrom': len(ids) - len(logits),   # the position of the first row of logits
                'logits': [[round(float(v), 7) for v in row] for row in logits],
                'greedy': generated[len(ids):],
                'greedyText': ''.join(vocab[t] if t > 1 else ('\n' if t == 1 else '<s>') for t in generated[len(ids):]),
                # a greedy step whose two best logits are closer than the tolerance could flip
                'smallestMargin': min(margins),
            })
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, 'w', encoding='utf-8') as f:
        json.dump({'model': 'models/tang-poems/', 'cases': cases, 'texts': texts(vocab)}, f, ensure_ascii=False)
    for c in cases:
        print(c['prompt'], repr(c['greedyText']), 'smallest margin', round(c['smallestMargin'], 4))


if __name__ == '__main__':
    main()
