"""Our llama.cpp worker: the child process the app starts to answer over HTTP.

This package is the child process, and only that. It never imports the parent side (the rest
of app.worker: supervisor, client, runtime, engines, errors, …), nor the GUI or the CLI; it may
import app.core (plain library code) and app.worker.protocol (the names and formats both sides
of the process boundary read). The parent side never imports this package either: it starts it
as a program, `python -m app.worker.llama ARGS…` from a source tree or `Pagewise --worker ARGS…`
in a frozen bundle (app/__main__.py hands that to server.main), and talks to it over HTTP.
pyproject.toml's import contracts hold both directions.

    server.py       the entry: arguments, model load, warm-up, serve
    http_server.py  OpenAI routes, SSE streaming, API key, /metrics
    chat.py         one chat completion on a llama_cpp.Llama (prefix reuse, grammars, loops)
    kv_store.py     KV state of long prompts on disk, across restarts
    loop_guard.py   ends an answer string that repeats itself

Nothing is imported here: importing the package (as `-m` does) costs nothing.
"""
