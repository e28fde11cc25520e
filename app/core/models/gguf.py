"""GGUF files checked before they are imported, verified or loaded: the header, every metadata
entry, and the tensor table (each tensor's type, offset and size inside the file).

A small reader over mmap rather than the `gguf` package's GGUFReader: that one turns every
array (49,152 tokenizer strings for SmolLM2) into numpy objects, 6 s on a busy 2-core machine,
and fails on a truncated file with numpy's "cannot reshape array" instead of a reason. The
package still supplies the tables that change as llama.cpp grows (block and type sizes of each
quantisation, file-type names), so a new quant type needs a version bump, not code here.
"""
from __future__ import annotations

import mmap
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType, LlamaFileType

from app.core.failures import FailureKind

MAGIC = b"GGUF"
VERSIONS = (2, 3)               # v1 used 32-bit counts; llama.cpp reads 2 and 3
MAX_DIMS = 4                    # GGML_MAX_DIMS
MAX_STRING = 64 << 20           # a chat template is KBs; 64 MiB is damage, not text
DEFAULT_ALIGNMENT = 32

# value type → (struct format, bytes); 8 = string, 9 = array
_SCALARS = {0: ("<B", 1), 1: ("<b", 1), 2: ("<H", 2), 3: ("<h", 2), 4: ("<I", 4), 5: ("<i", 4),
            6: ("<f", 4), 7: ("<?", 1), 10: ("<Q", 8), 11: ("<q", 8), 12: ("<d", 8)}
_STRING, _ARRAY = 8, 9


class GgufError(Exception):
    """The file is not a GGUF model llama.cpp can load; the message says why, in one line."""
    kind = FailureKind.MODEL_BROKEN


@dataclass(frozen=True)
class GgufArray:
    """An array value, summarised: its element type and length (the elements are not kept)."""
    type: int
    count: int


@dataclass(frozen=True)
class Tensor:
    name: str
    type_name: str
    elements: int
    offset: int                 # from the start of the data section
    n_bytes: int


@dataclass(frozen=True)
class GgufInfo:
    path: Path
    size_bytes: int
    version: int
    metadata: dict = field(repr=False)
    tensors: tuple[Tensor, ...] = field(repr=False)
    data_start: int = 0

    def get(self, key: str, default=None):
        return self.metadata.get(key, default)

    @property
    def architecture(self) -> str:
        return self.metadata["general.architecture"]

    def arch_value(self, name: str, default=None):
        return self.metadata.get(f"{self.architecture}.{name}", default)

    @property
    def context_length(self) -> int:
        return int(self.arch_value("context_length", 0))

    @property
    def block_count(self) -> int:
        return int(self.arch_value("block_count", 0))

    @property
    def head_count(self) -> int:
        return int(self.arch_value("attention.head_count", 0) or 0)

    @property
    def head_count_kv(self) -> int:
        return int(self.arch_value("attention.head_count_kv", self.head_count) or 0)

    @property
    def head_dim(self) -> int:
        explicit = self.arch_value("attention.key_length")
        if explicit:
            return int(explicit)
        width = int(self.arch_value("embedding_length", 0) or 0)
        return width // self.head_count if self.head_count else 0

    @property
    def params(self) -> int:
        return sum(t.elements for t in self.tensors)

    @property
    def quantisation(self) -> str:
        """The file type llama.cpp names (Q4_K_M, Q4_1 …), else the commonest tensor type."""
        file_type = self.metadata.get("general.file_type")
        try:
            return LlamaFileType(int(file_type)).name.removeprefix("MOSTLY_")
        except (TypeError, ValueError):
            pass
        counts = Counter(t.type_name for t in self.tensors if t.type_name not in ("F32",))
        return counts.most_common(1)[0][0] if counts else "F32"

    @property
    def tokenizer(self) -> str:
        return str(self.metadata.get("tokenizer.ggml.model", ""))

    @property
    def vocab_size(self) -> int:
        tokens = self.metadata.get("tokenizer.ggml.tokens")
        return tokens.count if isinstance(tokens, GgufArray) else 0

    def summary(self) -> str:
        return (f"GGUF v{self.version}, {self.architecture}, {self.quantisation}, "
                f"{self.params / 1e9:.2f}B parameters, {len(self.tensors)} tensors, "
                f"context {self.context_length}, tokenizer {self.tokenizer} ({self.vocab_size} tokens)")


class _Cursor:
    """Reads little-endian values from the mapped file; running past its end is a GgufError."""

    def __init__(self, buf, size: int):
        self.buf, self.size, self.pos = buf, size, 0

    def take(self, n: int, what: str) -> int:
        start = self.pos
        if n < 0 or start + n > self.size:
            raise GgufError(f"{what} at byte {start:,} runs past the end of the file "
                            f"({self.size:,} bytes): truncated or damaged")
        self.pos = start + n
        return start

    def scalar(self, fmt: str, n: int, what: str):
        return struct.unpack_from(fmt, self.buf, self.take(n, what))[0]

    def u32(self, what: str) -> int:
        return self.scalar("<I", 4, what)

    def u64(self, what: str) -> int:
        return self.scalar("<Q", 8, what)

    def string(self, what: str) -> str:
        n = self.u64(what)
        if n > MAX_STRING:
            raise GgufError(f"{what} claims {n:,} bytes at byte {self.pos - 8:,}: damaged")
        start = self.take(n, what)
        try:
            return bytes(self.buf[start:start + n]).decode("utf-8")
        except UnicodeDecodeError:
            raise GgufError(f"{what} at byte {start:,} is not UTF-8 text: damaged") from None

    def skip_string(self, what: str) -> None:
        n = self.u64(what)
        if n > MAX_STRING:
            raise GgufError(f"{what} claims {n:,} bytes: damaged")
        self.take(n, what)


def _value(cur: _Cursor, vtype: int, key: str):
    if vtype in _SCALARS:
        fmt, n = _SCALARS[vtype]
        return cur.scalar(fmt, n, f"value of {key}")
    if vtype == _STRING:
        return cur.string(f"value of {key}")
    if vtype == _ARRAY:
        etype, count = cur.u32(f"array type of {key}"), cur.u64(f"array length of {key}")
        if etype in _SCALARS:
            cur.take(count * _SCALARS[etype][1], f"array {key} ({count:,} values)")
        elif etype == _STRING:
            if count > cur.size:      # each string takes at least its 8-byte length
                raise GgufError(f"array {key} claims {count:,} strings, more than the file holds: damaged")
            for _ in range(count):
                cur.skip_string(f"a string of {key}")
        else:
            raise GgufError(f"array {key} has unknown element type {etype}: damaged or too new")
        return GgufArray(etype, count)
    raise GgufError(f"metadata {key} has unknown value type {vtype}: damaged or too new")


def _type_name(type_id: int) -> str | None:
    try:
        kind = GGMLQuantizationType(type_id)
    except ValueError:
        return None
    return kind.name if kind in GGML_QUANT_SIZES else None


def read(path: Path | str) -> GgufInfo:
    """Parse and check the whole header and tensor table (the weights are not read). GgufError
    names the first problem, prefixed by the file's name."""
    path = Path(path)
    try:
        return _read(path)
    except GgufError as exc:
        raise GgufError(f"{path.name}: {exc}") from None
    except OSError as exc:
        raise GgufError(f"{path.name}: cannot read ({exc.strerror or exc})") from None


def _read(path: Path) -> GgufInfo:
    size = path.stat().st_size
    if size == 0:
        raise GgufError("empty file (0 bytes)")
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        if size < 24:
            raise GgufError(f"only {size} bytes: too short for a GGUF header")
        if buf[:4] != MAGIC:
            raise GgufError(f"not a GGUF file (starts with {bytes(buf[:4])!r}, not b'GGUF')")
        cur = _Cursor(buf, size)
        cur.take(4, "magic")
        version = cur.u32("version")
        if version not in VERSIONS:
            swapped = struct.unpack("<I", struct.pack(">I", version))[0]
            if swapped in VERSIONS:
                raise GgufError("a big-endian GGUF file: this machine's llama.cpp reads little-endian ones")
            raise GgufError(f"GGUF version {version} is not supported (llama.cpp reads {VERSIONS[0]} and {VERSIONS[1]})")
        n_tensors, n_kv = cur.u64("tensor count"), cur.u64("metadata count")
        # every entry takes at least ~24 bytes: a larger count is a damaged header, not a big model
        if n_tensors * 24 > size or n_kv * 12 > size:
            raise GgufError(f"header claims {n_tensors:,} tensors and {n_kv:,} metadata entries, "
                            f"more than {size:,} bytes can hold: truncated or damaged")
        metadata: dict = {}
        for _ in range(n_kv):
            key = cur.string("metadata key")
            metadata[key] = _value(cur, cur.u32(f"value type of {key}"), key)
        infos = []
        for i in range(n_tensors):
            name = cur.string(f"name of tensor {i}")
            n_dims = cur.u32(f"dimensions of tensor {name}")
            if not 1 <= n_dims <= MAX_DIMS:
                raise GgufError(f"tensor {name} has {n_dims} dimensions (1 to {MAX_DIMS}): damaged")
            dims = [cur.u64(f"shape of tensor {name}") for _ in range(n_dims)]
            type_id = cur.u32(f"type of tensor {name}")
            offset = cur.u64(f"offset of tensor {name}")
            infos.append((name, dims, type_id, offset))
        data_start = cur.pos
    alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    if not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
        raise GgufError(f"general.alignment {alignment!r} is not a power of two: damaged")
    data_start += -data_start % alignment
    tensors = _check_tensors(infos, data_start, size, alignment)
    _check_model(metadata)
    return GgufInfo(path, size, version, metadata, tensors, data_start)


def _check_tensors(infos, data_start: int, size: int, alignment: int) -> tuple[Tensor, ...]:
    tensors = []
    for name, dims, type_id, offset in infos:
        type_name = _type_name(type_id)
        if type_name is None:
            raise GgufError(f"tensor {name} has unknown type {type_id}: damaged, or newer than "
                            f"this llama.cpp")
        block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(type_id)]
        elements = 1
        for d in dims:
            elements *= d
        if elements == 0 or dims[0] % block:
            raise GgufError(f"tensor {name} has shape {dims}, not whole {type_name} blocks of {block}: damaged")
        n_bytes = elements // block * type_size
        if offset % alignment:
            raise GgufError(f"tensor {name} starts at offset {offset:,}, not a multiple of {alignment}: damaged")
        end = data_start + offset + n_bytes
        if end > size:
            raise GgufError(f"tensor {name} ends at byte {end:,}, past the end of the file "
                            f"({size:,} bytes): truncated or damaged")
        tensors.append(Tensor(name, type_name, elements, offset, n_bytes))
    ordered = sorted(tensors, key=lambda t: t.offset)
    for before, after in zip(ordered, ordered[1:]):
        if after.offset < before.offset + before.n_bytes:
            raise GgufError(f"tensors {before.name} and {after.name} overlap: damaged")
    return tuple(tensors)


def _check_model(metadata: dict) -> None:
    """What llama.cpp needs to run it as a chat model: an architecture with its geometry, and a tokenizer."""
    arch = metadata.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise GgufError("no general.architecture: not a model llama.cpp can load")
    for name in ("block_count", "context_length"):
        if not isinstance(metadata.get(f"{arch}.{name}"), int):
            raise GgufError(f"no {arch}.{name} in the metadata: incomplete model")
    if not isinstance(metadata.get("tokenizer.ggml.model"), str):
        raise GgufError("no tokenizer (tokenizer.ggml.model): llama.cpp cannot read text with it")
    tokens = metadata.get("tokenizer.ggml.tokens")
    if not isinstance(tokens, GgufArray) or tokens.type != _STRING or tokens.count == 0:
        raise GgufError("no tokenizer vocabulary (tokenizer.ggml.tokens): llama.cpp cannot read text with it")
