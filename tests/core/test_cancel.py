"""A Stop reaches the request it is linked to at once, with no thread polling the two."""
from __future__ import annotations

import threading

from app.core.cancel import Cancel


def test_set_reaches_every_linked_event_and_an_unlinked_one_no_more():
    stop, request, other = Cancel(), threading.Event(), threading.Event()
    unlink = stop.link(request)
    stop.link(other)()                   # linked and unlinked at once: left alone
    stop.set()
    assert stop.is_set() and request.is_set() and not other.is_set()
    unlink()


def test_linking_to_a_stop_already_set_sets_the_event_at_once():
    stop = Cancel()
    stop.set()
    late = threading.Event()
    stop.link(late)
    assert late.is_set()


def test_a_stop_from_another_thread_wakes_the_waiter():
    stop, request = Cancel(), threading.Event()
    stop.link(request)
    threading.Timer(0.05, stop.set).start()
    assert request.wait(5)
