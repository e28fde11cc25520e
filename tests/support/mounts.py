"""A folder made read-only to the app (to root too, through a private mount namespace where the
machine allows one): the storage-fault tests' one way to make a write fail for real."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _can_mount() -> bool:
    if not IS_ROOT or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "mount", "-t", "tmpfs", "tmpfs", "/mnt"], capture_output=True).returncode == 0


CAN_MOUNT = _can_mount()


def in_namespace(mounts: list[str], argv: list[str], **kw) -> subprocess.CompletedProcess:
    """Run argv after `mounts` (shell lines) in a private mount namespace: nothing outside sees them."""
    script = " && ".join([*mounts, 'exec "$@"'])
    return subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", *argv], capture_output=True, text=True, **kw)


def read_only(folder: Path, argv: list[str], **kw) -> subprocess.CompletedProcess:
    """argv run while `folder` cannot be written to (by root either)."""
    folder.mkdir(parents=True, exist_ok=True)
    if CAN_MOUNT:
        return in_namespace([f"mount --bind '{folder}' '{folder}'", f"mount -o remount,bind,ro '{folder}'"], argv, **kw)
    if IS_ROOT:
        pytest.skip("root without mount namespaces: cannot make a folder read-only to root")
    os.chmod(folder, 0o500)
    try:
        return subprocess.run(argv, capture_output=True, text=True, **kw)
    finally:
        os.chmod(folder, 0o700)

