"""Files at rest: the mode checks the data-at-rest tests share (0600 files in 0700 folders)."""
from __future__ import annotations

import stat
from pathlib import Path


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def loose(root: Path) -> list[str]:
    """Everything under root (root itself excluded) that is not 0600 / 0700."""
    out = []
    for path in sorted(root.rglob("*")):
        want = 0o700 if path.is_dir() else 0o600
        if mode(path) != want:
            out.append(f"{path.relative_to(root)} {oct(mode(path))}")
    return out

