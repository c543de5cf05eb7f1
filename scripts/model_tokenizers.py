"""The three tokenizer kinds of issue 18's families, each twice: a `tokenizer.json` in Hugging Face
tokenizers' serialization (built here, merges learned from a tiny corpus), and a plain Python encoder
and decoder of the same pipeline (normalizer → pre-tokenizer → model → post-processor template;
decoder), written from the tokenizers library's documented semantics. The Python side gives the
fixtures' expected ids, so the JavaScript tokenizer is checked against an implementation that is not
itself.

  byte_level_bpe  GPT-2 (and Qwen2-like): ByteLevel pre-tokenizer with GPT-2's split regex, BPE over
                  the 256 byte symbols, ByteLevel decoder; optionally a template appending a token.
  sentencepiece_bpe  Llama/Mistral (the Llama-2 layout): normalizer Prepend '▁' + Replace ' '→'▁',
                  no pre-tokenizer, BPE over characters with byte_fallback (<0xXX>), template '<s> $A',
                  decoder Replace '▁'→' ', ByteFallback, Fuse, Strip one leading space.
  wordpiece       BERT: BertNormalizer (clean, CJK spaced, lowercase, accents stripped),
                  BertPreTokenizer, WordPiece '##', template '[CLS] $A [SEP]' / pair, WordPiece decoder.

Python's `re` has no \\p{L}: letters are [^\\W\\d_] and numbers \\d here, which agree with Unicode's
classes on every string the fixtures encode (ASCII, Latin accents, CJK, an emoji)."""
import re
import unicodedata
from collections import Counter

CORPUS = ("the cat sat on the mat. the dog's hat is red, and the cat's is blue! "
          "hello world, hello there. they were running and jumping 42 times in 2024. "
          "a tiny model reads what it attends to; attention is all it needs.")


# ---------------------------------------------------------------- BPE (shared)

def learn_merges(words, count):
    """Classic BPE training on a list of symbol lists: merge the most frequent adjacent pair
    (ties: the first seen) `count` times."""
    words = [list(w) for w in words]
    merges = []
    for _ in range(count):
        pairs = Counter()
        for w in words:
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += 1
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: kv[1])[0]
        merges.append(best)
        words = [merge_pair(w, best) for w in words]
    return merges


def merge_pair(symbols, pair):
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def bpe(symbols, ranks):
    """Apply merges by rank: the lowest-ranked adjacent pair first, every occurrence left to right."""
    while len(symbols) > 1:
        ranked = [(ranks[p], p) for p in zip(symbols, symbols[1:]) if p in ranks]
        if not ranked:
            break
        symbols = merge_pair(symbols, min(ranked)[1])
    return symbols


def split_specials(text, specials):
    """Added special tokens are matched in the raw text first; the rest goes through the pipeline."""
    if not specials:
        return [(False, text)]
    pattern = '(' + '|'.join(re.escape(s) for s in sorted(specials, key=len, reverse=True)) + ')'
    return [(part in specials, part) for part in re.split(pattern, text) if part]


def encode_with_specials(text, specials, encode_part):
    ids = []
    for special, part in split_specials(text, specials):
        ids.extend([specials[part]] if special else encode_part(part))
    return ids


def bpe_model(vocab, merges, unk_token, affix, fallback):
    return {'type': 'BPE', 'dropout': None, 'unk_token': unk_token, 'continuing_subword_prefix': affix,
            'end_of_word_suffix': affix, 'fuse_unk': fallback, 'byte_fallback': fallback, 'ignore_merges': False,
            'vocab': vocab, 'merges': [f'{a} {b}' for a, b in merges]}


def tokenizer_json(added_tokens, normalizer, pre_tokenizer, post_processor, decoder, model):
    return {'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': added_tokens,
            'normalizer': normalizer, 'pre_tokenizer': pre_tokenizer, 'post_processor': post_processor,
            'decoder': decoder, 'model': model}


def added(token_id, content, special=True, normalized=False):
    return {'id': token_id, 'content': content, 'single_word': False, 'lstrip': False, 'rstrip': False,
            'normalized': normalized, 'special': special}


def template(single, pair, specials):
    """TemplateProcessing: `single`/`pair` as lists of '$A', '$B' or special-token names, with
    ':1' for type id 1."""
    def piece(item):
        name, _, type_id = item.partition(':')
        type_id = int(type_id or 0)
        if name in ('$A', '$B'):
            return {'Sequence': {'id': name[1], 'type_id': type_id}}
        return {'SpecialToken': {'id': name, 'type_id': type_id}}
    return {'type': 'TemplateProcessing', 'single': [piece(x) for x in single], 'pair': [piece(x) for x in pair],
            'special_tokens': {name: {'id': name, 'ids': [i], 'tokens': [name]} for name, i in specials.items()}}


def apply_template(ids, single, specials):
    out = []
    for item in single:
        out.extend(ids if item == '$A' else [specials[item]])
    return out


# ---------------------------------------------------------------- byte-level BPE (GPT-2)

def bytes_to_unicode():
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) + list(range(ord('®'), ord('ÿ') + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE_CHAR = bytes_to_unicode()
CHAR_BYTE = {c: b for b, c in BYTE_CHAR.items()}
_L, _N = r'[^\W\d_]', r'\d'
GPT2_SPLIT = re.compile(rf"'s|'t|'re|'ve|'m|'ll|'d| ?{_L}+| ?{_N}+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+")


class ByteLevelBPE:
    def __init__(self, merges_count=60, append=None):
        words = [''.join(BYTE_CHAR[b] for b in w.encode()) for w in GPT2_SPLIT.findall(CORPUS)]
        self.merges = learn_merges(words, merges_count)
        self.vocab = {BYTE_CHAR[b]: b for b in range(256)}
        for a, b in self.merges:
            self.vocab.setdefault(a + b, len(self.vocab))
        self.ranks = {m: r for r, m in enumerate(self.merges)}
        self.eos = '<|endoftext|>'
        self.specials = {self.eos: len(self.vocab)}
        self.append = append  # a template '$A <special>' when set

    @property
    def size(self):
        return len(self.vocab) + len(self.specials)

    def json(self):
        post = {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': False, 'use_regex': True}
        if self.append:
            post = template(['$A', self.append], ['$A', self.append, '$B:1', self.append + ':1'], self.specials)
        return tokenizer_json(
            [added(i, s) for s, i in self.specials.items()], None,
            {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': True}, post,
            {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': True, 'use_regex': True},
            bpe_model(self.vocab, self.merges, None, '', False))

    def encode(self, text, add_special_tokens=True):
        ids = encode_with_specials(text, self.specials, lambda part: [
            self.vocab[s] for word in GPT2_SPLIT.findall(part) for s in bpe([BYTE_CHAR[b] for b in word.encode()], self.ranks)])
        if add_special_tokens and self.append:
            ids = apply_template(ids, ['$A', self.append], self.specials)
        return ids

    def decode(self, ids, skip_special_tokens=True):
        inverse = {i: s for s, i in {**self.vocab, **self.specials}.items()}
        out, pending = [], bytearray()
        for i in ids:
            if i not in inverse:
                continue
            token = inverse[i]
            if token in self.specials:
                out.append(pending.decode('utf-8', 'replace'))
                pending = bytearray()
                if not skip_special_tokens:
                    out.append(token)
            else:
                pending.extend(CHAR_BYTE[c] for c in token)
        out.append(pending.decode('utf-8', 'replace'))
        return ''.join(out)


# ---------------------------------------------------------------- SentencePiece-style BPE (Llama)

class SentencePieceBPE:
    SPECIALS = {'<unk>': 0, '<s>': 1, '</s>': 2}

    def __init__(self, merges_count=40):
        words = ['▁' + w for w in CORPUS.split(' ')]
        self.merges = learn_merges(words, merges_count)
        self.vocab = dict(self.SPECIALS)
        for b in range(256):
            self.vocab[f'<0x{b:02X}>'] = len(self.vocab)
        for ch in sorted(set(''.join(words))):
            self.vocab.setdefault(ch, len(self.vocab))
        for a, b in self.merges:
            self.vocab.setdefault(a + b, len(self.vocab))
        self.ranks = {m: r for r, m in enumerate(self.merges)}

    @property
    def size(self):
        return len(self.vocab)

    def json(self):
        return tokenizer_json(
            [added(i, s, normalized=False) for s, i in self.SPECIALS.items()],
            {'type': 'Sequence', 'normalizers': [{'type': 'Prepend', 'prepend': '▁'},
                                                 {'type': 'Replace', 'pattern': {'String': ' '}, 'content': '▁'}]},
            None, template(['<s>', '$A'], ['<s>', '$A', '<s>:1', '$B:1'], {'<s>': 1}),
            {'type': 'Sequence', 'decoders': [{'type': 'Replace', 'pattern': {'String': '▁'}, 'content': ' '},
                                              {'type': 'ByteFallback'}, {'type': 'Fuse'},
                                              {'type': 'Strip', 'content': ' ', 'start': 1, 'stop': 0}]},
            bpe_model(self.vocab, self.merges, '<unk>', None, True))

    def encode(self, text, add_special_tokens=True):
        ids = encode_with_specials(text, self.SPECIALS, self.encode_part)
        return [1] + ids if add_special_tokens else ids

    def encode_part(self, part):
        ids = []
        # Prepend applies to each normalized piece (a non-empty one).
        for symbol in bpe(list(('▁' + part).replace(' ', '▁')), self.ranks):
            if symbol in self.vocab:
                ids.append(self.vocab[symbol])
            else:  # byte_fallback: a symbol outside the vocabulary becomes its UTF-8 bytes
                ids.extend(self.vocab[f'<0x{b:02X}>'] for b in symbol.encode())
        return ids

    def decode(self, ids, skip_special_tokens=True):
        inverse = {i: s for s, i in self.vocab.items()}
        pieces = []
        for i in ids:
            if i not in inverse or (skip_special_tokens and i in self.SPECIALS.values()):
                continue
            pieces.append(inverse[i].replace('▁', ' '))
        # ByteFallback: runs of <0xXX> become their bytes decoded as UTF-8 (invalid → one U+FFFD each).
        out, run = [], bytearray()
        for p in pieces + [None]:
            m = re.fullmatch(r'<0x([0-9A-F]{2})>', p) if p is not None else None
            if m:
                run.append(int(m.group(1), 16))
                continue
            if run:
                try:
                    out.append(run.decode('utf-8'))
                except UnicodeDecodeError:
                    out.append('\ufffd' * len(run))
                run = bytearray()
            if p is not None:
                out.append(p)
        text = ''.join(out)
        return text[1:] if text.startswith(' ') else text


# ---------------------------------------------------------------- WordPiece (BERT)

def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith('P')


def is_cjk(ch):
    cp = ord(ch)
    return any(a <= cp <= b for a, b in [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
                                        (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)])


class WordPiece:
    SPECIALS = {'[PAD]': 0, '[UNK]': 1, '[CLS]': 2, '[SEP]': 3, '[MASK]': 4}
    WORDS = ['the', 'cat', 'sat', 'on', 'mat', 'dog', 'hat', 'is', 'red', 'and', 'blue', 'hello', 'world', 'there',
             'they', 'were', 'run', 'jump', 'a', 'tiny', 'model', 'read', 'attend', 'attention', 'all', 'it', 'need',
             'un', 'play', 'what', 'to', 'in', 'times', 'cafe', '你', '好']
    PIECES = ['##s', '##ing', '##ed', '##able', '##aff', '##ly', '##er', '##2', '##4', '##a', '##b', '##e', '##t']

    def __init__(self):
        self.vocab = dict(self.SPECIALS)
        chars = sorted(set('abcdefghijklmnopqrstuvwxyz0123456789.,!?;\'-'))
        for token in chars + self.WORDS + self.PIECES:
            self.vocab.setdefault(token, len(self.vocab))

    @property
    def size(self):
        return len(self.vocab)

    def json(self):
        return tokenizer_json(
            [added(i, s) for s, i in self.SPECIALS.items()],
            {'type': 'BertNormalizer', 'clean_text': True, 'handle_chinese_chars': True, 'strip_accents': None,
             'lowercase': True},
            {'type': 'BertPreTokenizer'},
            template(['[CLS]', '$A', '[SEP]'], ['[CLS]', '$A', '[SEP]', '$B:1', '[SEP]:1'], {'[CLS]': 2, '[SEP]': 3}),
            {'type': 'WordPiece', 'prefix': '##', 'cleanup': True},
            {'type': 'WordPiece', 'unk_token': '[UNK]', 'continuing_subword_prefix': '##', 'max_input_chars_per_word': 100,
             'vocab': self.vocab})

    @staticmethod
    def normalize(text):
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch).startswith('C') and ch not in '\t\n\r'):
                continue
            if ch in '\t\n\r' or unicodedata.category(ch) == 'Zs':
                out.append(' ')
            elif is_cjk(ch):
                out.append(f' {ch} ')
            else:
                out.append(ch)
        text = unicodedata.normalize('NFD', ''.join(out).lower())  # strip_accents follows lowercase
        return ''.join(ch for ch in text if unicodedata.category(ch) != 'Mn')

    @staticmethod
    def pre_tokenize(text):
        words = []
        for chunk in text.split():
            current = ''
            for ch in chunk:
                if is_punctuation(ch):
                    if current:
                        words.append(current)
                    words.append(ch)
                    current = ''
                else:
                    current += ch
            if current:
                words.append(current)
        return words

    def word_ids(self, word):
        if len(word) > 100:
            return [self.SPECIALS['[UNK]']]
        ids, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = ('##' if start else '') + word[start:end]
                if piece in self.vocab:
                    ids.append(self.vocab[piece])
                    break
                end -= 1
            if end == start:
                return [self.SPECIALS['[UNK]']]
            start = end
        return ids

    def encode(self, text, add_special_tokens=True):
        ids = encode_with_specials(text, self.SPECIALS, lambda part: [
            i for word in self.pre_tokenize(self.normalize(part)) for i in self.word_ids(word)])
        return [2] + ids + [3] if add_special_tokens else ids

    def decode(self, ids, skip_special_tokens=True):
        inverse = {i: s for s, i in self.vocab.items()}
        tokens = [inverse[i] for i in ids if i in inverse and not (skip_special_tokens and i in self.SPECIALS.values())]
        # The WordPiece decoder works token by token: '##' glues a piece on, any other token after
        # the first gets a space, and the cleanup then runs on each token with its space.
        out = []
        for i, token in enumerate(tokens):
            if i:
                token = token[2:] if token.startswith('##') else ' ' + token
            for a, b in [(' .', '.'), (' ?', '?'), (' !', '!'), (' ,', ','), (" ' ", "'"), (" n't", "n't"),
                         (" 'm", "'m"), (' do not', " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]:
                token = token.replace(a, b)
            out.append(token)
        return ''.join(out)
