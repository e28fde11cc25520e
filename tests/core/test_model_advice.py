"""Issue 33 defect 10: the model advice fits the machine — never the 135M test model when a real
model runs here, with the seconds to a first answer (measured here, or estimated) and what each
model is good for. Simulated hardware for the GPUs this machine lacks; the real probe for its CPU."""
from __future__ import annotations

from app.core.models.catalogue import load_catalogue
from app.core.plan import advice, hardware
from app.core.plan.catalogue_fit import table
from app.core.plan.hardware import GpuInfo, Hardware

GiB = 1 << 30
TEST_MODEL = "smollm2-135m-q4_1"


def _machine(vram_gib: float = 0, cc=(8, 9), ram_gib: float = 64, cores: int = 16) -> Hardware:
    gpus = (GpuInfo(0, "NVIDIA GeForce RTX 4090" if vram_gib >= 20 else "NVIDIA GeForce GTX 1650",
                    int(vram_gib * GiB), int(vram_gib * GiB * 0.95), int(vram_gib * GiB * 0.05), cc),) if vram_gib else ()
    return Hardware(gpus, int(ram_gib * GiB), int(ram_gib * GiB * 0.8), cores, ("avx2",))


def test_a_24_gb_gpu_gets_a_large_real_model_answering_in_seconds():
    cat = load_catalogue(imported=False)
    rows, best = advice.advise(_machine(24), cat)
    pick = next(r for r in rows if r.model_id == best)
    assert best != TEST_MODEL and cat.get(best).format == "awq" and cat.get(best).params_b >= 7
    assert pick.seconds < 10 and "estimated from size and this GPU" in pick.timing() and pick.good_for
    assert pick.line().startswith(cat.get(best).name + ": about ")


def test_this_cpu_only_machine_is_advised_a_real_model_with_its_wait():
    hw = hardware.probe()
    assert not hw.gpus                                   # this machine: 2 cores, no GPU
    cat = load_catalogue(imported=False)
    rows, best = advice.advise(hw, cat, {TEST_MODEL: 215.0})   # the 135M's speed measured here
    assert best != TEST_MODEL and cat.get(best).params_b >= 1
    by_id = {r.model_id: r for r in rows}
    assert by_id[TEST_MODEL].measured and "(measured here: reads 215 tokens/s" in by_id[TEST_MODEL].timing()
    scaled = by_id[best]                                 # not measured: scaled from the 135M by size
    assert not scaled.measured and "(estimated from SmolLM2" in scaled.timing() and "scaled by size" in scaled.timing()
    assert abs(scaled.seconds - advice.FIRST_PROMPT_TOKENS / (215.0 * 0.135 / cat.get(best).params_b)) < 1
    # the table the manager and `models list` show agrees, with the good-for line and the timing
    rows, recommended = table(hw, cat, {TEST_MODEL: 215.0})
    assert recommended == best
    assert all(r["good_for"] for r in rows if r["role"] == "chat")
    assert next(r for r in rows if r["id"] == best)["timing"] == scaled.timing()


def test_a_small_gpu_gets_a_gguf_model_offloaded_to_it():
    cat = load_catalogue(imported=False)
    rows, best = advice.advise(_machine(4, cc=(7, 5), ram_gib=16, cores=4), cat)
    assert best != TEST_MODEL and best in {r.model_id for r in rows}
    slow_cpu = advice.advise(_machine(0, ram_gib=16, cores=4), cat)[0]
    on_gpu = next(r for r in rows if r.model_id == best)
    assert on_gpu.seconds < next(r for r in slow_cpu if r.model_id == best).seconds


def test_the_test_model_only_when_no_real_model_runs():
    cat = load_catalogue(imported=False)
    rows, best = advice.advise(_machine(0, ram_gib=3.5, cores=2), cat)
    assert best == TEST_MODEL and [r.model_id for r in rows] == [TEST_MODEL]


def test_remembered_speeds_are_read_per_model():
    speeds = advice.measured_speeds({"smollm2-135m-q4_1@llamacpp/tauto/gpu0": 82.0,
                                     "smollm2-135m-q4_1@llamacpp/t2/gpu0": 120.0, "x@vllm/gpu": 0})
    assert speeds == {"smollm2-135m-q4_1": 120.0}


def test_one_slow_reading_does_not_move_the_advice(tmp_path):
    from app.core.answer.reading_memory import ReadingMemory
    memory = ReadingMemory(tmp_path / "memory.json")
    for _ in range(3):
        memory.record_prefill(TEST_MODEL, 2000, 2000 / 215)       # idle machine
    memory.record_prefill(TEST_MODEL, 2000, 2000 / 60)            # one answer on a busy machine
    steady = advice.measured_speeds(memory.steady_tps())
    assert steady[TEST_MODEL] == 215.0
    cat = load_catalogue(imported=False)
    rows, _ = advice.advise(hardware.probe(), cat, steady)
    assert round(next(r for r in rows if r.model_id == TEST_MODEL).seconds) == round(advice.FIRST_PROMPT_TOKENS / 215)


def test_a_model_that_fits_in_memory_but_answers_after_minutes_is_too_slow_here():
    hw = _machine(0, ram_gib=64, cores=2)
    cat = load_catalogue(imported=False)
    rows, best = table(hw, cat, {TEST_MODEL: 215.0})
    slow = [r for r in rows if r["role"] == "chat" and r["first_answer_s"] and r["first_answer_s"] > advice.TOO_SLOW_S]
    assert slow, "a 7B on 2 cores should take minutes"
    for r in slow:
        assert not r["fits"] and r["fits_words"].startswith("too slow for this machine (about ")
    assert best not in {r["id"] for r in slow}
