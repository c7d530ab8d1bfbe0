"""Reading a `lava crosscheck-dump` file: its F32 tensors as float64 torch tensors, and its metadata."""
import json
import struct

import torch


# safetensors: [u64 little-endian header size][JSON header][raw little-endian data]
def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {})
    data = raw[8 + n:]
    tensors = {}
    for name, h in header.items():
        if h["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} has dtype {h['dtype']}, expected F32")
        b, e = h["data_offsets"]
        values = struct.unpack(f"<{(e - b) // 4}f", data[b:e])
        tensors[name] = torch.tensor(values, dtype=torch.float64).reshape(h["shape"])
    return tensors, meta
