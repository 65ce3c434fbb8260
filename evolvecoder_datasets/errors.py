"""Typed errors.

Every error raised on purpose by this library is an :class:`EvolveCoderError` and also subclasses the builtin
that describes its category, so callers can catch either the domain (``except EvolveCoderError``) or the
category (``except ValueError``).

Example:
    >>> from evolvecoder_datasets.errors import LLMResponseError
    >>> try:
    ...     raise LLMResponseError("no JSON object found", reason="no_json")
    ... except ValueError as err:
    ...     print(err.reason)
    no_json
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = [
    "EvolveCoderError",
    "ConfigError",
    "SchemaError",
    "MissingExtraError",
    "SandboxError",
    "SandboxUnavailable",
    "SandboxCrashed",
    "SandboxProtocolError",
    "SandboxUntrusted",
    "LLMError",
    "LLMRequestError",
    "LLMRateLimitError",
    "LLMUnavailableError",
    "LLMResponseError",
    "RevisionNotFoundError",
    "SourceFormatError",
    "LLMCacheMissError",
    "RoundStoreError",
    "RepositoryError",
    "EnvironmentBuildError",
    "DistributedError",
    "EmptyRunError",
    "exit_status",
]


class EvolveCoderError(Exception):
    """Base class of every error this library raises on purpose."""


class ConfigError(EvolveCoderError, ValueError):
    """A configuration value is unknown, of the wrong type, or out of range."""


class SchemaError(EvolveCoderError, ValueError):
    """A dataset lacks a column a stage reads, or a column has the wrong type."""


class MissingExtraError(EvolveCoderError, ImportError):
    """An optional dependency is needed; the message names the ``pip install`` that fixes it."""

    def __init__(self, package: str, extra: str, feature: str = "") -> None:
        self.package = package
        self.extra = extra
        what = f" for {feature}" if feature else ""
        super().__init__(
            f"{package!r} is required{what}. Install it with: pip install 'evolvecoder-datasets[{extra}]'"
        )


class SandboxError(EvolveCoderError, RuntimeError):
    """The execution sandbox could not do its job (not: a program failed its tests)."""


class SandboxUnavailable(SandboxError):
    """The requested isolation (bubblewrap, unshare) cannot run on this machine."""


class SandboxCrashed(SandboxError):
    """A fork server died or stopped answering; the job's cells are infrastructure failures."""


class SandboxProtocolError(SandboxCrashed):
    """A fork server said hello in another protocol version than its caller speaks (the package's files changed
    under a running process, or a server from another install answered). The message names both versions. It is a
    :class:`SandboxCrashed`: the server is ended, and a job it was to run gets infrastructure failures, never
    verdicts read in the wrong language."""


class SandboxUntrusted(SandboxError):
    """The execution service's runtime folder, a file in it, or the process answering on its socket is not provably
    this user's (another owner, a group or other permission bit, a symbolic link, a peer of another uid). Nothing
    was sent to it; the message names the path or the uid found and how to fix it."""


class LLMError(EvolveCoderError, RuntimeError):
    """Base class of LLM backend failures."""


class LLMRequestError(LLMError):
    """A request failed after all retries (HTTP error, timeout, disconnect)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class LLMRateLimitError(LLMRequestError):
    """The server kept answering 429 after all retries."""


class LLMUnavailableError(LLMRequestError):
    """A configured endpoint cannot serve the run: no credential, unreachable, refusing the key, or down.

    Raised by the preflight before a run's first slow or paid step, and by a pipeline that stops because every
    request of a batch failed; ``url`` and ``model`` name the endpoint.
    """

    def __init__(self, message: str, *, url: str = "", model: str | None = None, status: int | None = None) -> None:
        self.url = url
        self.model = model
        super().__init__(message, status=status)


class LLMResponseError(EvolveCoderError, ValueError):
    """A model answer could not be parsed; ``reason`` is a short code stages record as ``drop_reason``."""

    def __init__(self, message: str, *, reason: str = "unparseable") -> None:
        self.reason = reason
        super().__init__(message)


class RevisionNotFoundError(EvolveCoderError, LookupError):
    """A round revision (branch) does not exist in the store or on the Hub."""


class SourceFormatError(EvolveCoderError, ValueError):
    """A seed source row does not have the layout its adapter expects."""


class LLMCacheMissError(LLMError, LookupError):
    """A replayed run (``cache_mode="replay"``) asked for a request that the request cache does not hold."""


class RoundStoreError(EvolveCoderError, OSError):
    """A round store (a local git-backed folder or a Hub repository) could not be read or written."""


class RepositoryError(EvolveCoderError, ValueError):
    """A repository source (folder, sdist, wheel) cannot be opened, or holds no importable package."""


class EnvironmentBuildError(EvolveCoderError, RuntimeError):
    """A repository's execution environment (a virtualenv with the repository and pytest) could not be built."""


class DistributedError(EvolveCoderError, RuntimeError):
    """A distributed engine (Ray) could not finish: the cluster is unreachable, or a task kept failing on
    infrastructure (killed workers, lost nodes) after its retries. A program's own failure is never this error."""


class EmptyRunError(EvolveCoderError, RuntimeError):
    """A pipeline run has no problem left to work on; the message gives the drop reasons."""


def exit_status(action: Callable[[], int | None]) -> int:
    """Call ``action`` and turn the library's errors into the exit status every command-line entry point uses.

    A bad configuration (:class:`ConfigError`) gives 2 and any other library error (:class:`EvolveCoderError`)
    gives 1, each after one ``error:`` line on stderr; other exceptions propagate. Otherwise the status is what
    ``action`` returns (0 when it returns None).

    Args:
        action (`Callable[[], int | None]`): the work of the command, without arguments.

    Returns:
        `int`: the exit status.

    Example:
        >>> from evolvecoder_datasets.errors import ConfigError, exit_status
        >>> def bad():
        ...     raise ConfigError("rounds must be >= 1")
        >>> exit_status(bad), exit_status(lambda: None)
        (2, 0)
    """
    import sys

    try:
        status = action()
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except EvolveCoderError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0 if status is None else status

