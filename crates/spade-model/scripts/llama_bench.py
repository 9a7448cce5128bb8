"""Single-stream llama.cpp figures (via llama-cpp-python) for the bench: prefill tok/s of a
given prompt and decode tok/s of N greedy tokens, at a thread count. Prints one JSON object.

    python llama_bench.py MODEL.gguf THREADS PROMPT_IDS.json DECODE_TOKENS
"""
import json
import sys
import time

import llama_cpp
import llama_cpp.llama
import numpy as np

# llama.cpp's extra buffer types (AMX tiles, weight repacking) segfault in this sandbox on
# AMX-capable CPUs (the kernel/sandbox refuses the AMX tile state): run without them.
_default_params = llama_cpp.llama_model_default_params


def _params_without_extra_bufts():
    p = _default_params()
    p.use_extra_bufts = False
    return p


llama_cpp.llama_model_default_params = _params_without_extra_bufts
llama_cpp.llama.llama_cpp.llama_model_default_params = _params_without_extra_bufts


def main():
    model, threads, prompt_path, n_decode = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    prompt = json.load(open(prompt_path))
    llm = llama_cpp.Llama(
        model_path=model,
        n_ctx=2048,
        n_batch=512,
        n_ubatch=512,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
    )
    # Warm-up.
    llm.reset()
    llm.eval(prompt[:16])
    res = {}
    best_prefill = None
    for _ in range(2):
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(prompt)
        dt = time.perf_counter() - t0
        best_prefill = dt if best_prefill is None else min(best_prefill, dt)
    res["prefill_tok_s"] = len(prompt) / best_prefill
    # Decode after a short prompt, greedy.
    llm.reset()
    llm.eval(prompt[:32])
    t0 = time.perf_counter()
    for _ in range(n_decode):
        logits = llm.scores[llm.n_tokens - 1]
        tok = int(np.argmax(logits))
        llm.eval([tok])
    dt = time.perf_counter() - t0
    res["decode_tok_s"] = n_decode / dt
    res["threads"] = threads
    res["llama_cpp_python"] = llama_cpp.__version__
    res["note"] = "Q4_1 GGUF as shipped; use_extra_bufts=False (AMX/repack off: they crash here)"
    print(json.dumps(res))


if __name__ == "__main__":
    main()
