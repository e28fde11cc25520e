"""Another local account tries to take the engine's port: it must never receive the key or a document.

The attacker is a real second account (`runuser -u nobody`) running the system Python: it binds the
port the app will talk to (SO_REUSEADDR, as a squatter would), answers every request 200 and prints
what it received. Our llama.cpp worker serves on a socket the app bound and handed down, so the port
is never free; an engine that binds its own port (vLLM; here the fake server) gets the key only once
its listener is found among the child's own sockets.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from app.worker import engine_errors as errors, ports
from app.worker.supervisor import Supervisor
from tests.support.fake_server import fake_spec

SQUATTER = r"""
import socket, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", port)); s.listen(16)
except OSError as exc:
    print("REFUSED", exc.errno, flush=True); sys.exit(0)
print("LISTENING", flush=True)
end = time.monotonic() + seconds
while time.monotonic() < end:
    s.settimeout(max(0.1, end - time.monotonic()))
    try:
        c, _ = s.accept()
    except OSError:
        break
    c.settimeout(2)
    try:
        print("GOT", c.recv(65536).decode("latin-1").replace("\r\n", " | "), flush=True)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}")
    except OSError:
        pass
    c.close()
"""

SYSTEM_PYTHON = "/usr/bin/python3"


def _other_account_available() -> bool:
    return (os.name == "posix" and os.geteuid() == 0 and shutil.which("runuser") is not None
            and os.path.exists(SYSTEM_PYTHON) and ports.can_check_listeners())


pytestmark = pytest.mark.skipif(not _other_account_available(),
                                reason="needs root, runuser, the account 'nobody' and /proc")


def squat(port: int, seconds: float) -> tuple[subprocess.Popen, str]:
    """Start the squatter as `nobody`; returns it and its first line (REFUSED … or LISTENING)."""
    proc = subprocess.Popen(["runuser", "-u", "nobody", "--", SYSTEM_PYTHON, "-c", SQUATTER, str(port), str(seconds)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)   # not in the app's process group
    return proc, proc.stdout.readline().strip()


def finish(proc: subprocess.Popen) -> str:
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out


@pytest.mark.slow
def test_llama_worker_port_cannot_be_taken_by_another_account(tmp_path):
    from tests.worker.test_supervisor import real_spec
    spec = real_spec(tmp_path)
    port = spec.extra["port"]
    assert "--port" not in spec.argv           # nothing published in advance to race for
    squatter, first = squat(port, seconds=30)
    sup = Supervisor(spec, log_path=tmp_path / "worker.log")
    try:
        sup.start()
        heard = finish(squatter)
        assert first.startswith("REFUSED"), f"another account listened on the engine's port: {first} {heard}"
        assert spec.api_key not in heard
        from app.worker.client import ChatClient
        reply = ChatClient(spec.base_url, spec.api_key, "smollm2").chat(
            [{"role": "user", "content": "Say hello."}], max_tokens=4)
        assert reply.completion_tokens > 0        # the worker itself answers on the handed-down socket
    finally:
        sup.stop()
        squatter.kill()
    assert spec.listen_socket.fileno() == -1      # our copy released with the worker


def test_engine_binding_its_own_port_gets_no_key_when_another_account_holds_it():
    # The fake engine binds its port after 2 s (as vLLM does after loading); the squatter has it first.
    spec = fake_spec("--silent-for", "2", check_listener=True, stall_timeout_s=20)
    squatter, first = squat(spec.extra["port"], seconds=20)
    assert first == "LISTENING"
    sup = Supervisor(spec)
    try:
        with pytest.raises(errors.StartError):
            sup.start()                            # the engine cannot bind: a start failure, not "ready"
    finally:
        sup.stop()
        squatter.kill()
    heard = finish(squatter)
    assert spec.api_key not in heard, heard


def test_engine_binding_its_own_port_starts_when_the_listener_is_its_own():
    spec = fake_spec("--silent-for", "1", check_listener=True)
    sup = Supervisor(spec)
    try:
        sup.start()
        assert ports.owned_listener(spec.extra["port"], sup.pid)
        assert not ports.owned_listener(spec.extra["port"], os.getpid())   # not our group's socket
    finally:
        sup.stop()


def test_a_listener_of_another_account_is_not_owned():
    port = ports.free_port()
    squatter, first = squat(port, seconds=5)
    try:
        assert first == "LISTENING"
        assert ports.listening_inodes(port)
        assert not ports.owned_listener(port, os.getpgid(0))   # the app's own group holds no such socket
    finally:
        squatter.kill()
        finish(squatter)


def test_bound_socket_keeps_the_port_from_another_account():
    sock = ports.bound_socket()
    try:
        squatter, first = squat(sock.getsockname()[1], seconds=1)
        finish(squatter)
        assert first.startswith("REFUSED"), first
    finally:
        sock.close()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))
