"""Render resources/icons/pagewise.svg to the PNG sizes desktops ask for (Qt's SVG renderer).
Run with the venv's Python: .venv/bin/python installers/render_icons.py"""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 - fonts need it
    svg = QSvgRenderer(str(ICONS / "pagewise.svg"))
    if not svg.isValid():
        print("pagewise.svg is not valid SVG", file=sys.stderr)
        return 1
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        svg.render(painter)
        painter.end()
        image.save(str(ICONS / f"pagewise-{size}.png"))
    # Windows' installer and exe want an .ico (several sizes in one file)
    ico = QImage(str(ICONS / "pagewise-256.png"))
    ico.save(str(ICONS / "pagewise.ico"))
    print(f"rendered {len(SIZES)} PNGs and pagewise.ico into {ICONS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
