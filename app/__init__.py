"""Pagewise: private, offline question answering over PDF documents."""
import os

# numpy's OpenBLAS keeps its threads spinning after each call; the search's one matrix-vector
# product then took the two cores from the embedding engine's OpenMP threads that embed the
# next question (a search over 55,000 vectors: 158 → 123 ms). Set before numpy is imported;
# a value the user sets wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# Two OpenMP pools share the cores: the embedder's here and llama.cpp's in the worker (which
# imports this package first, and inherits the environment anyway). libgomp's default keeps
# a pool's idle threads spinning for a while after each parallel region, so each pool burnt
# the cores the other needed. Passive waiting puts idle threads to sleep at once. Set before
# either library loads (libgomp reads them once); a value the user sets wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("GOMP_SPINCOUNT", "0")

__version__ = "0.1.0"
