"""Write a random-weight GGUF with a real model's geometry, for llama.cpp memory and speed figures.

Default: Qwen2.5-7B-Instruct's shapes (28 layers, hidden 3584, 28/4 heads of 128, feed-forward
18944, vocab 152064, untied output) in Q4_1 throughout: 4.76 GB, against the 4.68 GB of the real
Q4_K_M the catalogue names (qwen2.5-7b-instruct-q4_k_m), so what it needs on the GPU is a real
7B's (a little more, not less). Architecture `llama` (Qwen2's q/k/v biases are a few MB); the
tokenizer and chat template are the embedded SmolLM2's, its vocabulary padded with unused tokens
to the geometry's size, so llama.cpp loads it like any model. Its text is noise.

Weights are random 4-bit codes with one scale that keeps activations bounded; blocks are shared
between layers (memory and speed do not depend on the values).

usage: python3 make_gguf_geometry.py OUT.gguf --tokenizer-from SMOLLM2.gguf [--layers 28 --hidden 3584
       --heads 28 --kv-heads 4 --ffn 18944 --vocab 152064 --context 32768]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

QK = 32                 # Q4_1: 32 weights per block: f16 scale d, f16 minimum m, 16 bytes of nibbles
BLOCK_BYTES = 20


def q4_1_rows(rows: int, cols: int, rng, d: float) -> np.ndarray:
    """rows × cols weights as Q4_1 bytes (rows × cols/32 × 20), values d·q − 7.5·d (mean 0)."""
    assert cols % QK == 0, cols
    blocks = rng.integers(0, 256, size=(rows, cols // QK, BLOCK_BYTES), dtype=np.uint8)
    head = np.array([d, -7.5 * d], dtype=np.float16).view(np.uint8)
    blocks[:, :, :4] = head
    return blocks.reshape(rows, -1)


def main() -> None:
    import gguf

    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tokenizer-from", required=True, help="a GGUF whose gpt2 tokenizer to copy")
    ap.add_argument("--layers", type=int, default=28)
    ap.add_argument("--hidden", type=int, default=3584)
    ap.add_argument("--heads", type=int, default=28)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=18944)
    ap.add_argument("--vocab", type=int, default=152064)
    ap.add_argument("--context", type=int, default=32768)
    ap.add_argument("--name", default="random Qwen2.5-7B geometry")
    a = ap.parse_args()
    t0 = time.time()
    src = gguf.GGUFReader(a.tokenizer_from)

    def field(key):
        return src.fields[key].contents()

    tokens = list(field("tokenizer.ggml.tokens"))
    types = list(field("tokenizer.ggml.token_type"))
    extra = a.vocab - len(tokens)
    tokens += [f"<unused_{i}>" for i in range(extra)]
    types += [int(gguf.TokenType.UNUSED)] * extra

    head_dim = a.hidden // a.heads
    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name(a.name)
    w.add_block_count(a.layers)
    w.add_context_length(a.context)
    w.add_embedding_length(a.hidden)
    w.add_feed_forward_length(a.ffn)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.kv_heads)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(1_000_000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_vocab_size(a.vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_1)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(field("tokenizer.ggml.pre"))
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(list(field("tokenizer.ggml.merges")))
    for key, add in (("bos_token_id", w.add_bos_token_id), ("eos_token_id", w.add_eos_token_id),
                     ("unknown_token_id", w.add_unk_token_id), ("padding_token_id", w.add_pad_token_id)):
        add(int(field(f"tokenizer.ggml.{key}")))
    w.add_add_bos_token(False)
    w.add_chat_template(field("tokenizer.chat_template"))

    rng = np.random.default_rng(0)
    q4 = gguf.GGMLQuantizationType.Q4_1
    kv = a.kv_heads * head_dim
    # one random block matrix per shape, shared by every layer (rows = output features)
    shapes = {"attn_q": (a.hidden, a.hidden), "attn_k": (kv, a.hidden), "attn_v": (kv, a.hidden),
              "attn_output": (a.hidden, a.hidden), "ffn_gate": (a.ffn, a.hidden), "ffn_up": (a.ffn, a.hidden),
              "ffn_down": (a.hidden, a.ffn)}
    mats = {k: q4_1_rows(r, c, rng, 0.6 / (c ** 0.5) / 4.6) for k, (r, c) in shapes.items()}
    norm = np.ones(a.hidden, dtype=np.float32)
    w.add_tensor("token_embd.weight", q4_1_rows(a.vocab, a.hidden, rng, 0.02), raw_dtype=q4)
    for i in range(a.layers):
        w.add_tensor(f"blk.{i}.attn_norm.weight", norm)
        w.add_tensor(f"blk.{i}.ffn_norm.weight", norm)
        for k, m in mats.items():
            w.add_tensor(f"blk.{i}.{k}.weight", m, raw_dtype=q4)
    w.add_tensor("output_norm.weight", norm)
    w.add_tensor("output.weight", q4_1_rows(a.vocab, a.hidden, rng, 0.6 / (a.hidden ** 0.5) / 4.6), raw_dtype=q4)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    import os
    print(f"wrote {a.out}: {os.path.getsize(a.out) / 1e9:.2f} GB, {a.layers} layers, hidden {a.hidden}, "
          f"vocab {a.vocab}, in {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
