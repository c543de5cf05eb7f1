"""The corpus: the Three Hundred Tang Poems as Debian's fortunes-zh package ships them.

`apt-get install fortunes-zh` puts the file at TANG300. Each poem there is a title line
(《…》), an author line (作者：…) and its text, one couplet per line, poems separated by '%'.
We keep only the text: the model learns verse, not bibliography.
"""
import re

TANG300 = '/usr/share/games/fortunes/tang300'
POEM_START = '<s>'   # token 0: marks the start of every poem; generation stops when it recurs
LINE_BREAK = '\n'    # token 1: ends every couplet line

_ANSI = re.compile(r'\x1b\[[0-9;]*m')


def poems(path=TANG300):
    """Each poem as a list of its text lines, in the file's order."""
    text = _ANSI.sub('', open(path, encoding='utf-8').read())
    out = []
    for block in text.split('\n%\n'):
        lines = [l.strip() for l in block.strip().split('\n')]
        body = [l for l in lines if l and not l.startswith('《') and not l.startswith('作者：')]
        if body:
            out.append(body)
    return out


def vocabulary(all_poems):
    """Token strings by id: the two markers, then characters by falling frequency (ties by code point)."""
    counts = {}
    for poem in all_poems:
        for line in poem:
            for ch in line:
                counts[ch] = counts.get(ch, 0) + 1
    chars = sorted(counts, key=lambda c: (-counts[c], c))
    return [POEM_START, LINE_BREAK] + chars


def encode_poem(poem, index):
    """Token ids of one poem: the start marker, then every line followed by a line break."""
    ids = [0]
    for line in poem:
        ids.extend(index[ch] for ch in line)
        ids.append(1)
    return ids
