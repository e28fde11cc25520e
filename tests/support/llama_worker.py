"""Our llama.cpp worker with the embedded model, started as the app starts it (a real child process)."""
from __future__ import annotations

from app.core.models.catalogue import load_catalogue, local_path
from app.worker.engines import llamacpp
from app.worker.supervisor import Supervisor


def start_worker(kv_dir, n_ctx=4096, threads=None, log_path=None) -> Supervisor:
    model = local_path(load_catalogue().default)
    sup = Supervisor(llamacpp.launch_spec(model, n_ctx=n_ctx, kv_dir=kv_dir, threads=threads, model_name="smollm2"),
                     log_path=log_path)
    sup.start()
    return sup
