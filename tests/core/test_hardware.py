"""Hardware probe. NVML is faked (monkeypatched pynvml functions) for GPUs this machine lacks;
RAM, cores and CPU flags are this machine's real readings."""
from __future__ import annotations

import types

import pynvml
import pytest

from app.core.plan import hardware

MiB = 1 << 20


@pytest.fixture(autouse=True)
def fresh_nvml_state(monkeypatch):
    """Each test starts with NVML not yet initialised (the module keeps it open between readings)."""
    monkeypatch.setitem(hardware._nvml, "ready", False)
    monkeypatch.setitem(hardware._nvml, "error", "")


class FakeNvml:
    """Answers pynvml's calls for a list of (name, total MiB, used MiB, (major, minor))."""

    def __init__(self, cards, driver="550.54.14", cuda=12040):
        self.cards, self.driver, self.cuda = cards, driver, cuda
        self.inits = self.shutdowns = 0

    def install(self, monkeypatch):
        calls = {
            "nvmlInit": self._init, "nvmlShutdown": self._shutdown,
            "nvmlDeviceGetCount": lambda: len(self.cards),
            "nvmlDeviceGetHandleByIndex": lambda i: i,
            "nvmlDeviceGetName": lambda h: self.cards[h][0],
            "nvmlDeviceGetMemoryInfo": self._memory,
            "nvmlDeviceGetCudaComputeCapability": lambda h: self.cards[h][3],
            "nvmlSystemGetDriverVersion": lambda: self.driver,
            "nvmlSystemGetCudaDriverVersion": lambda: self.cuda,
        }
        for name, fn in calls.items():
            monkeypatch.setattr(pynvml, name, fn)
        return self

    def _init(self):
        self.inits += 1

    def _shutdown(self):
        self.shutdowns += 1

    def _memory(self, h):
        _, total, used, _ = self.cards[h]
        return types.SimpleNamespace(total=total * MiB, used=used * MiB, free=(total - used) * MiB)


def test_one_12gb_card(monkeypatch):
    nvml = FakeNvml([("NVIDIA GeForce RTX 3060", 12288, 700, (8, 6))]).install(monkeypatch)
    hw = hardware.probe()
    assert hw.nvml_error == ""
    (gpu,) = hw.gpus
    assert gpu.name == "NVIDIA GeForce RTX 3060"
    assert gpu.total_bytes == 12288 * MiB and gpu.used_bytes == 700 * MiB
    assert gpu.free_bytes == (12288 - 700) * MiB
    assert gpu.compute_capability == (8, 6)
    assert (gpu.driver, gpu.cuda) == ("550.54.14", "12.4")
    hardware.gpu_readings()
    assert nvml.inits == 1 and nvml.shutdowns == 0     # initialised once, kept for the gauge
    line = hardware.describe(hw)
    assert "RTX 3060 12 GB" in line and "compute 8.6" in line and "11 GB free" in line
    assert "\n" not in line


def test_two_cards_bytes_names_and_gauge(monkeypatch):
    FakeNvml([("NVIDIA GeForce RTX 3090", 24576, 1536, (8, 6)),
              ("NVIDIA GeForce RTX 3090", 24576, 300, (8, 6))], cuda=12020).install(monkeypatch)
    hw = hardware.probe()
    assert [g.index for g in hw.gpus] == [0, 1]
    assert hw.gpus[0].free_bytes == (24576 - 1536) * MiB and hw.gpus[1].cuda == "12.2"
    assert "2× NVIDIA GeForce RTX 3090 24 GB" in hardware.describe(hw)
    readings = hardware.gpu_readings()
    assert [r.used_bytes for r in readings] == [1536 * MiB, 300 * MiB]
    data = hardware.to_dict(hw)
    assert data["gpus"][1]["compute_capability"] == "8.6" and len(data["gpus"]) == 2


def test_name_as_bytes_from_old_bindings(monkeypatch):
    FakeNvml([(b"Tesla T4", 15360, 0, (7, 5))]).install(monkeypatch)
    assert hardware.probe().gpus[0].name == "Tesla T4"


def test_nvml_missing_is_an_answer_not_an_error(monkeypatch):
    calls = []

    def missing():
        calls.append(1)
        raise pynvml.NVMLError_LibraryNotFound()
    monkeypatch.setattr(pynvml, "nvmlInit", missing)
    hw = hardware.probe()
    assert hw.gpus == ()
    assert hw.nvml_error == "no NVIDIA GPU (NVML not found)"
    assert hardware.gpu_readings() == []
    assert hardware.describe(hw).startswith("no NVIDIA GPU (NVML not found)")
    assert len(calls) == 1                  # not looked for again every second


def test_driver_not_loaded_then_loaded(monkeypatch):
    def broken():
        raise pynvml.NVMLError(pynvml.NVML_ERROR_DRIVER_NOT_LOADED)
    monkeypatch.setattr(pynvml, "nvmlInit", broken)
    hw = hardware.probe()
    assert hw.gpus == () and "Driver Not Loaded" in hw.nvml_error
    FakeNvml([("NVIDIA GeForce RTX 4090", 24564, 300, (8, 9))]).install(monkeypatch)
    assert hardware.probe().gpus[0].name == "NVIDIA GeForce RTX 4090"    # tried again


def test_failure_mid_probe_still_shuts_nvml_down(monkeypatch):
    nvml = FakeNvml([("NVIDIA A100-SXM4-40GB", 40960, 0, (8, 0))]).install(monkeypatch)

    def lost(h):
        raise pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST)
    monkeypatch.setattr(pynvml, "nvmlDeviceGetMemoryInfo", lost)
    hw = hardware.probe()
    assert hw.gpus == () and "GPU is lost" in hw.nvml_error
    assert nvml.shutdowns == 1                  # released, so the next reading starts afresh
    monkeypatch.setattr(pynvml, "nvmlDeviceGetMemoryInfo", nvml._memory)
    assert len(hardware.probe().gpus) == 1 and nvml.inits == 2


def test_this_machine_cpu_and_ram():
    """Real readings: RAM and cores are positive, available ≤ total, flags come from /proc/cpuinfo."""
    hw = hardware.probe()
    assert hw.cpu_cores >= 1
    assert 0 < hw.ram_available_bytes <= hw.ram_bytes
    flags = open("/proc/cpuinfo").read().split()
    for feature in hw.cpu_features:
        assert feature in flags or feature == "neon"
    if "avx2" in flags:
        assert "avx2" in hw.cpu_features


@pytest.mark.parametrize("n_bytes,text", [(24564 * MiB, "24"), (int(1.5 * 2**30), "1.5"), (11264 * MiB, "11")])
def test_gib_rounding(n_bytes, text):
    assert hardware.gib(n_bytes) == text
