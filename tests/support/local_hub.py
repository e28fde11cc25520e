"""A local HTTP server that answers like the Hugging Face hub's file endpoint
(`/{repo}/resolve/{revision}/{file}`), serving a folder: lets the real huggingface_hub
download code run without the internet."""
from __future__ import annotations

import hashlib
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def serve_folder(root: Path, repo: str, cut_after: int | None = None, cuts: int = 1,
                 bytes_per_s: float | None = None, etag: str | None = None, redirect_to: str | None = None):
    """Start a hub for `repo` whose files are those under root; returns (server, url).
    cut_after: the first `cuts` downloads stop after that many bytes and drop the connection
    (a network failure mid-file). bytes_per_s: a slow line (a download that takes seconds,
    not a fraction of one). server.ranges records each GET's Range start (0: none).
    etag: the ETag to announce instead of the file's SHA-256 (a hostile or broken hub).
    redirect_to: answer every file with a 302 to this base URL + the same path, as the hub does
    for LFS files kept on a CDN. server.auth records each request's Authorization header."""
    state = {"cuts": cuts if cut_after is not None else 0}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output clean
            pass

        def _file(self) -> Path | None:
            prefix = f"/{repo}/resolve/"
            if not self.path.startswith(prefix):
                return None
            _, _, name = self.path[len(prefix):].partition("/")
            path = root / name.split("?")[0]
            return path if path.is_file() else None

        def _headers(self, path: Path, length: int, status: int = 200, extra: dict | None = None):
            data = path.read_bytes()
            self.send_response(status)
            self.send_header("ETag", f'"{etag or hashlib.sha256(data).hexdigest()}"')
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("Content-Length", str(length))
            self.send_header("Accept-Ranges", "bytes")
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()

        def _redirected(self, path: Path) -> bool:
            server.auth.append(self.headers.get("Authorization"))
            if redirect_to is None:
                return False
            self.send_response(302)
            self.send_header("Location", redirect_to + self.path)
            self.send_header("X-Linked-Size", str(path.stat().st_size))
            self.send_header("X-Linked-Etag", f'"{etag or hashlib.sha256(path.read_bytes()).hexdigest()}"')
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return True

        def do_HEAD(self):
            path = self._file()
            if path is None:
                self.send_error(404)
                return
            if not self._redirected(path):
                self._headers(path, path.stat().st_size)

        def do_GET(self):
            path = self._file()
            if path is None:
                self.send_error(404)
                return
            if self._redirected(path):
                return
            data = path.read_bytes()
            start = 0
            rng = self.headers.get("Range")
            if rng and rng.startswith("bytes="):
                start = int(rng[6:].split("-")[0] or 0)
            body = data[start:]
            server.ranges.append(start)
            if start:
                self._headers(path, len(body), 206,
                              {"Content-Range": f"bytes {start}-{len(data) - 1}/{len(data)}"})
            else:
                self._headers(path, len(body))
            if state["cuts"] > 0 and len(body) > cut_after:
                state["cuts"] -= 1
                self.wfile.write(body[:cut_after])
                self.wfile.flush()
                self.close_connection = True
                return
            if bytes_per_s is None:
                self.wfile.write(body)
                return
            step = 1 << 20
            for at in range(0, len(body), step):
                self.wfile.write(body[at:at + step])
                time.sleep(step / bytes_per_s)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.ranges, server.auth = [], []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
