"""A vLLM engine (offline `LLM`, dummy weights) driven by JSON lines on stdin, one answer line each on stdout, so that
tests, the gate and the bench start an engine once and run many scenarios through it.

    python vllm_engine.py --model-dir DIR [--layers 2 --hidden 256 ...] [--orbitkv-dir D] [--stats-file F]

Requests: {"op": "generate", "prompts": [[ids]], "max_tokens": n} -> {"outputs": [{"ids", "cached", "seconds"}]}
(each prompt its own generate call, timed); {"op": "reset"} drops vLLM's own prefix cache; {"op": "quit"}.
The model directory gets a LlamaForCausalLM config.json of the given shape when it has none.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def write_model(directory: str, layers: int, hidden: int, heads: int, kv_heads: int, intermediate: int,
                dtype: str, max_len: int) -> None:
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "config.json")
    if os.path.exists(path):
        return
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": hidden,
        "intermediate_size": intermediate, "num_hidden_layers": layers, "num_attention_heads": heads,
        "num_key_value_heads": kv_heads, "max_position_embeddings": max_len, "vocab_size": 32000,
        "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "torch_dtype": dtype, "hidden_act": "silu",
        "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
    }
    with open(path + ".tmp", "w", encoding="utf-8") as out:
        json.dump(config, out)
    os.replace(path + ".tmp", path)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--kv-heads", type=int, default=4)
    parser.add_argument("--intermediate", type=int, default=512)
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--max-len", type=int, default=4096)
    parser.add_argument("--orbitkv-dir", help="attach the OrbitKV connector to the Manager there")
    parser.add_argument("--stats-file")
    parser.add_argument("--extra", default="{}", help="more kv_connector_extra_config keys, as JSON")
    args = parser.parse_args()
    write_model(args.model_dir, args.layers, args.hidden, args.heads, args.kv_heads, args.intermediate, args.dtype,
                args.max_len)

    from vllm import LLM, SamplingParams

    kwargs = {}
    if args.orbitkv_dir:
        extra = {"dir": args.orbitkv_dir, **json.loads(args.extra)}
        if args.stats_file:
            extra["stats_file"] = args.stats_file
        kwargs["kv_transfer_config"] = {"kv_connector": "OrbitKVConnector", "kv_connector_module_path": "orbitkv.vllm",
                                        "kv_role": "kv_both", "kv_connector_extra_config": extra}
    llm = LLM(model=args.model_dir, load_format="dummy", skip_tokenizer_init=True, enforce_eager=True, seed=0,
              enable_prefix_caching=True, dtype=args.dtype, max_model_len=args.max_len, **kwargs)
    reply({"ready": True, "pid": os.getpid()})
    for line in sys.stdin:
        request = json.loads(line)
        op = request.get("op")
        if op == "quit":
            break
        if op == "reset":
            reply({"reset": bool(llm.reset_prefix_cache())})
            continue
        params = SamplingParams(temperature=0, max_tokens=int(request.get("max_tokens", 4)), detokenize=False)
        outputs = []
        for prompt in request["prompts"]:
            started = time.perf_counter()
            out = llm.generate([{"prompt_token_ids": prompt}], params, use_tqdm=False)[0]
            outputs.append({"ids": list(out.outputs[0].token_ids), "cached": out.num_cached_tokens or 0,
                            "seconds": time.perf_counter() - started})
        reply({"outputs": outputs})


def reply(answer: dict) -> None:
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
