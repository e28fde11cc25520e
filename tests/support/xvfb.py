"""A real X server (Xvfb) and the X tools the window tests drive it with: find a window by
name (xdotool), photograph the screen (ImageMagick `import`), count its colours, send keys."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

from tests.support.strict import unavailable

TOOLS = {"Xvfb": "xvfb", "xdotool": "xdotool", "import": "imagemagick", "identify": "imagemagick"}


def require_tools() -> None:
    """Skip on a developer machine without them; fail under ./run-tests and CI (the test set-up
    installs them: scripts/setup.sh --test)."""
    missing = sorted({pkg for tool, pkg in TOOLS.items() if shutil.which(tool) is None})
    if not missing:
        return
    unavailable(f"the X test tools are missing (scripts/setup.sh --test: apt-get install {' '.join(missing)})")


@contextmanager
def xvfb(size: str = "1440x900x24"):
    """Start Xvfb on a display it picks itself (-displayfd: never one already in use); yields
    the DISPLAY string (":N"), stops the server afterwards."""
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write_fd), "-screen", "0", size, "-nolisten", "tcp"],
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as pipe:
            number = pipe.readline().strip()      # written once the server accepts clients
        if not number:
            raise RuntimeError(f"Xvfb did not start: {proc.stderr.read().decode(errors='replace')[-500:]}")
        yield f":{number}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _x(display: str, *argv: str, timeout: float = 10) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), env={**os.environ, "DISPLAY": display}, capture_output=True,
                          text=True, timeout=timeout)


def find_window(display: str, name: str, timeout_s: float, alive=lambda: True) -> str | None:
    """The id of the first visible window whose title matches `name`, or None after timeout_s
    (or as soon as `alive()` turns False: the app died)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and alive():
        found = _x(display, "xdotool", "search", "--onlyvisible", "--name", name).stdout.split()
        if found:
            return found[0]
        time.sleep(0.3)
    return None


def screenshot(display: str, out: Path) -> int:
    """Photograph the whole screen into `out`; returns its number of distinct colours."""
    done = _x(display, "import", "-window", "root", str(out), timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"import failed: {done.stderr.strip()[-300:]}")
    return int(subprocess.run(["identify", "-format", "%k", str(out)], capture_output=True, text=True,
                              check=True, timeout=30).stdout.strip())


def press(display: str, window: str, keys: str) -> None:
    """Give `window` the keyboard focus (no window manager runs on Xvfb) and type `keys`
    through XTEST, as a real keyboard would (synthetic events sent to a window are ignored by Qt)."""
    _x(display, "xdotool", "windowfocus", "--sync", window)
    _x(display, "xdotool", "key", "--clearmodifiers", keys)


def window_size(display: str, window: str) -> tuple[int, int]:
    """The window's width and height in pixels (xdotool getwindowgeometry --shell)."""
    out = _x(display, "xdotool", "getwindowgeometry", "--shell", window).stdout
    values = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return int(values["WIDTH"]), int(values["HEIGHT"])
