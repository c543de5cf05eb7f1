"""Trains the poem model on CPU and writes it beside this file as a Hugging Face checkpoint:
config.json, tokenizer.json and model.safetensors (fp16), see hf_layout.py.

    /usr/bin/python3 models/tang-poems/train.py [--steps N] [--out FOLDER]

Seeded and single-process: the same torch build on the same machine gives the same weights.
"""
import argparse
import json
import math
import os
import random
import time
import torch

import corpus
import hf_layout
from model import PoemModel

HERE = os.path.dirname(os.path.abspath(__file__))
SEED, BATCH, WINDOW = 1234, 16, 128
PEAK_LR, FINAL_LR, WARMUP, WEIGHT_DECAY = 3e-3, 1e-4, 100, 0.05


def learning_rate(step, steps):
    if step < WARMUP:
        return PEAK_LR * (step + 1) / WARMUP
    progress = (step - WARMUP) / max(1, steps - WARMUP)
    return FINAL_LR + 0.5 * (PEAK_LR - FINAL_LR) * (1 + math.cos(math.pi * progress))


def batches(stream, poem_starts, rng):
    """Windows of WINDOW+1 tokens; half start at a poem's first token, where generation starts
    in the page, half anywhere, so positions far from a poem's start are seen too."""
    while True:
        rows = []
        for i in range(BATCH):
            if i % 2 == 0:
                start = rng.choice(poem_starts)
            else:
                start = rng.randrange(len(stream) - WINDOW - 1)
            start = min(start, len(stream) - WINDOW - 1)
            rows.append(stream[start:start + WINDOW + 1])
        block = torch.tensor(rows)
        yield block[:, :-1], block[:, 1:]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=1000)
    parser.add_argument('--out', default=HERE, help='the folder to write the three files to')
    args = parser.parse_args()

    random.seed(SEED)
    torch.manual_seed(SEED)
    torch.set_num_threads(1)   # one thread: reproducible sums, and faster than two on this model
    poems = corpus.poems()
    vocab = corpus.vocabulary(poems)
    index = {tok: i for i, tok in enumerate(vocab)}
    stream, poem_starts = [], []
    for poem in poems:
        poem_starts.append(len(stream))
        stream.extend(corpus.encode_poem(poem, index))

    model = PoemModel(len(vocab))
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{'params': decay, 'weight_decay': WEIGHT_DECAY},
                             {'params': no_decay, 'weight_decay': 0.0}], lr=PEAK_LR, betas=(0.9, 0.95))
    data = batches(stream, poem_starts, random.Random(SEED))
    began, smoothed = time.time(), None
    for step in range(args.steps):
        for group in opt.param_groups:
            group['lr'] = learning_rate(step, args.steps)
        x, y = next(data)
        loss = torch.nn.functional.cross_entropy(model(x).reshape(-1, len(vocab)), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        smoothed = loss.item() if smoothed is None else 0.98 * smoothed + 0.02 * loss.item()
        if step % 100 == 0 or step == args.steps - 1:
            print(f'step {step:5d}  loss {smoothed:.3f}  {time.time() - began:6.0f} s', flush=True)

    with torch.no_grad():
        model.eval()
        stream_t = torch.tensor(stream)
        n = (len(stream) - 1) // WINDOW * WINDOW
        x, y = stream_t[:n].view(-1, WINDOW), stream_t[1:n + 1].view(-1, WINDOW)
        full_loss = torch.nn.functional.cross_entropy(model(x).reshape(-1, len(vocab)), y.reshape(-1)).item()
    print(f'loss over the whole corpus: {full_loss:.4f} nats/char ({time.time() - began:.0f} s)')

    metadata = {
        'corpus': 'Three Hundred Tang Poems (public domain), text from Debian fortunes-zh 2.98, file tang300',
        'training': json.dumps({'seed': SEED, 'steps': args.steps, 'batch': BATCH, 'window': WINDOW,
                                'corpus_loss_nats_per_char': round(full_loss, 4)}),
    }
    os.makedirs(args.out, exist_ok=True)
    hf_layout.save(args.out, model.state_dict(), vocab, metadata)
    weights = os.path.join(args.out, 'model.safetensors')
    print(f'wrote config.json, tokenizer.json and {weights}: {os.path.getsize(weights)} bytes')


if __name__ == '__main__':
    main()
