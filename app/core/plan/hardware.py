"""What this machine has: NVIDIA GPUs through NVML (nvidia-ml-py), RAM, CPU cores and features.

Nothing here raises: a machine without NVML is an ordinary answer ("no NVIDIA GPU"), and the
planner, `pagewise doctor` and the GUI gauge all read the same dataclasses.
"""
from __future__ import annotations

import atexit
import os
import platform
import subprocess
from dataclasses import dataclass

GiB = 1 << 30
# CPU flags that matter to llama.cpp's CPU kernels (speed, not correctness).
_FEATURES = ("avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni",
             "amx_tile", "neon", "asimd", "sve")


@dataclass(frozen=True)
class GpuInfo:
    index: int
    name: str
    total_bytes: int
    free_bytes: int
    used_bytes: int
    compute_capability: tuple[int, int]
    driver: str = ""
    cuda: str = ""

    @property
    def total_gib(self) -> float:
        return self.total_bytes / GiB


@dataclass(frozen=True)
class Hardware:
    gpus: tuple[GpuInfo, ...]
    ram_bytes: int
    ram_available_bytes: int
    cpu_cores: int
    cpu_features: tuple[str, ...]
    nvml_error: str = ""        # why there is no GPU list ("no NVIDIA GPU (NVML not found)")


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _cuda_version(pynvml) -> str:
    try:
        v = pynvml.nvmlSystemGetCudaDriverVersion()   # e.g. 12040 → "12.4"
        return f"{v // 1000}.{(v % 1000) // 10}"
    except Exception:
        return ""


_nvml = {"ready": False, "error": ""}     # NVML stays initialised: the gauge reads every second


def _nvml_init(pynvml) -> str:
    """Initialise NVML once per process; '' when ready, else the reason there is no GPU list.
    Kept open because without persistence mode each init can cost the driver a GPU wake-up."""
    if _nvml["ready"]:
        return ""
    if _nvml["error"]:
        return _nvml["error"]           # a machine without NVML stays without it: don't retry
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        _nvml["error"] = "no NVIDIA GPU (NVML not found)"
        return _nvml["error"]
    except pynvml.NVMLError as exc:
        return f"no NVIDIA GPU (NVML: {exc})"       # a driver problem may pass: try again next time
    _nvml["ready"] = True
    atexit.register(_nvml_shutdown, pynvml)
    return ""


def _nvml_shutdown(pynvml) -> None:
    if _nvml["ready"]:
        _nvml["ready"] = False
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _read_gpus() -> tuple[list[GpuInfo], str]:
    """NVML readings, or ([], reason)."""
    try:
        import pynvml
    except ImportError:
        return [], "no NVIDIA GPU (nvidia-ml-py not installed)"
    err = _nvml_init(pynvml)
    if err:
        return [], err
    try:
        driver, cuda = _text(pynvml.nvmlSystemGetDriverVersion()), _cuda_version(pynvml)
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            cc = tuple(pynvml.nvmlDeviceGetCudaComputeCapability(h))
            gpus.append(GpuInfo(i, _text(pynvml.nvmlDeviceGetName(h)), int(mem.total),
                                int(mem.free), int(mem.used), (int(cc[0]), int(cc[1])), driver, cuda))
        return gpus, ("" if gpus else "no NVIDIA GPU (NVML reports none)")
    except pynvml.NVMLError as exc:
        _nvml_shutdown(pynvml)          # e.g. GPU lost / driver reloaded: start afresh next time
        return [], f"no NVIDIA GPU (NVML: {exc})"


def gpu_readings() -> list[GpuInfo]:
    """Current per-GPU memory, for the GUI gauge (~1 s refresh); [] without NVML."""
    return _read_gpus()[0]


def _meminfo() -> tuple[int, int]:
    """(total, available) RAM in bytes."""
    try:
        fields = {}
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                fields[key] = int(rest.split()[0]) * 1024
        return fields["MemTotal"], fields.get("MemAvailable", fields.get("MemFree", 0))
    except (OSError, KeyError, ValueError, IndexError):
        pass
    try:   # macOS, Windows: psutil where present, else total only
        import psutil
        vm = psutil.virtual_memory()
        return int(vm.total), int(vm.available)
    except Exception:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            return total, total // 2
        except (ValueError, OSError, AttributeError):
            return 0, 0


def _cpu_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))    # honours taskset / container CPU limits
    except AttributeError:
        return os.cpu_count() or 1


def _cpu_features() -> tuple[str, ...]:
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    flags.update(line.split(":", 1)[1].split())
                    break
    except OSError:
        if platform.system() == "Darwin":
            flags.update(_sysctl_flags())
    if platform.machine().lower() in ("arm64", "aarch64"):
        flags.add("neon")
    return tuple(f for f in _FEATURES if f in flags)


def _sysctl_flags() -> set[str]:
    try:
        out = subprocess.run(["sysctl", "-n", "machdep.cpu.features", "machdep.cpu.leaf7_features"],
                             capture_output=True, text=True, timeout=2).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return {f.lower().replace(".", "_") for f in out.split()}


def probe() -> Hardware:
    gpus, err = _read_gpus()
    total, available = _meminfo()
    return Hardware(tuple(gpus), total, available, _cpu_cores(), _cpu_features(), err)


def gib(n_bytes: int) -> str:
    value = n_bytes / GiB
    return f"{value:.0f}" if value >= 10 or abs(value - round(value)) < 0.05 else f"{value:.1f}"


def describe(hw: Hardware) -> str:
    """One line: '1× NVIDIA GeForce RTX 4090 24 GB (22.5 GB free, compute 8.9), 64 GB RAM, 16 cores, avx2 avx512f'."""
    if hw.gpus:
        names = {}
        for g in hw.gpus:
            names.setdefault((g.name, round(g.total_gib)), []).append(g)
        gpu = "; ".join(f"{len(gs)}× {name} {gib(gs[0].total_bytes)} GB "
                        f"({gib(sum(g.free_bytes for g in gs))} GB free, "
                        f"compute {gs[0].compute_capability[0]}.{gs[0].compute_capability[1]})"
                        for (name, _), gs in names.items())
        driver = f", driver {hw.gpus[0].driver}" if hw.gpus[0].driver else ""
        gpu += driver + (f" CUDA {hw.gpus[0].cuda}" if hw.gpus[0].cuda else "")
    else:
        gpu = hw.nvml_error or "no NVIDIA GPU"
    feats = " ".join(f for f in hw.cpu_features if f in ("avx2", "avx512f", "neon")) or "no AVX2"
    return (f"{gpu}; {gib(hw.ram_bytes)} GB RAM ({gib(hw.ram_available_bytes)} GB available), "
            f"{hw.cpu_cores} CPU cores, {feats}")


def to_dict(hw: Hardware) -> dict:
    """JSON-ready form for `pagewise doctor --json`."""
    return {"gpus": [{"index": g.index, "name": g.name, "total_bytes": g.total_bytes,
                      "free_bytes": g.free_bytes, "used_bytes": g.used_bytes,
                      "compute_capability": f"{g.compute_capability[0]}.{g.compute_capability[1]}",
                      "driver": g.driver, "cuda": g.cuda} for g in hw.gpus],
            "ram_bytes": hw.ram_bytes, "ram_available_bytes": hw.ram_available_bytes,
            "cpu_cores": hw.cpu_cores, "cpu_features": list(hw.cpu_features),
            "nvml_error": hw.nvml_error, "summary": describe(hw)}
