"""The anthology's verse segments as hashes → recited.json, for the page's "recited from the anthology".

A segment is a run of characters between punctuation marks or line ends (a half-line of verse:
床前明月光). The page marks a generated segment whose hash is in this set. Only hashes are
written: the corpus stays out of the repository, as corpus.py explains, and the file stays small
(4 bytes a segment). The hash is FNV-1a over UTF-16 code units, web/random.js's hashString.

    /usr/bin/python3 models/tang-poems/recited.py
"""
import base64
import json
import os
import struct

from corpus import poems

MIN_LENGTH = 4  # shorter runs (two-character names, 万里) are common phrases, not recitation
HERE = os.path.dirname(os.path.abspath(__file__))


def fnv1a(text):
    h = 0x811C9DC5
    units = text.encode('utf-16-le')
    for k in range(0, len(units), 2):
        h ^= units[k] | (units[k + 1] << 8)
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def segments(line):
    run = ''
    for ch in line:
        if ch.isalpha():  # CJK ideographs are letters; the full-width marks are not
            run += ch
        else:
            yield run
            run = ''
    yield run


def main():
    hashes = set()
    for poem in poems():
        for line in poem:
            hashes.update(fnv1a(s) for s in segments(line) if len(s) >= MIN_LENGTH)
    packed = b''.join(struct.pack('<I', h) for h in sorted(hashes))
    out = {
        'about': 'Hashes of the verse segments of the Three Hundred Tang Poems (models/tang-poems/recited.py)',
        'hash': 'fnv1a32-utf16',
        'minLength': MIN_LENGTH,
        'count': len(hashes),
        'hashes': base64.b64encode(packed).decode('ascii'),
    }
    with open(os.path.join(HERE, 'recited.json'), 'w', encoding='utf-8') as f:
        json.dump(out, f, indent=1)
        f.write('\n')
    print(f'{len(hashes)} segments, {len(packed)} bytes')


if __name__ == '__main__':
    main()
