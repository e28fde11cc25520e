"""Fault injection: an engine whose every chat request raises the error it was given (a server
error a step before the answer survives; a dead engine or a cancel it must not)."""
from __future__ import annotations


class FailingEngine:
    def __init__(self, error):
        self.error = error

    def chat(self, *args, **kwargs):
        raise self.error
