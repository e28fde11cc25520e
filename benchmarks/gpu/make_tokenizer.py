"""Write a word-level tokenizer whose vocabulary covers every id of the model's
embedding (152064 for Qwen2.5-7B), so any id a random-weight model samples
decodes to text.  (A smaller real tokenizer would leave ids it cannot decode:
vLLM may reject or log those per token, which would distort the timings.)
Plain JSON, no tokenizers library needed; loads with transformers'
PreTrainedTokenizerFast.

usage: python3 make_tokenizer.py OUT_DIR [VOCAB]
"""
import json
import os
import sys

out = sys.argv[1]
V = int(sys.argv[2]) if len(sys.argv) > 2 else 152064
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<unk>"]   # ids 0..3
vocab = {tok: i for i, tok in enumerate(SPECIAL)}
vocab.update({f"t{i}": i for i in range(len(SPECIAL), V)})
added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
          "normalized": False, "special": True} for i, t in enumerate(SPECIAL)]
tok = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
       "normalizer": None, "pre_tokenizer": {"type": "WhitespaceSplit"},
       "post_processor": None, "decoder": None,
       "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"}}
os.makedirs(out, exist_ok=True)
json.dump(tok, open(os.path.join(out, "tokenizer.json"), "w"))
json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<|im_start|>",
           "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "unk_token": "<unk>",
           "model_max_length": 131072, "add_bos_token": False},
          open(os.path.join(out, "tokenizer_config.json"), "w"), indent=1)
# A minimal ChatML template, so /v1/chat/completions also works.
open(os.path.join(out, "chat_template.jinja"), "w").write(
    "{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> {% endfor %}"
    "{% if add_generation_prompt %}<|im_start|> assistant {% endif %}")
print(f"TOKENIZER {out}: {V} ids (word-level)")
