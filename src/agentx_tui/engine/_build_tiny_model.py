"""Build the tiny random-weight test model (docs/vllm.md). Run with a Python that has vLLM installed
(it needs torch, transformers and tokenizers), never imported by agentx-tui itself:

    python _build_tiny_model.py OUT_DIR [SEED]

Llama architecture, hidden 128, 2 layers, 2 attention heads of size 64 (the CPU build rejects 16),
1 KV head, a 512-token byte-level BPE tokenizer trained on a fixed text, and a chat template.
Deterministic: the same seed gives the same weights and tokenizer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|{{ message['role'] }}|>\n{{ message['content'] }}<|end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

# Fixed training text: enough variety for a 512-token vocabulary; byte-level BPE covers any input.
CORPUS = [
    "The agent reads the repository, plans a change, calls a tool and reads the result.",
    "A tool result can be long: file listings, test output, search results and diffs.",
    "Prefix caching lets the server reuse the key and value blocks of a shared system prompt.",
    "Every step of the loop sends the whole conversation again, so the context grows.",
    "Throughput counts cached, prompt and generated tokens; latency counts seconds to first token.",
    "def main(): return sum(x * x for x in range(10)) # numbers 0123456789",
    "user assistant system tool function arguments result error warning info debug",
    "{ } [ ] ( ) < > = + - * / % ! ? : ; , . ' \" | & ^ ~ @ # $ _",
]


def build(out: Path, seed: int) -> None:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    torch.manual_seed(seed)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|begin|>", "<|end|>", "<|pad|>", "<|system|>", "<|user|>", "<|assistant|>", "<|tool|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=512,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|begin|>", eos_token="<|end|>", pad_token="<|pad|>"
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.model_max_length = 4096
    fast.save_pretrained(out)

    config = LlamaConfig(
        vocab_size=fast.vocab_size if len(fast) <= 512 else len(fast),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=64,
        max_position_embeddings=4096,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        tie_word_embeddings=True,
        torch_dtype="float32",
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(out, safe_serialization=True)
    (out / "agentx_tiny.json").write_text(json.dumps({"seed": seed, "kind": "agentx-tui tiny model"}))


if __name__ == "__main__":
    target = Path(sys.argv[1])
    build(target, int(sys.argv[2]) if len(sys.argv) > 2 else 0)
