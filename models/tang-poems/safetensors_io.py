"""The safetensors format, written and read by hand (Debian has no package for it):
8 bytes little-endian header size, a JSON header {name: {dtype, shape, data_offsets}},
then the raw little-endian tensor bytes."""
import json
import struct
import numpy as np
import torch

_DTYPES = {'F16': np.float16, 'F32': np.float32, 'F64': np.float64}


def save(path, tensors, metadata):
    header, chunks, offset = {'__metadata__': metadata}, [], 0
    for name, t in tensors.items():
        raw = t.detach().cpu().contiguous().numpy().astype('<f2').tobytes()
        header[name] = {'dtype': 'F16', 'shape': list(t.shape), 'data_offsets': [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    head = json.dumps(header, ensure_ascii=False, separators=(',', ':')).encode('utf-8')
    head += b' ' * (-len(head) % 8)     # the format pads the header so the data starts aligned
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(head)) + head + b''.join(chunks))


def load(path, dtype=torch.float64):
    blob = open(path, 'rb').read()
    (size,) = struct.unpack('<Q', blob[:8])
    header = json.loads(blob[8:8 + size])
    metadata = header.pop('__metadata__', {})
    data = blob[8 + size:]
    tensors = {}
    for name, info in header.items():
        start, end = info['data_offsets']
        array = np.frombuffer(data[start:end], dtype=np.dtype(_DTYPES[info['dtype']]).newbyteorder('<'))
        tensors[name] = torch.from_numpy(array.astype(np.float64).reshape(info['shape'])).to(dtype)
    return tensors, metadata
