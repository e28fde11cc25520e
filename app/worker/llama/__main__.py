"""`python -m app.worker.llama ARGS…` starts the worker (app/worker/engines/llamacpp.py builds that command)."""
from app.worker.llama.server import main

if __name__ == "__main__":
    main()
