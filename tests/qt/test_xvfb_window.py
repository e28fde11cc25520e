"""The real app on a real X server: `python -m app gui FILE` with Qt's xcb platform plugin
(not offscreen) opens its window, draws the document, and quits cleanly on Ctrl+Q.

The offscreen Qt tests cannot see a missing xcb library ("no Qt platform plugin could be
initialized"); this one does. Xvfb, xdotool and ImageMagick come from scripts/setup.sh --test.
"""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.support import xvfb
from tests.support.cli import app_argv

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "samples" / "common-paper-mnda.pdf"


def _app_env(display: str, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QT_")}
    # ./run-tests sets QT_QPA_PLATFORM=offscreen for everything; this child needs the real one.
    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", PAGEWISE_HOME=str(home))
    return env


def test_real_window_opens_draws_and_quits_on_ctrl_q(tmp_path):
    xvfb.require_tools()
    with xvfb.xvfb() as display:
        log = (tmp_path / "app.log").open("w+")
        app = subprocess.Popen(app_argv("gui", str(SAMPLE)), cwd=ROOT,
                               env=_app_env(display, tmp_path / "home"), stdout=log, stderr=subprocess.STDOUT)
        try:
            window = xvfb.find_window(display, "^Pagewise", timeout_s=60, alive=lambda: app.poll() is None)
            output = lambda: (log.flush(), Path(log.name).read_text(errors="replace")[-2000:])[1]  # noqa: E731
            assert window, f"no Pagewise window (exit {app.poll()}):\n{output()}"
            # Blank (one colour) until Qt has drawn; the panels give > 100, the rendered page's text > 400.
            shot, colours, deadline = tmp_path / "screen.png", 0, time.monotonic() + 30
            while colours < 400 and time.monotonic() < deadline:
                time.sleep(0.5)
                colours = xvfb.screenshot(display, shot)
            assert colours >= 100, f"the screen stayed blank ({colours} colours): {shot}\n{output()}"
            started = time.monotonic()
            xvfb.press(display, window, "ctrl+q")
            code = app.wait(timeout=20)
            assert code == 0, f"exit status {code}:\n{output()}"
            assert time.monotonic() - started < 15
            assert "Could not load the Qt platform plugin" not in output()
        finally:
            if app.poll() is None:
                app.kill()
                app.wait()
            log.close()


def test_the_first_window_fits_a_small_screen(tmp_path):
    """No window manager shrinks it on Xvfb: the window's own first size must leave the status
    bar and the Ask button on a 1280×800 screen (its default is 1400×900)."""
    xvfb.require_tools()
    with xvfb.xvfb("1280x800x24") as display:
        app = subprocess.Popen(app_argv("gui", str(SAMPLE)), cwd=ROOT, env=_app_env(display, tmp_path / "home"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            window = xvfb.find_window(display, "^Pagewise", timeout_s=60, alive=lambda: app.poll() is None)
            assert window, f"no Pagewise window (exit {app.poll()})"
            width, height = xvfb.window_size(display, window)
            assert width <= 1280 and height <= 800, (width, height)
        finally:
            app.kill()
            app.wait()
