"""scripts/setup.sh installs every system package Qt's xcb platform plugin links against.

The list comes from `ldd` of PySide6's libqxcb.so and libQt6XcbQpa.so.6: each X library they
resolve must belong to a package named in setup.sh's XCB_PKGS (or its base APT_PKGS), so a
fresh machine that ran set-up can open the window. Debian/Ubuntu only (dpkg answers "which
package owns this file").
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _setup_packages() -> set[str]:
    text = (ROOT / "scripts" / "setup.sh").read_text()
    names = set()
    for var in ("APT_PKGS", "XCB_PKGS"):
        match = re.search(rf'^{var}="([^"]*)"', text, re.M)
        assert match, f"{var} is not set in scripts/setup.sh"
        names |= set(match.group(1).split())
    return names


def _plugin_libraries() -> list[Path]:
    import PySide6
    qt = Path(PySide6.__file__).parent / "Qt"
    return [qt / "plugins" / "platforms" / "libqxcb.so", qt / "lib" / "libQt6XcbQpa.so.6"]


def test_setup_installs_what_ldd_says_the_xcb_plugin_needs():
    if not (shutil.which("ldd") and shutil.which("dpkg")):
        pytest.skip("needs ldd and dpkg (Debian/Ubuntu)")
    needed: dict[str, str] = {}
    for lib in _plugin_libraries():
        out = subprocess.run(["ldd", str(lib)], capture_output=True, text=True, check=True).stdout
        assert "not found" not in out, f"{lib.name} lacks libraries:\n{out}"
        for so in re.findall(r"=> (/\S+)", out):
            if "PySide6" in so or not re.search(r"/lib(xcb|X11|xkbcommon)", so):
                continue
            owner = subprocess.run(["dpkg", "-S", str(Path(so).resolve())], capture_output=True, text=True)
            if owner.returncode != 0:       # usrmerge: dpkg knows the /lib spelling
                owner = subprocess.run(["dpkg", "-S", so], capture_output=True, text=True)
            needed[owner.stdout.split(":")[0]] = so
    assert "libxcb-cursor0" in needed      # the one whose absence aborted the app on a fresh machine
    missing = {pkg: so for pkg, so in needed.items() if pkg not in _setup_packages()}
    assert not missing, f"scripts/setup.sh does not install: {missing}"
