"""`pagewise models list|pull|verify|import|remove`: the catalogue with the planner's verdict
for this machine, downloads with progress, checks, imports of local files."""
from __future__ import annotations

import time

from app.cli.progress import download_progress
from app.core.failures import FailureKind
from app.failure_messages import UserError


class ModelCheckFailed(Exception):
    kind = FailureKind.MODEL_BROKEN


def _list(args):
    from app.core.plan import hardware
    from app.core.plan.catalogue_fit import table as model_table
    hw = hardware.probe()
    table, best = model_table(hw)
    lines = [f"{'':2}{'id':<30} {'download':>9} {'needs':>14}  {'on this machine':<44} installed"]
    for r in table:
        mark = "*" if r["default"] else ("+" if r["recommended"] else " ")
        lines.append(f"{mark} {r['id']:<30} {r['size_gb']:>6.2f} GB {r['memory_gb']:>6.1f} GB {r['memory_where']:<4}"
                     f"  {r['fits_words']:<44} {'yes' if r['installed'] else '-'}")
    lines.append(f"\nthis machine: {hardware.describe(hw)}")
    if best:
        pick = next(r for r in table if r["id"] == best)
        how = "installed" if pick["installed"] else f"`pagewise models pull {best}`"
        lines.append(f"recommended (+): {best} ({pick['fits_words']}); {how}")
    lines.append("* the default")
    return {"models": table, "recommended": best, "hardware": hardware.describe(hw)}, "\n".join(lines)


def _hub_token() -> str | None:
    from app.core import settings
    try:
        return settings.get_secret("hub_token")
    except settings.NoKeyring:
        return None                       # public models need none; huggingface_hub's own login still works


def _pull(args, cat):
    from app.core.models import download
    spec = cat.get(args.id)
    if spec.source != "hf":
        raise UserError(f"{spec.id} is {'built in' if spec.source == 'embedded' else 'imported'}: nothing to download")
    path = download.pull(spec, endpoint=args.endpoint, token=_hub_token(),
                         on_progress=None if args.json else download_progress())
    return {"id": spec.id, "path": str(path), "verified": True}, f"{spec.id}: verified, ready at {path}"


def _verify(args, cat):
    from app.core.models import catalogue as models
    spec = cat.get(args.id)
    began = time.perf_counter()
    problems = models.verify(spec)
    if problems:
        raise ModelCheckFailed(f"{spec.id}: " + "; ".join(problems))
    checked = "SHA-256, " if spec.sha256 else ""
    what = "GGUF header and tensor table" if spec.format == "gguf" else "config, tokenizer and shards"
    return ({"id": spec.id, "ok": True, "seconds": round(time.perf_counter() - began, 2)},
            f"{spec.id}: intact ({checked}{what} checked)")


def _import(args):
    from app.core.models import catalogue as models
    from app.core.models import importer
    spec = importer.import_model(args.path, model_id=args.id)
    path = models.local_path(spec)
    data = {"id": spec.id, "name": spec.name, "engine": spec.engine, "format": spec.format,
            "size_gb": spec.size_gb, "params_b": spec.params_b, "context": spec.native_context,
            "path": str(path)}
    return data, (f"imported {spec.id}: {spec.format}, {spec.engine}, {spec.size_gb:.2f} GB, "
                  f"{spec.params_b:.2f}B parameters, context {spec.native_context}\n"
                  f"use it: pagewise ask FILE.pdf -q QUESTION --model {spec.id}")


def _remove(args, cat):
    from app.core.models import catalogue as models
    spec = cat.get(args.id)
    folder = models.remove(spec)
    return {"id": spec.id, "removed": str(folder)}, f"removed {spec.id} ({folder})"


def run(args):
    from app.core.models import catalogue as models
    sub = args.models_command
    if sub == "list":
        return _list(args)
    if sub == "import":
        return _import(args)
    cat = models.load_catalogue()
    if sub == "pull":
        return _pull(args, cat)
    if sub == "verify":
        return _verify(args, cat)
    if sub == "remove":
        return _remove(args, cat)
    raise UserError(f"unknown models command {sub}")
