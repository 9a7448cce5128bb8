"""Make tests/data/tokenizer_ids.json: llama.cpp's token ids (via llama-cpp-python) for a fixed
set of strings on the default GGUF. Run once with the cached venv:

    $(crates/spade-model/scripts/llama-cpp-venv.sh) crates/spade-model/scripts/make_tokenizer_fixture.py MODEL.gguf OUT.json
"""
import json
import sys

import llama_cpp

TEXTS = [
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "  leading and trailing spaces  ",
    "tabs\tand\nnewlines\n\n\ndone",
    "Numbers: 0 7 42 1234567890 3.14159 -12e5",
    "CamelCaseIdentifier snake_case_name kebab-case",
    "def step(self, action):\n    reward = 1.0 if action == 'up' else 0.0\n    return obs, reward, False, False, {}",
    "Ünïcödé: café, naïve, Straße, 漢字, русский, العربية, 🙂🚀",
    "<|im_start|>system\nYou are a helpful AI assistant.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "Mixed <|im_end|> special in text and <|endoftext|> too",
    "don't won't it's I'm you're we've they'll",
    "!!!??? ... --- *** ### $$$ %%% ^^^ &&& ((())) [[[]]] {{{}}}",
    "https://example.com/path?query=1&x=y#frag",
    "a",
    " ",
    "\n",
    "x" * 50 + " " + "ab" * 20,
    "Reward = clip(regret / 0.15, 0, 1); win-rate ∈ [0.4, 0.6]",
]


def main():
    model, out = sys.argv[1], sys.argv[2]
    llm = llama_cpp.Llama(model_path=model, vocab_only=True, verbose=False)
    cases = []
    for t in TEXTS:
        ids = llm.tokenize(t.encode("utf-8"), add_bos=False, special=True)
        cases.append({"text": t, "ids": ids})
    doc = {
        "made_with": f"llama-cpp-python {llama_cpp.__version__}, tokenize(add_bos=False, special=True)",
        "model": model.rsplit("/", 1)[-1],
        "cases": cases,
    }
    # One case per line: readable diffs.
    head = {k: v for k, v in doc.items() if k != "cases"}
    lines = [json.dumps(c, ensure_ascii=False) for c in cases]
    text = json.dumps(head, ensure_ascii=False)[:-1] + ', "cases": [\n' + ",\n".join(lines) + "\n]}\n"
    json.loads(text)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
