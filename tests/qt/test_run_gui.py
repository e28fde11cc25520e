"""`run_gui(..., screenshot=OUT)` as `pagewise gui --screenshot` calls it: renders, saves, exits."""
from __future__ import annotations

from PySide6.QtGui import QImage

from tests.support.corpus import corpus_path


def test_screenshot_of_a_document(qtbot, tmp_path):
    from app.qt.app import run_gui
    out = tmp_path / "window.png"
    assert run_gui([str(corpus_path("contracts-en/common-paper-mnda.pdf"))], screenshot=str(out)) == 0
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1440, 900)
    # The page is rendered: plenty of white page pixels and dark text pixels in the left half.
    colours = {image.pixelColor(x, y).lightness() // 64 for x in range(40, 700, 7) for y in range(120, 880, 7)}
    assert {0, 3} <= colours


def test_screenshot_exits_non_zero_when_the_file_cannot_be_opened(qtbot, tmp_path):
    from app.qt.app import run_gui
    out = tmp_path / "window.png"
    assert run_gui([str(corpus_path("bad/zero-bytes.pdf"))], screenshot=str(out)) == 1
    assert out.is_file()
