"""Pagewise: private, offline question answering over PDF documents."""

__version__ = "0.1.0"
