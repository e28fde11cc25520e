"""`pagewise models import`: a local GGUF file or AWQ folder, checked, copied into
models/imported/<id>/ with the catalogue entry that makes it listed and usable (--model ID)."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path

from app.core import paths
from app.core.models import catalogue, checkpoint, gguf
from app.core.models.catalogue import IMPORTED, MANIFEST, ModelNotAvailable, ModelSpec

_ID = re.compile(r"[^a-z0-9._-]+")


def model_id_for(src: Path) -> str:
    stem = src.name[:-5] if src.name.lower().endswith(".gguf") else src.name
    return _ID.sub("-", stem.lower()).strip("-.") or "imported-model"


def clean_id(model_id: str) -> str:
    """The folder-safe form of a chosen --id; refused when nothing of it is left ("模型", "???",
    ".."), since an empty id would name the imported/ folder itself (and the stale-folder cleanup
    would delete every imported model)."""
    mid = _ID.sub("-", model_id.lower()).strip("-.")
    if not mid:
        raise ModelNotAvailable(f"--id {model_id!r}: use letters a-z, digits, '.', '_' or '-' "
                                f"(nothing of it is left for a folder name)")
    return mid


def inspect(src: Path) -> dict:
    """The catalogue entry `src` would get (without id): its format and geometry, from the GGUF
    metadata or config.json, after the full check. Raises the format's one-line error."""
    src = Path(src)
    if not src.exists():
        raise ModelNotAvailable(f"{src}: no such file or folder")
    if not (src.is_dir() or src.is_file()):     # a FIFO, socket or device: reading it would hang
        raise ModelNotAvailable(f"{src}: not a regular file or folder (a pipe, socket or device)")
    if src.is_dir():
        info = checkpoint.read(src)
        return {"name": f"{src.name} (AWQ, imported)", "format": "awq", "size_gb": round(info.size_bytes / 1e9, 3),
                "params_b": round(info.params / 1e9, 3), "native_context": info.context_length,
                "layers": info.layers, "kv_heads": info.kv_heads, "head_dim": info.head_dim,
                "licence": "see the model's own licence", "architecture": info.architecture,
                "quantisation": f"AWQ {info.bits}-bit", "summary": info.summary()}
    info = gguf.read(src)
    geometry = {"native_context": info.context_length, "layers": info.block_count,
                "kv_heads": info.head_count_kv, "head_dim": info.head_dim}
    lacking = [k for k, v in geometry.items() if not isinstance(v, int) or v <= 0]
    if lacking:
        raise gguf.GgufError(f"{src.name}: the metadata lacks {', '.join(lacking)} "
                             f"({info.architecture}): cannot plan memory for it")
    return {"name": f"{info.get('general.name') or src.stem} ({info.quantisation}, imported: {src.name})",
            "format": "gguf",
            "size_gb": round(info.size_bytes / 1e9, 3), "params_b": round(info.params / 1e9, 3),
            **geometry, "licence": str(info.get("general.license") or "unknown"),
            "architecture": info.architecture, "quantisation": info.quantisation,
            "summary": info.summary()}


def import_model(src: Path | str, model_id: str | None = None) -> ModelSpec:
    """Check, copy (hashing as it copies), check the copy, then publish the folder in one rename."""
    src = Path(src).expanduser()
    entry = inspect(src)
    mid = clean_id(model_id) if model_id else model_id_for(src)
    taken = {m.id for m in catalogue.load_catalogue().models}
    if mid in taken:
        raise ModelNotAvailable(f"a model {mid!r} is already in the catalogue: "
                                f"remove it or import with --id NEW_ID")
    root = paths.models_dir() / IMPORTED
    root.mkdir(mode=paths.PRIVATE_DIR, parents=True, exist_ok=True)
    paths.private_dir(root)                   # model files are the owner's alone, like the library
    sources = [src] if src.is_file() else sorted(p for p in src.rglob("*")
                                                 if p.is_file() and not p.name.startswith("."))
    need = sum(p.stat().st_size for p in sources)
    free = shutil.disk_usage(root).free
    if need > free:
        raise ModelNotAvailable(f"{src.name}: needs {need / 1e9:.1f} GB, {free / 1e9:.1f} GB free in {root}")
    staging = Path(tempfile.mkdtemp(prefix=f".{mid}.", dir=root))
    try:
        hashes = {}
        for path in sources:
            name = path.name if src.is_file() else path.relative_to(src).as_posix()
            hashes[name] = _copy_hashing(path, staging / name)
        target = staging / src.name if src.is_file() else staging
        problems = catalogue.check_format(entry["format"], target)
        if problems:
            raise ModelNotAvailable(f"{src.name}: the copy is damaged ({problems[0]})")
        files = list(hashes) if src.is_dir() else [src.name]
        manifest = {"id": mid, **{k: v for k, v in entry.items() if k != "summary"},
                    "source": "local", "role": "chat", "files": files, "sha256": hashes,
                    "imported_from": str(src.resolve())}
        _write_manifest(staging / MANIFEST, manifest)
        final = root / mid
        if final.parent != root or final.name != mid:     # never a path above or beside one model
            raise ModelNotAvailable(f"--id {mid!r}: not a folder name")
        if final.exists():            # a stale folder without a valid entry (a crashed import)
            shutil.rmtree(final)
        staging.rename(final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return catalogue.load_catalogue().get(mid)


def _copy_hashing(src: Path, dest: Path, chunk: int = 4 << 20) -> str:
    for folder in reversed([p for p in dest.parents if not p.exists()]):
        folder.mkdir(mode=paths.PRIVATE_DIR)
    digest = hashlib.sha256()
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, paths.PRIVATE_FILE)
    with open(src, "rb") as fin, open(fd, "wb") as fout:
        while block := fin.read(chunk):
            digest.update(block)
            fout.write(block)
    return digest.hexdigest()


def _write_manifest(path: Path, manifest: dict) -> None:
    import tomli_w

    from app.core.settings import atomic_write
    atomic_write(path, tomli_w.dumps(manifest))
