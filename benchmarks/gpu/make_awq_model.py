"""Build a random-weight AWQ (GEMM layout, 4-bit, group 128) checkpoint with
Qwen2.5-7B-Instruct's geometry (28 layers, hidden 3584, 28/4 heads, head 128,
intermediate 18944; --vocab 152064 gives the real model's embedding and lm_head
memory).  Output text from it is meaningless.  TOKENIZER_DIR's tokenizer files
are copied in (make_tokenizer.py writes one that covers every id).

usage: python3 make_awq_model.py OUT_DIR TOKENIZER_DIR [--layers N] [--vocab V]
"""
import json
import os
import shutil
import sys
import time

import torch
from safetensors.torch import save_file

out, tokdir = sys.argv[1], sys.argv[2]
L = int(sys.argv[sys.argv.index("--layers") + 1]) if "--layers" in sys.argv else 28
H, NH, KVH, HD, FFN, G = 3584, 28, 4, 128, 18944, 128
V = int(sys.argv[sys.argv.index("--vocab") + 1]) if "--vocab" in sys.argv else 49152
dev = "cuda" if torch.cuda.is_available() else "cpu"
gen = torch.Generator(device=dev).manual_seed(0)
t0 = time.time()
os.makedirs(out, exist_ok=True)


def awq(t, prefix, fin, fout):
    # AWQ GEMM layout: qweight int32 [in, out/8], qzeros int32 [in/G, out/8],
    # scales fp16 [in/G, out].  Random nibbles, all zero-points 8, scale chosen
    # so that each output has roughly unit variance for unit-variance input.
    qw = torch.randint(0, 256, (fin * fout // 2,), dtype=torch.uint8, device=dev, generator=gen)
    t[prefix + ".qweight"] = qw.view(torch.int32).view(fin, fout // 8).cpu()
    t[prefix + ".qzeros"] = torch.full((fin // G, fout // 8), 0x88888888 - 2**32, dtype=torch.int32)
    t[prefix + ".scales"] = torch.full((fin // G, fout), 0.5 / (4.6 * fin ** 0.5), dtype=torch.float16)


def f16(*shape, std=0.02):
    return (torch.randn(*shape, device=dev, generator=gen) * std).half().cpu()


t = {}
t["model.embed_tokens.weight"] = f16(V, H)
t["lm_head.weight"] = f16(V, H, std=H ** -0.5)
t["model.norm.weight"] = torch.ones(H, dtype=torch.float16)
for i in range(L):
    p = f"model.layers.{i}"
    t[p + ".input_layernorm.weight"] = torch.ones(H, dtype=torch.float16)
    t[p + ".post_attention_layernorm.weight"] = torch.ones(H, dtype=torch.float16)
    for name, fo in (("q_proj", NH * HD), ("k_proj", KVH * HD), ("v_proj", KVH * HD)):
        awq(t, f"{p}.self_attn.{name}", H, fo)
        t[f"{p}.self_attn.{name}.bias"] = torch.zeros(fo, dtype=torch.float16)
    awq(t, f"{p}.self_attn.o_proj", NH * HD, H)
    awq(t, f"{p}.mlp.gate_proj", H, FFN)
    awq(t, f"{p}.mlp.up_proj", H, FFN)
    awq(t, f"{p}.mlp.down_proj", FFN, H)
save_file(t, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
nbytes = sum(x.numel() * x.element_size() for x in t.values())

cfg = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
    "hidden_size": H, "intermediate_size": FFN, "num_hidden_layers": L,
    "num_attention_heads": NH, "num_key_value_heads": KVH, "hidden_act": "silu",
    "max_position_embeddings": 32768, "rms_norm_eps": 1e-6,
    "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
    "use_sliding_window": False, "sliding_window": None, "max_window_layers": L,
    "tie_word_embeddings": False, "vocab_size": V,
    "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2,
    "attention_dropout": 0.0, "initializer_range": 0.02, "use_cache": True,
    "dtype": "float16",
    "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128,
                            "zero_point": True, "version": "gemm"},
}
json.dump(cfg, open(os.path.join(out, "config.json"), "w"), indent=1)
json.dump({"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2},
          open(os.path.join(out, "generation_config.json"), "w"))
for f in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
    if os.path.exists(os.path.join(tokdir, f)):
        shutil.copy(os.path.join(tokdir, f), out)
print(f"MODEL {out}: {len(t)} tensors, {nbytes/2**30:.2f} GiB, built in {time.time()-t0:.1f} s")
