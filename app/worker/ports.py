"""A free loopback port and a random API key for each launch."""
from __future__ import annotations

import secrets
import socket

PORT_RACES = 5   # fresh ports tried when another program takes the one just picked (never a downgrade)


def free_port(host: str = "127.0.0.1") -> int:
    """Ask the OS for a free port. Racy by nature (another process may take it before the
    child binds); the child then fails with 'address in use', which the supervisor reports."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def random_key() -> str:
    """Per-launch key, so other local users/programs cannot drive our engine."""
    return "pw-" + secrets.token_urlsafe(24)
