"""The transformers backend with a tiny random Llama (fast) and with the embedded SmolLM2 (slow)."""

from __future__ import annotations

import ast

import pytest

from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)


@pytest.fixture(scope="module")
def tiny_llama_dir(tmp_path_factory):
    """A 2-layer random Llama with a word-level tokenizer and a chat template, saved like a Hub checkpoint."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    words = "def return assert if else for in range print x y n f ( ) : = + - * 1 2 3 0 hello world write a function".split()
    special = ["<unk>", "<pad>", "<|end|>", "<|user|>", "<|assistant|>", "<|system|>"]
    vocab = {w: i for i, w in enumerate(special + words)}
    backend = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    backend.decoder = tokenizers.decoders.WordPiece(prefix="##")
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="<unk>", pad_token="<pad>", eos_token="<|end|>"
    )
    tok.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=128, eos_token_id=vocab["<|end|>"],
        pad_token_id=vocab["<pad>"], bos_token_id=None,
    )
    model = transformers.LlamaForCausalLM(config)
    path = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def test_tiny_llama_answers_every_request_in_order_with_token_counts(tiny_llama_dir, tmp_path):
    cfg = LLMConfig(backend="transformers", model=tiny_llama_dir, device="cpu", batch_size=3, cache_dir=str(tmp_path))
    requests = [ChatRequest(f"write a function {'x ' * i}", max_tokens=6) for i in range(5)]
    with make_backend(cfg) as llm:
        out = llm.generate(requests)
        again = llm.generate(requests)
    assert len(out) == 5
    for completion in out:
        assert completion.prompt_tokens > 0 and 0 < completion.completion_tokens <= 6
        assert completion.finish_reasons[0] in ("stop", "length")
    assert [c.text for c in again] == [c.text for c in out] and all(c.cached for c in again)


def test_greedy_generation_is_batch_independent(tiny_llama_dir):
    cfg = LLMConfig(backend="transformers", model=tiny_llama_dir, device="cpu", batch_size=4)
    prompts = [ChatRequest(f"hello {'world ' * i}", max_tokens=5) for i in range(4)]
    with make_backend(cfg) as llm:
        batched = llm.generate(prompts)
        alone = [llm.generate([p])[0] for p in prompts]
    assert [c.texts for c in batched] == [c.texts for c in alone]


def test_n_samples_with_a_seed_are_reproducible(tiny_llama_dir):
    cfg = LLMConfig(backend="transformers", model=tiny_llama_dir, device="cpu", batch_size=4)
    request = ChatRequest("write a function", n=3, temperature=1.0, seed=5, max_tokens=8)
    with make_backend(cfg) as llm:
        first, second = llm.generate([request])[0], llm.generate([request.__class__(request.messages, n=3,
                                                     temperature=1.0, seed=5, max_tokens=8)])[0]
    assert len(first.texts) == 3 and first.texts == second.texts


def test_several_prompts_with_several_samples_and_different_seeds_share_a_batch(tiny_llama_dir):
    # Stages send one request per problem, each with its own seed and n samples: they must batch together and
    # every prompt must get its own n answers and its own prompt-token count.
    cfg = LLMConfig(backend="transformers", model=tiny_llama_dir, device="cpu", batch_size=8, cache_mode="off")
    requests = [ChatRequest(f"task {'x ' * (3 * i)}", n=2, temperature=1.0, seed=100 + i, max_tokens=6)
                for i in range(3)]  # fmt: skip
    with make_backend(cfg) as llm:
        out = llm.generate(requests)
    assert [len(c.texts) for c in out] == [2, 2, 2]
    assert out[0].prompt_tokens < out[1].prompt_tokens < out[2].prompt_tokens


@pytest.mark.slow
def test_smollm2_writes_something_that_parses_as_python(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOLVECODER_CACHE", str(tmp_path / "models"))
    cfg = LLMConfig(backend="transformers", device="cpu", batch_size=2)
    requests = [
        ChatRequest("Write a Python function is_even(n) that returns True when n is even. Only code.", max_tokens=64),
        ChatRequest("Write a Python function add(a, b) that returns a + b. Only code.", max_tokens=64),
    ]
    with make_backend(cfg) as llm:
        out = llm.generate(requests)
    from evolvecoder_datasets.prompts.parsing import strip_fences

    assert all(c.text.strip() for c in out)
    parsed = []
    for completion in out:
        try:
            ast.parse(strip_fences(completion.text))
            parsed.append(True)
        except SyntaxError:
            parsed.append(False)
    assert any(parsed)


@pytest.mark.slow
def test_the_demo_default_converts_smollm2_without_a_library_bar_and_verbose_keeps_it(tmp_path):
    """A first run on a fresh machine converts the GGUF weights: in a fresh process with the demo's quiet bars,
    transformers' GGUF reader (a plain tqdm its own switch does not reach) prints no bar; with the bars on, it does."""
    import os
    import subprocess
    import sys

    script = ("import sys\n"
              "from evolvecoder_datasets.demo import quiet_progress_bars\n"
              "from evolvecoder_datasets.llm.transformers_backend import smollm2_path\n"
              "if sys.argv[2] == 'quiet':\n"
              "    quiet_progress_bars()\n"
              "print(smollm2_path(sys.argv[1]))\n")  # fmt: skip
    env = {**os.environ, "TQDM_MININTERVAL": "0"}
    for kind, shown in (("quiet", False), ("verbose", True)):
        proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / kind), kind], capture_output=True,
                              text=True, timeout=600, env=env)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert os.path.exists(os.path.join(proc.stdout.strip(), "config.json"))
        assert ("de-quantizing GGUF" in proc.stderr) is shown, (kind, proc.stderr[-2000:])
