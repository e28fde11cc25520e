"""Which model to get on this machine, in words a user acts on: "Qwen2.5 3B Instruct (GGUF Q4_K_M):
about 20 s to a first answer here (estimated)", what each model is good for, and never the
embedded 135M test model when a real one fits.

The seconds are the reading of a typical first question's prompt at the model's prefill speed on
this machine: measured where the engine has measured it (the speeds the app remembers), else
scaled from a model measured here by parameter count (prefill work grows with the parameters),
else from the hardware alone. Each figure says which ("measured" / "estimated")."""
from __future__ import annotations

from dataclasses import dataclass

from app.core.models.catalogue import Catalogue, ModelSpec
from app.core.plan.fit import choose
from app.core.plan.hardware import Hardware
from app.core.plan.types import EngineName, Plan

FIRST_PROMPT_TOKENS = 2500   # system prompt + the evidence passages a first question reads (~2,700 measured)
ACCEPTABLE_S = 60            # a first answer later than this is a wait: a smaller real model is advised
TOO_SLOW_S = 300             # past five minutes to a first answer a model is too slow for this machine
# Prefill throughput guesses when nothing was measured here, in FLOP/s (2 × parameters per token):
# CPU per core by vector unit (SmolLM2 135M measured ~215–275 tok/s on 2 AVX-512 cores ≈ 35–45 GFLOP/s
# a core), and a GPU's effective rate with 4-bit weights (a conservative share of its peak).
CPU_FLOPS_PER_CORE = {"avx512f": 35e9, "avx2": 25e9, "neon": 20e9}
CPU_FLOPS_PLAIN = 8e9
GPU_FLOPS = 25e12


@dataclass(frozen=True)
class Advice:
    model_id: str
    name: str
    seconds: float              # to a first answer here
    measured: bool              # the speed was measured on this machine (else estimated)
    good_for: str

    tps: float = 0.0            # the prefill speed the seconds come from
    basis: str = ""             # where that speed comes from, in words

    @property
    def too_slow(self) -> bool:
        return self.seconds > TOO_SLOW_S

    def timing(self) -> str:
        """'about 20 s to a first answer here (measured here: 125 tokens/s reading …)'."""
        t = f"{round(self.seconds)} s" if self.seconds < 120 else f"{round(self.seconds / 60)} min"
        basis = self.basis or ("measured here" if self.measured else "estimated")
        return f"about {t} to a first answer here ({basis})"

    def line(self) -> str:
        return f"{self.name}: {self.timing()}"


def measured_speeds(remembered: dict[str, float]) -> dict[str, float]:
    """Model id → prefill tokens/s from the app's remembered speeds, whose keys are
    "<model>@<engine>/<threads>/<gpu>" (the best setting kept per model)."""
    out: dict[str, float] = {}
    for key, tps in remembered.items():
        model = key.split("@", 1)[0]
        if isinstance(tps, (int, float)) and tps > 0:
            out[model] = max(out.get(model, 0.0), float(tps))
    return out


def _hardware_tps(spec: ModelSpec, plan: Plan, hw: Hardware) -> float:
    flops_per_token = 2 * spec.params_b * 1e9
    per_core = next((v for f, v in CPU_FLOPS_PER_CORE.items() if f in hw.cpu_features), CPU_FLOPS_PLAIN)
    cpu = hw.cpu_cores * per_core / flops_per_token
    if plan.engine is EngineName.VLLM or plan.n_gpu_layers < 0:
        return GPU_FLOPS / flops_per_token
    if plan.n_gpu_layers > 0:       # partly offloaded: the CPU's layers set the pace
        share = plan.n_gpu_layers / spec.layers
        return 1 / (share * flops_per_token / GPU_FLOPS + (1 - share) / cpu)
    return cpu


def prefill_tps(spec: ModelSpec, plan: Plan, hw: Hardware, catalogue: Catalogue,
                measured: dict[str, float]) -> tuple[float, bool]:
    """(tokens/s, measured here?) for `spec` run as `plan` on `hw`."""
    tps, here, _ = speed_with_basis(spec, plan, hw, catalogue, measured)
    return tps, here


def speed_with_basis(spec: ModelSpec, plan: Plan, hw: Hardware, catalogue: Catalogue,
                     measured: dict[str, float]) -> tuple[float, bool, str]:
    """(tokens/s, measured here?, the basis in words)."""
    if spec.id in measured:
        return measured[spec.id], True, f"measured here: reads {measured[spec.id]:.0f} tokens/s"
    on_cpu = plan.engine is EngineName.LLAMACPP and plan.n_gpu_layers == 0
    refs = [(catalogue.get(m), tps) for m, tps in measured.items() if m in {s.id for s in catalogue.models}]
    refs = [(s, tps) for s, tps in refs if s.role == "chat" and (s.format == "gguf") == (spec.format == "gguf")]
    if refs and on_cpu:         # the same machine's CPU, another size: scaled by the parameters
        ref, tps = max(refs, key=lambda r: r[0].params_b)
        return (tps * ref.params_b / spec.params_b, False,
                f"estimated from {ref.name} measured here, scaled by size")
    where = "this GPU" if plan.engine is EngineName.VLLM or plan.n_gpu_layers else f"this CPU ({hw.cpu_cores} cores)"
    return _hardware_tps(spec, plan, hw), False, f"estimated from size and {where}"


def is_test_model(spec: ModelSpec) -> bool:
    return spec.source == "embedded" and spec.role == "chat"


def advise(hw: Hardware, catalogue: Catalogue,
           measured: dict[str, float] | None = None) -> tuple[list[Advice], str | None]:
    """Every chat model that runs here with its first-answer time, and the one to get: the
    planner's choice among the real models when its first answer comes within ACCEPTABLE_S,
    else the largest real model that does, else the quickest real one. The test model only
    when no real model runs here."""
    measured = measured or {}
    rows: list[Advice] = []
    for spec in (m for m in catalogue.models if m.role == "chat"):
        plan = choose(hw, [spec], None)         # what catalogue_fit.verdict judges by
        if plan is None or plan.model_id != spec.id:
            continue
        tps, here, basis = speed_with_basis(spec, plan, hw, catalogue, measured)
        rows.append(Advice(spec.id, spec.name, FIRST_PROMPT_TOKENS / tps, here, spec.good_for, tps,
                           f"{basis}, for a first question's {FIRST_PROMPT_TOKENS:,} prompt tokens"))
    return rows, _pick(hw, catalogue, rows)


def _pick(hw: Hardware, catalogue: Catalogue, rows: list[Advice]) -> str | None:
    real = [r for r in rows if not is_test_model(catalogue.get(r.model_id))]
    if not real:
        return rows[0].model_id if rows else None
    by_id = {r.model_id: r for r in real}
    planned = choose(hw, [catalogue.get(i) for i in by_id], None)
    if planned and by_id[planned.model_id].seconds <= ACCEPTABLE_S:
        return planned.model_id
    quick = [r for r in real if r.seconds <= ACCEPTABLE_S]
    if quick:
        return max(quick, key=lambda r: (catalogue.get(r.model_id).params_b, -r.seconds)).model_id
    return min(real, key=lambda r: r.seconds).model_id
