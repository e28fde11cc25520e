"""AWQ checkpoint folders (vLLM's weights) checked before they are imported, verified or loaded:
config.json says AWQ, the tokenizer is there, every shard the index lists is present and each
safetensors file's header is readable and its tensors lie inside the file."""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

from app.core.failures import FailureKind

INDEX = "model.safetensors.index.json"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json")   # any one of them
MAX_HEADER = 100 << 20          # safetensors' own limit on the JSON header
_DTYPE_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2,
                "I16": 2, "U16": 2, "I8": 1, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}


class CheckpointError(Exception):
    """The folder is not an AWQ checkpoint vLLM can load; one line says why."""
    kind = FailureKind.MODEL_BROKEN


@dataclass(frozen=True)
class AwqInfo:
    folder: Path
    architecture: str
    context_length: int
    layers: int
    kv_heads: int
    head_dim: int
    bits: int
    params: int                 # parameters, the 4-bit packed ones counted one by one
    size_bytes: int
    shards: tuple[str, ...]

    def summary(self) -> str:
        return (f"AWQ {self.bits}-bit, {self.architecture}, {self.params / 1e9:.2f}B parameters, "
                f"{len(self.shards)} shard(s), context {self.context_length}")


def safetensors_elements(path: Path) -> tuple[int, int]:
    """(elements, packed 32-bit elements) of a safetensors file, after checking its header and
    that every tensor's bytes lie inside the file. CheckpointError names the first problem."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise CheckpointError(f"{path.name}: {size} bytes, too short for a safetensors header")
        n = struct.unpack("<Q", head)[0]
        if n > MAX_HEADER or 8 + n > size:
            raise CheckpointError(f"{path.name}: header claims {n:,} bytes of a {size:,}-byte file: "
                                  "truncated or not safetensors")
        try:
            header = json.loads(fh.read(n))
        except (ValueError, UnicodeDecodeError):
            raise CheckpointError(f"{path.name}: header is not readable JSON: damaged") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{path.name}: header is not a table of tensors: damaged")
    data = size - 8 - n
    elements = packed = 0
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        try:
            start, end = entry["data_offsets"]
            count = 1
            for d in entry["shape"]:
                count *= int(d)
            width = _DTYPE_BYTES[entry["dtype"]]
        except (KeyError, TypeError, ValueError):
            raise CheckpointError(f"{path.name}: tensor {name} has a malformed entry: damaged") from None
        if not 0 <= start <= end <= data or end - start != count * width:
            raise CheckpointError(f"{path.name}: tensor {name} lies outside the file "
                                  f"(bytes {start:,}-{end:,} of {data:,}): truncated or damaged")
        elements += count
        packed += count if entry["dtype"] in ("I32", "U32") else 0
    return elements, packed


def _json(path: Path, what: str) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"no {path.name} ({what})") from None
    except (ValueError, UnicodeDecodeError):
        raise CheckpointError(f"{path.name} is not valid JSON") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path.name} is not a JSON object")
    return data


def shards(folder: Path) -> list[str]:
    """The safetensors files of the checkpoint: those the index lists, else the single file."""
    index = folder / INDEX
    if index.is_file():
        weight_map = _json(index, "shard index").get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map:
            raise CheckpointError(f"{INDEX} has no weight_map")
        return sorted(set(map(str, weight_map.values())))
    return ["model.safetensors"]


def read(folder: Path | str) -> AwqInfo:
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"{folder.name}: not a folder (AWQ models are imported as their folder)")
    try:
        return _read(folder)
    except CheckpointError as exc:
        raise CheckpointError(f"{folder.name}: {exc}") from None


def _read(folder: Path) -> AwqInfo:
    config = _json(folder / "config.json", "the model's configuration")
    quant = config.get("quantization_config") or {}
    method = str(quant.get("quant_method", "")).lower() if isinstance(quant, dict) else ""
    if method != "awq":
        raise CheckpointError(f"config.json: quantization_config says {method or 'nothing'!r}, not 'awq'")
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise CheckpointError(f"no tokenizer ({' or '.join(TOKENIZER_FILES)})")
    names = shards(folder)
    missing = [s for s in names if not (folder / s).is_file()]
    if missing:
        raise CheckpointError(f"shard {missing[0]} is missing" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    elements = packed = 0
    for name in names:
        e, p = safetensors_elements(folder / name)
        elements, packed = elements + e, packed + p
    bits = int(quant.get("bits", 4) or 4)
    heads = int(config.get("num_attention_heads") or 0)
    hidden = int(config.get("hidden_size") or 0)
    try:
        layers = int(config["num_hidden_layers"])
        context = int(config["max_position_embeddings"])
    except (KeyError, TypeError, ValueError):
        raise CheckpointError("config.json lacks num_hidden_layers or max_position_embeddings") from None
    head_dim = int(config.get("head_dim") or (hidden // heads if heads else 0))
    archs = config.get("architectures") or [config.get("model_type", "unknown")]
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return AwqInfo(folder, str(archs[0]), context, layers, int(config.get("num_key_value_heads") or heads),
                   head_dim, bits, elements + packed * (32 // bits - 1), size, tuple(names))
