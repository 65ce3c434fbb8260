"""Check every configured endpoint and credential before a run spends time or money.

A run that cannot reach its model should say so in seconds, not after the seeds were embedded, the sources
downloaded and every request retried for a minute. :func:`preflight` looks at each OpenAI-compatible
:class:`LLMConfig` a run will use:

* **credential**: a key is required where the host is known to need one (the OpenAI API, the Hugging Face router)
  or where ``api_key_env`` names a variable explicitly; a missing one fails without any network traffic;
* **endpoint**: one ``GET {base_url}/models`` with a short timeout (free on every server we know). A refused
  connection, an unknown host, a timeout, a 5xx answer or a 401/403 stops the run; any other answer (a server
  without ``/models`` answers 404) counts as reachable.

Local backends (``transformers``, ``vllm``) and replayed configurations (``cache_mode="replay"``, which send
nothing) are not probed. Each failure is an :class:`~evolvecoder_datasets.errors.LLMUnavailableError` whose
message is one line naming the role, the model and the URL; command-line entry points print it as one
``error:`` line.

Example:
    >>> from evolvecoder_datasets.llm import LLMConfig
    >>> from evolvecoder_datasets.llm.preflight import preflight
    >>> from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer
    >>> with ScriptedOpenAIServer(lambda body: "ok") as server:
    ...     preflight([("test writer", LLMConfig(model="m", base_url=server.base_url))])
    1
"""

from __future__ import annotations

import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable

from ..errors import ConfigError, LLMUnavailableError
from .config import HF_ROUTER_URL, LLMConfig

__all__ = ["KEY_REQUIRED_HOSTS", "PREFLIGHT_TIMEOUT_S", "check_credential", "check_gguf", "preflight",
           "probe_endpoint"]

#: Hosts that answer every request without a key with 401: a missing key is an error before any request.
KEY_REQUIRED_HOSTS = frozenset({"api.openai.com", urllib.parse.urlsplit(HF_ROUTER_URL).hostname or ""})
#: Seconds one probe may take, all included (name lookup, connect, answer).
PREFLIGHT_TIMEOUT_S = 5.0


def _describe(role: str, config: LLMConfig) -> str:
    try:
        model = config.resolved_model()
    except ConfigError:
        model = "(no model)"
    return f"{role} model {model!r} at {config.resolved_base_url()}"


def _key_variable(config: LLMConfig) -> str:
    if config.api_key_env:
        return config.api_key_env
    return "HF_TOKEN" if "router.huggingface.co" in config.resolved_base_url() else "OPENAI_API_KEY"


def check_credential(config: LLMConfig, *, role: str = "llm") -> None:
    """Fail when ``config`` needs an API key that the environment does not hold.

    A key is needed when ``api_key_env`` names a variable, or when the base URL's host is one of
    :data:`KEY_REQUIRED_HOSTS`; a local server (vLLM, a loopback test server) needs none.

    Args:
        config (`LLMConfig`): an ``openai``-backend configuration.
        role (`str`, defaults to ``"llm"``): what the model does in the run (named in the message).

    Raises:
        LLMUnavailableError: the key is missing.

    Example:
        >>> import os
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> os.environ.pop("ECD_EXAMPLE_KEY", None)
        >>> check_credential(LLMConfig(model="m", base_url="http://127.0.0.1:9/v1"))   # a local server: no key
        >>> check_credential(LLMConfig(model="m", api_key_env="ECD_EXAMPLE_KEY"), role="test writer")
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.LLMUnavailableError: test writer model 'm' at https://api.openai.com/v1: no API key (set ECD_EXAMPLE_KEY)
    """
    if config.resolved_api_key():
        return
    host = urllib.parse.urlsplit(config.resolved_base_url()).hostname or ""
    if config.api_key_env or host in KEY_REQUIRED_HOSTS:
        raise LLMUnavailableError(f"{_describe(role, config)}: no API key (set {_key_variable(config)})",
                                  url=config.resolved_base_url(), model=config.model)


def _probe(url: str, headers: dict[str, str], timeout_s: float) -> tuple[int | None, str]:
    """``(status, detail)`` of one GET; ``status`` is ``None`` when no HTTP answer came."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # as the aiohttp client: no env proxies
    request = urllib.request.Request(url, headers=headers, method="GET")
    try:
        with opener.open(request, timeout=timeout_s) as response:
            return int(response.status), ""
    except urllib.error.HTTPError as err:
        try:
            body = err.read(300).decode("utf-8", "replace")
        except OSError:
            body = ""
        return int(err.code), " ".join(body.split())[:200]
    except urllib.error.URLError as err:
        reason = err.reason
        return None, f"{type(reason).__name__}: {reason}" if isinstance(reason, BaseException) else str(reason)
    except (TimeoutError, OSError) as err:
        return None, f"{type(err).__name__}: {err}"


def probe_endpoint(config: LLMConfig, *, role: str = "llm", timeout_s: float = PREFLIGHT_TIMEOUT_S) -> None:
    """One ``GET {base_url}/models``; fail when the server cannot be reached, errs, or refuses the credential.

    Args:
        config (`LLMConfig`): an ``openai``-backend configuration.
        role (`str`, defaults to ``"llm"``): what the model does in the run (named in the message).
        timeout_s (`float`, defaults to :data:`PREFLIGHT_TIMEOUT_S`): the most the probe may take, all included.

    Raises:
        LLMUnavailableError: no answer (refused, unknown host, timeout), a 5xx answer, or 401/403.

    Example:
        >>> import socket
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> with socket.socket() as s:                      # a port nobody listens on
        ...     s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
        >>> probe_endpoint(LLMConfig(model="m", base_url=f"http://127.0.0.1:{port}/v1"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.LLMUnavailableError: llm model 'm' at http://127.0.0.1:.../v1: cannot connect (...)
    """
    base = config.resolved_base_url()
    headers = {"Accept": "application/json"}
    key = config.resolved_api_key()
    if key:
        headers["Authorization"] = f"Bearer {key}"
    outcome: list[tuple[int | None, str]] = []
    # a thread bounds the whole probe, name lookup included (urllib's timeout covers only the socket)
    worker = threading.Thread(target=lambda: outcome.append(_probe(base + "/models", headers, timeout_s)),
                              name="ecd-preflight", daemon=True)
    worker.start()
    worker.join(timeout_s + 0.5)
    status, detail = outcome[0] if outcome else (None, f"no answer within {timeout_s:g} s")
    what = _describe(role, config)
    if status is None:
        raise LLMUnavailableError(f"{what}: cannot connect ({detail})", url=base, model=config.model)
    if status in (401, 403):
        hint = f"check {_key_variable(config)}" if key else f"set {_key_variable(config)}"
        raise LLMUnavailableError(f"{what}: the server refused the credential (HTTP {status}; {hint})",
                                  url=base, model=config.model, status=status)
    if status >= 500:
        suffix = f": {detail}" if detail else ""
        raise LLMUnavailableError(f"{what}: the server answers HTTP {status}{suffix}", url=base,
                                  model=config.model, status=status)


def check_gguf(config: LLMConfig, *, role: str = "model") -> None:
    """Check, before anything slow, that a ``llamacpp`` model can load: ``xllamacpp`` is installed and the GGUF file
    exists (an embedded model is assembled from its parts and its sha256 checked here, once).

    Raises:
        MissingExtraError: ``xllamacpp`` or a part of the embedded model is not installed (the message says what to
            install).
        ConfigError: the file is missing or its digest differs from the pinned one.

    Example:
        >>> check_gguf(LLMConfig(backend="llamacpp", model="/no/such.gguf"))
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.ConfigError: model: llamacpp model '/no/such.gguf' is neither an embedded model ...
    """
    import importlib.util

    from ..errors import ConfigError, MissingExtraError
    from .llamacpp_backend import LlamaCpp

    try:
        LlamaCpp(config.replace(cache_dir=None)).model_path()
    except ConfigError as err:
        raise ConfigError(f"{role}: {err}") from err
    if importlib.util.find_spec("xllamacpp") is None:
        raise MissingExtraError("xllamacpp", "llamacpp", f"{role} (backend llamacpp)")


def preflight(endpoints: Iterable[tuple[str, LLMConfig]], *, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> int:
    """Check the credential and the endpoint of every ``(role, config)`` a run will use; returns how many were probed.

    Every credential is checked first (no network), then each distinct ``(base_url, key)`` is probed once.
    Configurations of the other local backends and replayed ones (``cache_mode="replay"``) are skipped; a
    ``llamacpp`` model is checked where it lives (:func:`check_gguf`).

    Args:
        endpoints (`Iterable[tuple[str, LLMConfig]]`): what each model does in the run, and its configuration.
        timeout_s (`float`, defaults to :data:`PREFLIGHT_TIMEOUT_S`): per probe.

    Returns:
        `int`: the number of endpoints probed.

    Raises:
        LLMUnavailableError: the first failing credential or endpoint.
        MissingExtraError, ConfigError: a ``llamacpp`` model that cannot load (:func:`check_gguf`).

    Example:
        >>> from evolvecoder_datasets.llm import LLMConfig
        >>> preflight([("pool", LLMConfig(backend="transformers"))])   # local: nothing to probe
        0
    """
    endpoints = list(endpoints)
    remote = [(role, cfg) for role, cfg in endpoints if cfg.backend == "openai" and cfg.cache_mode != "replay"]
    if os.environ.get("EVOLVECODER_SKIP_PREFLIGHT") == "1":
        return 0
    for role, cfg in endpoints:
        if cfg.backend == "llamacpp" and cfg.cache_mode != "replay":
            check_gguf(cfg, role=role)
    for role, cfg in remote:
        check_credential(cfg, role=role)
    seen: set[tuple[str, str | None]] = set()
    for role, cfg in remote:
        where = (cfg.resolved_base_url(), cfg.resolved_api_key())
        if where in seen:
            continue
        seen.add(where)
        probe_endpoint(cfg, role=role, timeout_s=timeout_s)
    return len(seen)
