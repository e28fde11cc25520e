"""The worker's loopback socket, proof of who listens on a port, and a random API key per launch.

Another local account can reach 127.0.0.1. A port picked and published (argv) before the child
binds it can be taken in between, and whoever listens then receives the key and the documents.
So our own worker gets a socket the app has already bound (passed as an inherited fd, never free
for a moment), and an engine that binds its own port (vLLM) is sent the key only once the
listening socket is found among its own process group's open files.
"""
from __future__ import annotations

import errno
import os
import secrets
import socket
from pathlib import Path

PORT_RACES = 5   # fresh ports tried when another program takes the one just picked (never a downgrade)
PASSES_SOCKETS = os.name == "posix"    # subprocess pass_fds; elsewhere the child binds a picked port
_LISTEN = "0A"                         # TCP_LISTEN in /proc/net/tcp's st column


def free_port(host: str = "127.0.0.1") -> int:
    """Ask the OS for a free port. Racy by nature (another process may take it before the
    child binds): only for engines that bind themselves, whose listener is checked (owned_listener)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def bound_socket(host: str = "127.0.0.1") -> socket.socket:
    """A loopback TCP socket bound to a fresh port and not yet listening (the child listens once its
    model is loaded, so a probe meanwhile is refused at once instead of queueing). No SO_REUSEADDR:
    with it, Linux would let another socket that also sets it bind the same port until we listen.
    The port is bound by its number (a random free one), not as port 0: Linux keeps a port bound by
    number after its listener is shut down (`refuse`), so a dead worker's port is refused at once
    and stays ours while the engine's client still names it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    low, high = _local_port_range()
    for _ in range(64):
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.bind((host, low + secrets.randbelow(high - low + 1)))
            return sock
        except OSError as exc:
            sock.close()
            if exc.errno not in (errno.EADDRINUSE, errno.EACCES):
                raise
    sock = socket.socket(family, socket.SOCK_STREAM)     # a crowded range: any port (released on shutdown)
    try:
        sock.bind((host, 0))
    except OSError:
        sock.close()
        raise
    return sock


def refuse(sock: socket.socket) -> None:
    """Stop listening on `sock` (its worker is gone) but keep its port: connections are refused at
    once, and no other program can bind the port until `sock` is closed."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:          # never listened (ENOTCONN) or closed: nothing queues on it either way
        pass


def _local_port_range() -> tuple[int, int]:
    try:
        low, high = (int(v) for v in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        if 1024 <= low < high <= 65535:
            return low, high
    except (OSError, ValueError):
        pass
    return 49152, 65535


def random_key() -> str:
    """Per-launch key, so other local users/programs cannot drive our engine."""
    return "pw-" + secrets.token_urlsafe(24)


# --- who listens on a port (Linux /proc) -----------------------------------------------------------
def listening_inodes(port: int) -> set[int]:
    """Socket inodes listening on `port` (IPv4 and IPv6), from /proc/net/tcp{,6}."""
    found: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text(encoding="ascii", errors="replace").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == _LISTEN and int(cols[1].rsplit(":", 1)[1], 16) == port:
                found.add(int(cols[9]))
    return found


def group_pids(pgid: int) -> list[int]:
    """Processes of process group `pgid` (the engine child runs in its own session: pgid = its pid)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()      # after "(comm)": state ppid pgrp ...
        if len(fields) > 2 and fields[2] == str(pgid):
            pids.append(int(entry.name))
    return pids


def owned_listener(port: int, pgid: int) -> bool:
    """True when every socket listening on `port` is an open file of a process in group `pgid`.
    False when nothing listens yet, when another program (another account) does, or when /proc
    cannot tell (then no key is sent: the start times out with a clear error rather than leak)."""
    wanted = {f"socket:[{inode}]" for inode in listening_inodes(port)}
    if not wanted:
        return False
    for pid in group_pids(pgid):
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                wanted.discard(os.readlink(fd))
            except OSError:
                continue
            if not wanted:
                return True
    return False


def can_check_listeners() -> bool:
    return Path("/proc/net/tcp").is_file()
