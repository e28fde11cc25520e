"""Two documents side by side keep the window's width on a 1280 px screen: the library panel,
folded away for them, no longer counts its minimum width."""
from __future__ import annotations

from tests.support.corpus import corpus_path


def test_side_by_side_keeps_the_width(qtbot, window):
    window.setGeometry(0, 0, 1280, 800)
    qtbot.wait(50)
    with qtbot.waitSignal(window.sig_documents_ready, timeout=60_000):
        window.open_files([str(corpus_path("contracts-en/common-paper-csa.pdf")),
                           str(corpus_path("contracts-en/common-paper-software-license.pdf"))], compare=True)
    qtbot.wait(300)
    assert window.width() == 1280 and window.minimumSizeHint().width() <= 1280
    window.side_by_side.show_library(True)       # the Library button: shown again beside the panes
    assert window.library_panel.isVisible()
    window.set_compare(False)
    assert window.library_panel.isVisible()
