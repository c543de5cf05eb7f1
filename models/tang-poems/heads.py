"""Names what each attention head of the trained model learned, and writes heads.json.

Every poem of the corpus is fed alone, from its <s>. For each head we measure where its
attention goes: the average weight a token gives to the token d places back (d = 1 … 12),
and to the most recent punctuation mark or line break. A head is named after the narrowest
band of look-back distances (at most three wide) or the punctuation target that takes the
largest share, when that share is large enough to call it a pattern.

    /usr/bin/python3 models/tang-poems/heads.py
"""
import json
import os
import torch

import corpus
from make_fixture import load_model

HERE = os.path.dirname(os.path.abspath(__file__))
PROMPT = '床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n'
MARKS = set('，。？！；：、\n')
MAX_BACK, WIDEST_BAND = 12, 3
NAMED_ABOVE = 0.35    # below this share a head is a mixture, not a pattern
MARK_ABOVE = 0.3      # a head with this share on the latest mark also gets that pattern named


def last_mark_keys(text):
    """For each token, the index of the latest punctuation mark or line break before it."""
    keys, last = [], None
    for i, ch in enumerate(text):
        keys.append(last)
        if ch in MARKS:
            last = i
    return keys


def measure(model, vocab):
    """Per layer and head: average weight at each look-back distance, and on the last mark."""
    index = {tok: i for i, tok in enumerate(vocab)}
    cfg = model.config
    back = torch.zeros(cfg['num_hidden_layers'], cfg['num_attention_heads'], MAX_BACK + 1)
    mark = torch.zeros(cfg['num_hidden_layers'], cfg['num_attention_heads'])
    queries = marked = 0
    with torch.no_grad():
        for poem in corpus.poems():
            ids = corpus.encode_poem(poem, index)[:cfg['max_position_embeddings']]
            model(torch.tensor([ids]), keep_weights=True)
            text = [vocab[t] for t in ids]
            mark_of = last_mark_keys(text)
            rows = [(i, j) for i, j in enumerate(mark_of) if j is not None]
            queries += len(ids)
            marked += len(rows)
            for layer, w in enumerate(model.attention_weights()):
                for d in range(1, MAX_BACK + 1):
                    back[layer, :, d] += torch.diagonal(w[0], offset=-d, dim1=1, dim2=2).sum(-1)
                if rows:
                    qi, kj = torch.tensor([r[0] for r in rows]), torch.tensor([r[1] for r in rows])
                    mark[layer] += w[0][:, qi, kj].sum(-1)
    return back / queries, mark / marked


def best_pattern(back, mark):
    """The band of look-back distances around the peak whose shares are at least half the peak's
    (at most WIDEST_BAND wide), or the latest mark when that takes more."""
    peak = int(back[1:].argmax()) + 1
    first = last = peak
    while last - first + 1 < WIDEST_BAND:
        left = back[first - 1].item() if first > 1 else -1.0
        right = back[last + 1].item() if last < MAX_BACK else -1.0
        if max(left, right) < back[peak].item() / 2:
            break
        if left >= right:
            first -= 1
        else:
            last += 1
    share = back[first:last + 1].sum().item()
    if mark >= share:
        return mark, 'the latest punctuation mark or line break'
    distances = range(first, last + 1)
    pattern = f'the token {first} back' if first == last else f'the tokens {first}–{last} back'
    if last <= 3:
        pattern += ': the characters just before'
    elif 6 in distances:
        pattern += ': in five-character verse, the same place one half-line earlier'
    elif 8 in distances:
        pattern += ': in seven-character verse, the same place one half-line earlier'
    return share, pattern


def main():
    model, vocab = load_model()
    back, mark = measure(model, vocab)
    heads, marks = [], []
    for layer in range(back.shape[0]):
        for head in range(back.shape[1]):
            share, pattern = best_pattern(back[layer, head], mark[layer, head].item())
            profile = ' '.join(f'{v:.2f}' for v in back[layer, head, 1:].tolist())
            print(f'layer {layer} head {head}: {pattern} {share:.2f}  (1…{MAX_BACK} back: {profile}; '
                  f'last mark {mark[layer, head]:.2f})')
            if share >= NAMED_ABOVE:
                heads.append({'layer': layer, 'head': head, 'pattern': pattern, 'score': round(share, 3)})
            on_mark = mark[layer, head].item()
            if on_mark >= MARK_ABOVE and 'punctuation' not in pattern:
                marks.append({'layer': layer, 'head': head, 'pattern': 'the latest punctuation mark or line break',
                              'score': round(on_mark, 3)})
    with open(os.path.join(HERE, 'heads.json'), 'w', encoding='utf-8') as f:
        # `marks`: heads that also put a large share on the latest mark, beside their look-back band
        json.dump({'prompt': PROMPT, 'heads': heads, 'marks': marks}, f, ensure_ascii=False, indent=1)
        f.write('\n')
    print(f'{len(heads)} heads named')


if __name__ == '__main__':
    main()
