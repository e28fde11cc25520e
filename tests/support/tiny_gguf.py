"""A tiny GGUF file for the model tests: real format, made with llama.cpp's gguf package."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def write_tiny_gguf(path: Path) -> Path:
    """A small but complete llama GGUF (architecture, geometry, tokenizer, two tensors),
    written by llama.cpp's own gguf package."""
    import gguf as gguf_pkg
    w = gguf_pkg.GGUFWriter(str(path), "llama")
    w.add_name("tiny test model")
    w.add_context_length(256)
    w.add_block_count(1)
    w.add_head_count(2)
    w.add_head_count_kv(1)
    w.add_embedding_length(32)
    w.add_tokenizer_model("gpt2")
    w.add_token_list(["a", "b", "c"])
    w.add_tensor("token_embd.weight", np.ones((3, 32), dtype=np.float32))
    w.add_tensor("blk.0.attn_q.weight", np.ones((32, 32), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
