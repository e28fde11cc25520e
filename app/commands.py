"""What each CLI command does; returns (data for --json, text for people)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from app.errors import UserError


def _library():
    from app.core.library import Library
    return Library()


def _progress_printer(name: str, quiet: bool, unit: str = "pages"):
    """Per-page ingestion progress on stderr (stdout stays clean for --json)."""
    if quiet or not sys.stderr.isatty():
        return None

    def progress(done: int, total: int) -> None:
        print(f"\rindexing {name}: {done}/{total} {unit}", end="" if done < total else "\n",
              file=sys.stderr, flush=True)
    return progress


def _add_all(lib, files: list[str], password: str | None, quiet: bool = False):
    infos = []
    for f in files:
        infos.append(lib.add(f, password=password, progress=_progress_printer(Path(f).name, quiet)))
        _print_warnings(f, infos[-1].warnings)
    return infos


def _print_warnings(name: str, warnings) -> None:
    """Ingestion warnings (pages that lost text, repairs) on stderr, even with --json:
    damaged text is never silent (issue 15.6)."""
    for w in warnings:
        print(f"{name}: warning: {w}", file=sys.stderr, flush=True)


def cmd_index(args):
    lib = _library()
    rows, lines = [], []
    for f in args.files:
        start = time.perf_counter()
        info = lib.add(f, password=args.password, progress=_progress_printer(Path(f).name, args.json))
        secs = time.perf_counter() - start
        _print_warnings(f, info.warnings)
        chunks = len(lib.chunks(info.id))
        rows.append({"doc": f, "id": info.id, "pages": info.page_count, "chunks": chunks,
                     "lang": info.lang, "seconds": round(secs, 3), "warnings": list(info.warnings)})
        warn = f"  warning: {'; '.join(info.warnings)}" if info.warnings else ""
        lines.append(f"{f}: {info.page_count} pages, {chunks} chunks, {info.lang}, {secs:.2f} s{warn}")
    if args.dense:
        from app.core.search import dense
        if dense.available():
            start = time.perf_counter()
            done = lib.embed([r["id"] for r in rows],
                             progress=_progress_printer("search vectors", args.json, unit="passages"))
            lines.append(f"search vectors: {done} passages in {time.perf_counter() - start:.1f} s")
            rows[-1]["embedded_chunks"] = done
        else:
            lines.append("search vectors: no embedding model on this machine (BM25 only)")
    return {"documents": rows}, "\n".join(lines)


def cmd_retrieve(args):
    lib = _library()
    infos = _add_all(lib, args.files, args.password, quiet=args.json)
    label = {i.id: f for i, f in zip(infos, args.files)}
    hits = lib.search(args.question, doc_ids=[i.id for i in infos], k=args.k)
    data = {"hits": [{"doc": label[h.doc_id], "page": h.page, "score": round(h.score, 4),
                      "text": h.text} for h in hits]}
    human = "\n".join(f"{label[h.doc_id]} p. {h.page}  ({h.score:.2f})  {' '.join(h.text.split())[:160]}"
                      for h in hits) or "no matching passages"
    return data, human


def cmd_ask(args):
    """One or more questions (`-q` again and again) in one conversation and one engine start."""
    from app.core.answer import qa
    from app.core.answer.conversation import Conversation
    from app.worker.runtime import EngineRuntime

    lib = _library()
    infos = _add_all(lib, args.files, args.password, quiet=args.json)
    refs = [qa.DocRef(n, i.id, f) for n, (i, f) in enumerate(zip(infos, args.files), start=1)]
    runtime = EngineRuntime(model_id=args.model, on_status=None if args.json else _status_printer(),
                            threads=getattr(args, "threads", None))
    vectors = _VectorsWhileStarting(lib, [i.id for i in infos], quiet=args.json)
    questions = args.question if isinstance(args.question, list) else [args.question]
    answers = []
    try:
        runtime.start()
        vectors.finish()
        mode = {"whole": "whole-document"}.get(args.mode, args.mode)
        conv = Conversation()
        for question in questions:
            line = ReadingLine(quiet=args.json)
            answer = runtime.ask(lib, refs, question, mode=mode, conversation=conv,
                                 on_reading=line.reading, on_progress=line.progress)
            line.done()
            answers.append(answer)
            lib.add_exchange([i.id for i in infos], question, _json(answer.to_dict()))
    finally:
        runtime.stop()
    if len(answers) == 1:
        return answers[0].to_dict(), _format_answer(answers[0])
    human = "\n\n".join(f"Q{n}: {q}\n{_format_answer(a)}" for n, (q, a) in enumerate(zip(questions, answers), 1))
    return {"answers": [a.to_dict() for a in answers]}, human


def cmd_read(args):
    """Read whole documents ahead of the questions (their KV state is kept): later questions
    about them are answered whole-document at once."""
    from app.core.answer import qa
    from app.worker.runtime import EngineRuntime

    lib = _library()
    infos = _add_all(lib, args.files, args.password, quiet=args.json)
    refs = [qa.DocRef(n, i.id, f) for n, (i, f) in enumerate(zip(infos, args.files), start=1)]
    runtime = EngineRuntime(model_id=args.model, on_status=None if args.json else _status_printer(),
                            threads=getattr(args, "threads", None))
    line = ReadingLine(quiet=args.json, what="reading the document")
    try:
        runtime.start()
        result = runtime.read(lib, refs, on_progress=line.progress)
    finally:
        line.done()
        runtime.stop()
    names = ", ".join(Path(f).name for f in args.files)
    human = (f"{names}: already read ({result['tokens']:,} tokens); questions use the whole document"
             if result.get("already") else
             f"{names}: read {result['tokens']:,} tokens in {result['seconds']:.1f} s; "
             "questions about it are now answered from the whole document")
    return result, human


class ReadingLine:
    """What the engine reads and how far it is, on stderr: "[reading] 2,100 new tokens of 4
    passages ≈ 9 s", then "reading the passages: 45% · 6 s left" (one line redrawn on a
    terminal, a line every tenth otherwise)."""

    def __init__(self, quiet: bool, what: str = "reading the passages"):
        from app.core.answer.progress import ProgressEstimate
        self.quiet, self.estimate = quiet, ProgressEstimate(what)
        self.shown = -1
        self.tty = sys.stderr.isatty()
        self.drawn = False

    def reading(self, r) -> None:
        if r.mode == "whole-document":
            self.estimate.what = "reading the documents"
        if not self.quiet:
            print(f"[reading] {r.line()}", file=sys.stderr, flush=True)

    def progress(self, done: int, total: int) -> None:
        if self.quiet or total <= 0:
            return
        now = self.estimate(done, total)
        if not now.measured:                  # the speed counts from the first slice on
            return
        pct, text = now.percent, now.line()
        if self.tty:
            print(f"\r{text:<60}", end="", file=sys.stderr, flush=True)
            self.drawn = True
        elif pct // 10 != self.shown // 10 or pct == 100:
            print(text, file=sys.stderr, flush=True)
        self.shown = pct

    def done(self) -> None:
        if self.drawn:
            print(file=sys.stderr, flush=True)
            self.drawn = False


class _VectorsWhileStarting:
    """Search vectors for the question's documents, computed while the engine starts
    (both take seconds). Waited for when few are left; otherwise the question goes
    ahead with BM25 plus the vectors made so far, and later runs finish the rest."""

    WAIT_FOR = 300      # passages: ~1-2 min on 2 busy cores, seconds on a desktop CPU

    def __init__(self, lib, doc_ids: list[int], quiet: bool) -> None:
        import threading

        from app.core.search import dense
        self.lib, self.doc_ids, self.quiet, self.dense = lib, doc_ids, quiet, dense
        self.stop, self.thread = threading.Event(), None
        self.todo = lib.unembedded(doc_ids)
        if self.todo:
            self.thread = threading.Thread(target=self._work, name="search-vectors", daemon=True)
            self.thread.start()

    def _work(self) -> None:
        try:
            self.lib.embed(self.doc_ids, cancelled=self.stop.is_set)
        except self.dense.Cancelled:
            pass
        except Exception as exc:  # noqa: BLE001 - search falls back to BM25; say so, go on
            self._say(f"[search] vectors not computed ({exc}); searching by words only")

    def finish(self) -> None:
        if self.thread is None:
            return
        left = self.lib.unembedded(self.doc_ids)
        if left > self.WAIT_FOR:
            self.stop.set()
            self._say(f"[search] {left} of {self.todo} passages still lack search vectors; "
                      "this answer uses words only for them (`pagewise index FILE` finishes them)")
        elif left:
            self._say(f"[search] computing search vectors: {left} passages left")
        self.thread.join()

    def _say(self, line: str) -> None:
        if not self.quiet:
            print(line, file=sys.stderr, flush=True)


def _json(data) -> str:
    import json
    return json.dumps(data, ensure_ascii=False)


def _status_printer():
    last = []

    def show(state: str, detail: str) -> None:
        line = f"[{state}] {detail}"
        if not last or last[-1] != line:      # supervisor and runtime may report the same step
            print(line, file=sys.stderr, flush=True)
            last[:] = [line]
    return show


def _format_answer(answer) -> str:
    from app.core.answer.badge import Badge
    lines = [answer.text or "(no answer)", ""]
    for n, c in enumerate(answer.citations, start=1):
        badge = Badge.of(c).text()
        note = f" ({c.note})" if c.note else ""
        lines.append(f"[{n}] {c.doc} p. {c.page} [{badge}]{note}: \u201c{c.quote}\u201d")
    if not answer.citations:
        lines.append("(no citations)")
    for w in getattr(answer, "warnings", ()):
        lines.append(f"note: {w}")
    t, engine = answer.timing, answer.engine
    lines.append(f"\n{answer.mode}; {engine.summary if engine else ''}; "
                 f"first token {t.ttft_s or 0:.2f} s, total {t.total_s:.2f} s")
    return "\n".join(lines)


def cmd_doctor(args):
    from app.core.models import catalogue as models
    from app.core.plan import hardware, planner
    hw = hardware.probe()
    cat = models.load_catalogue()
    chosen = planner.make_plan(hw, cat, available=models.is_available)
    # what a start will do with what worked (or failed) here before: doctor shows that plan
    from app.core.plan.history import PlanHistory
    history = PlanHistory().decide(chosen, hw, cat)
    chosen = history.plan
    engines = _engines_available()
    data = {"hardware": hardware.to_dict(hw) if hasattr(hardware, "to_dict") else hardware.describe(hw),
            "engines": engines, "plan": planner.to_dict(chosen),
            "models": [{"id": m.id, "available": models.is_available(m)} for m in cat.models]}
    data["history"] = history.to_dict()
    offload = _llama_gpu_offload() if engines.get("llama.cpp") else None
    data["llama_gpu_offload"] = offload
    human = "\n".join([f"hardware: {hardware.describe(hw)}",
                       "engines: " + ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in engines.items()),
                       *([_offload_line(offload, chosen)] if offload is not None else []),
                       f"plan: {planner.explain(chosen)}",
                       *[f"  - {r}" for r in chosen.reasons if r != history.line],
                       *([history.line] if history.line else [])])
    return data, human


def _llama_gpu_offload() -> bool | None:
    """Can the llama.cpp build in use put layers on a GPU? Asked in a child: loading a CUDA
    build initialises the driver, which doctor's own process need not do. None: unknown."""
    import subprocess
    code = "import llama_cpp; print(bool(llama_cpp.llama_supports_gpu_offload()))"
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    last = (out.stdout.strip().splitlines() or [""])[-1]
    return {"True": True, "False": False}.get(last)


def _offload_line(offload: bool, plan) -> str:
    if offload:
        return "llama.cpp GPU offload: yes (this build can put layers on the GPU)"
    line = "llama.cpp GPU offload: no (a CPU-only build"
    if plan.engine == "llamacpp" and plan.n_gpu_layers:
        line += "; the plan's GPU layers will run on the CPU"
    return line + "; scripts/setup.sh builds it with CUDA where the CUDA toolkit's nvcc is found)"


def _engines_available() -> dict:
    import importlib.util

    from app.worker.engines import vllm as vllm_engine
    return {"llama.cpp": importlib.util.find_spec("llama_cpp") is not None,
            "vllm": vllm_engine.available() if hasattr(vllm_engine, "available") else False}


def cmd_plan(args):
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


def cmd_models(args):
    from app.commands_models import cmd_models as models_command  # list|pull|verify|import|remove
    return models_command(args)


def cmd_settings(args):
    from app.commands_settings import cmd_settings as settings_command  # get|set|set-secret
    return settings_command(args)


def cmd_gui(args):
    from app.qt.app import run_gui
    code = run_gui(args.files, screenshot=args.screenshot, question=args.question, compare=args.compare)
    if code:
        raise UserError(f"the desktop app exited with status {code}")
    return None, ""


def cmd_library(args):
    from app import commands_library
    return commands_library.run(args)


def cmd_review(args):
    from app import commands_review
    return commands_review.run(args, _add_all, _status_printer)
