"""`pagewise plan [--gpu-name N --vram-gib G … | --cpu-only --ram-gib R] [--model ID]`: the plan
for hardware you describe, and the ladder a failed start would go down."""
from __future__ import annotations


def run(args):
    from app.core.models import catalogue as models
    from app.core.plan import hardware, planner
    cat = models.load_catalogue()
    gib = 1 << 30
    if args.cpu_only or not args.vram_gib:
        gpus = ()
    else:
        major, _, minor = args.compute_capability.partition(".")
        total = int(args.vram_gib * gib)
        free = int((args.free_vram_gib if args.free_vram_gib is not None else args.vram_gib) * gib)
        gpus = tuple(hardware.GpuInfo(i, args.gpu_name or f"{args.vram_gib:g} GB GPU", total, free,
                                      total - free, (int(major), int(minor or 0)))
                     for i in range(args.gpus))
    hw = hardware.Hardware(gpus=gpus, ram_bytes=int(args.ram_gib * gib),
                           ram_available_bytes=int(args.ram_gib * gib * 0.8), cpu_cores=8,
                           cpu_features=("avx2",))
    chosen = planner.make_plan(hw, cat, need_tokens=args.need_tokens, prefer_model=args.model)
    ladder = planner.ladder(chosen, hw, cat)
    human = "\n".join([planner.explain(chosen), *[f"  - {r}" for r in chosen.reasons],
                       "if it fails to start:", *[f"  {n}. {planner.explain(p)}" for n, p in enumerate(ladder, 1)]])
    return {"plan": planner.to_dict(chosen), "ladder": [planner.to_dict(p) for p in ladder]}, human
