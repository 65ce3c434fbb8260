"""What the reward service reads: request bodies checked field by field and turned into a reward's columns.

Two request shapes reach the same reward:

- **ours** (``POST /score``): ``{"completions": [...], "tests": [...]}``, or ``"ids"`` naming rows of the revision
  the service loaded instead of ``"tests"``; optional ``"time_limit_s"`` (one per completion), ``"kind"``
  (``"binary"`` or ``"pass_rate"``) and ``"details"`` (answer each completion's outcome too);
- **OpenRLHF's remote reward** (``POST /openrlhf``): ``{"query": [...], "prompts": [...], "labels": [...]}``, where a
  query is the decoded prompt and response (special tokens left in) and a label is a row id, a list of asserts, or
  a JSON text of either (or of ``{"tests": [...], "time_limit_s": ...}``).

A request that does not fit is a :class:`~evolvecoder_datasets.errors.SchemaError` (the service answers 400)
raised before anything runs, so it changes nothing; a text over the cap of 1 MiB of characters (a completion, a
message's content, a test, a stdin input or answer, a checker, a query, a prompt, a label) is its subclass
:class:`TextTooLarge` (413).

Example:
    >>> from evolvecoder_datasets.integrations.protocol import parse_score_request
    >>> batch = parse_score_request({"completions": ["x = 1"], "tests": [["assert x == 1"]]})
    >>> batch.completions, batch.columns["tests"]
    (['x = 1'], [['assert x == 1']])
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import schema
from ..errors import SchemaError
from ..rewards.config import KINDS
from ..schema import TIME_LIMIT

__all__ = ["END_OF_TURN", "MAX_TEXT", "Batch", "TextTooLarge", "completion_from_query", "parse_openrlhf_request",
           "parse_score_request"]

#: End-of-turn and end-of-text tokens a decoded query may end with (ChatML, Llama 3, Gemma, Phi, SentencePiece).
END_OF_TURN = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "<|end|>", "<end_of_turn>",
               "<eos>", "</s>", "<|eos|>", "<|return|>")  # fmt: skip
#: Where an assistant turn starts, for a query whose prompt is not its prefix.
_ASSISTANT_MARKERS = ("<|im_start|>assistant\n", "<|start_header_id|>assistant<|end_header_id|>\n\n",
                      "<start_of_turn>model\n", "<|assistant|>\n", "<|assistant|>")  # fmt: skip
#: The most characters of one text in a request: a completion, a message's content, a test, a stdin input or answer,
#: a checker's source, a query, a prompt, a label.
MAX_TEXT = 1 << 20


class TextTooLarge(SchemaError):
    """A text of a request is over :data:`MAX_TEXT` characters (the service answers 413; nothing has run)."""


@dataclass
class Batch:
    """One request's completions and the reward columns for them (one value per completion)."""

    completions: list[Any]
    columns: dict[str, list] = field(default_factory=dict)
    kind: str | None = None
    details: bool = False


def _fail(message: str) -> SchemaError:
    return SchemaError(message)


def _text(value: str, where: str) -> str:
    if len(value) > MAX_TEXT:
        raise TextTooLarge(f"{where} has {len(value)} characters; this service takes at most {MAX_TEXT} per text")
    return value


def _texts_in(content: Any, where: str) -> None:
    """Every string in a message's content (a string, or a list of parts whose strings are checked)."""
    if isinstance(content, str):
        _text(content, where)
    elif isinstance(content, list):
        for i, part in enumerate(content):
            for key, text in (part.items() if isinstance(part, dict) else [("", part)]):
                if isinstance(text, str):
                    _text(text, f"{where}[{i}]{'.' + key if key else ''}")


def _completion(value: Any, where: str) -> Any:
    """A string, or a conversation (a list of ``{"role", "content"}`` messages) whose last assistant turn answers.

    Besides each string in it, the program the reward reads out of a conversation is capped: the text
    :func:`~evolvecoder_datasets.chat.completion_text` gives (several parts joined, or a bare list of parts, which
    holds no ``content`` to check)."""
    from ..chat import completion_text

    if isinstance(value, str):
        return _text(value, where)
    if isinstance(value, list) and all(isinstance(m, dict) and isinstance(m.get("content", ""), (str, list))
                                       for m in value):  # fmt: skip
        for i, message in enumerate(value):
            _texts_in(message.get("content", ""), f"{where}[{i}].content")
            _texts_in(message.get("text"), f"{where}[{i}].text")
        _text(completion_text(value), f"{where} (the answer's text)")
        return value
    raise _fail(f"{where} must be a string or a list of messages, got {type(value).__name__}")


_STDIO_KEYS = {"inputs", "outputs", "checker", "language", "float_tol"}


def _tests_value(value: Any, where: str) -> Any:
    """A row's tests: a list of assert strings, or stdin/stdout cases (``{"inputs": [...], "outputs": [...]}``, with
    optional ``checker`` (``{source, language, contract}``), ``language`` and ``float_tol``)."""
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return [_text(t, f"{where}[{i}]") for i, t in enumerate(value)]
    if isinstance(value, dict) and set(value) <= _STDIO_KEYS and {"inputs", "outputs"} <= set(value):
        ins, outs = value["inputs"], value["outputs"]
        if (isinstance(ins, list) and isinstance(outs, list) and len(ins) == len(outs)
                and all(isinstance(x, str) for x in ins + outs)):  # fmt: skip
            for name, texts in (("inputs", ins), ("outputs", outs)):
                for i, text in enumerate(texts):
                    _text(text, f"{where}.{name}[{i}]")
            return {"inputs": ins, "outputs": outs, **_stdio_options(value, where)}
    raise _fail(f"{where} must be a list of assert strings or {{'inputs': [...], 'outputs': [...]}} of strings")


def _stdio_options(value: dict, where: str) -> dict:
    """The checked ``checker``, ``language`` and ``float_tol`` of stdin/stdout cases (those present)."""
    from ..errors import ConfigError
    from ..execution.checkers import Checker
    from ..execution.languages import language

    out: dict[str, Any] = {}
    checker = value.get("checker")
    if checker is not None:
        fields = ("source", "language", "contract")
        if not (isinstance(checker, dict) and set(checker) <= set(fields) and isinstance(checker.get("source"), str)
                and all(isinstance(checker.get(k, ""), str) for k in fields)):
            raise _fail(f"{where}.checker must be {{'source', 'language', 'contract'}} of strings")  # fmt: skip
        for key in fields:
            _text(checker.get(key, ""), f"{where}.checker.{key}")
        try:
            out["checker"] = dict(zip(fields, Checker.from_value(checker).as_tuple()))
        except ConfigError as err:
            raise _fail(f"{where}.checker: {err}") from None
    if value.get("language") is not None:
        try:
            out["language"] = language(value["language"]).name
        except ConfigError as err:
            raise _fail(f"{where}.language: {err}") from None
    tol = value.get("float_tol")
    if tol is not None:
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not math.isfinite(tol) or tol <= 0:
            raise _fail(f"{where}.float_tol must be a positive number or null, got {tol!r}")
        out["float_tol"] = float(tol)
    return out


def _limit(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise _fail(f"{where} must be a positive number of seconds or null, got {value!r}")
    return float(value)


def _kind(body: Mapping) -> str | None:
    kind = body.get("kind")
    if kind is not None and kind not in KINDS:
        raise _fail(f"kind must be one of {KINDS}, got {kind!r}")
    return kind


def _list_field(body: Mapping, name: str, n: int | None) -> list:
    value = body.get(name)
    if not isinstance(value, list):
        raise _fail(f"{name!r} must be a list, got {type(value).__name__}")
    if n is not None and len(value) != n:
        raise _fail(f"{name!r} has {len(value)} values for {n} completions")
    return value


def _row(rows: Mapping[str, Mapping] | None, row_id: Any, where: str) -> Mapping:
    if rows is None:
        raise _fail(f"{where} names a row id, but this service loaded no dataset (serve --dataset REPO@REV)")
    if not isinstance(row_id, str) or row_id not in rows:
        raise _fail(f"{where}: no row with id {str(row_id)[:80]!r} in the loaded revision")
    return rows[row_id]


def _columns(entries: list[tuple[Any, float | None]]) -> dict[str, list]:
    columns: dict[str, list] = {schema.TESTS: [tests for tests, _ in entries]}
    if any(limit is not None for _, limit in entries):
        columns[TIME_LIMIT] = [limit for _, limit in entries]
    return columns


def _check_size(n: int, max_completions: int) -> None:
    if n == 0:
        raise _fail("the request has no completions")
    if n > max_completions:
        raise _fail(f"the request has {n} completions; this service takes at most {max_completions} per request")


def parse_score_request(body: Any, *, rows: Mapping[str, Mapping] | None = None,
                        max_completions: int = 4096) -> Batch:  # fmt: skip
    """Check a ``POST /score`` body and turn it into a :class:`Batch`.

    Args:
        body: the decoded JSON body.
        rows (`Mapping[str, Mapping]`, *optional*): the loaded revision's rows by id (``tests``, ``time_limit_s``).
        max_completions (`int`, defaults to 4096): the most completions one request may carry.

    Raises:
        SchemaError: the body does not fit (nothing has run).

    Example:
        >>> rows = {"HumanEval_0": {"tests": ["assert f() == 1"], "time_limit_s": 0.2}}
        >>> parse_score_request({"completions": ["def f(): return 1"], "ids": ["HumanEval_0"]}, rows=rows).columns
        {'tests': [['assert f() == 1']], 'time_limit_s': [0.2]}
    """
    if not isinstance(body, dict):
        raise _fail(f"the body must be a JSON object, got {type(body).__name__}")
    unknown = sorted(set(body) - {"completions", "tests", "ids", "time_limit_s", "kind", "details", "prompts"})
    if unknown:
        raise _fail(f"unknown fields {unknown}")
    completions = _list_field(body, "completions", None)
    n = len(completions)
    _check_size(n, max_completions)
    completions = [_completion(c, f"completions[{i}]") for i, c in enumerate(completions)]
    if ("tests" in body) == ("ids" in body):
        raise _fail("give either 'tests' (one list per completion) or 'ids' (rows of the loaded revision)")
    limits = _list_field(body, "time_limit_s", n) if "time_limit_s" in body else [None] * n
    entries = []
    if "tests" in body:
        for i, (tests, limit) in enumerate(zip(_list_field(body, "tests", n), limits)):
            entries.append((_tests_value(tests, f"tests[{i}]"), _limit(limit, f"time_limit_s[{i}]")))
    else:
        for i, (row_id, limit) in enumerate(zip(_list_field(body, "ids", n), limits)):
            row = _row(rows, row_id, f"ids[{i}]")
            stored = limit if "time_limit_s" in body else row.get(TIME_LIMIT)
            entries.append((row[schema.TESTS], _limit(stored, f"time_limit_s[{i}]")))
    details = body.get("details", False)
    if not isinstance(details, bool):
        raise _fail("'details' must be true or false")
    return Batch(completions, _columns(entries), _kind(body), details)


def completion_from_query(query: str, prompt: str | None = None) -> str:
    """The response part of an OpenRLHF query (the decoded prompt + response, special tokens left in).

    The prompt is cut off where it is the query's prefix, else at the last assistant-turn marker; end-of-turn
    tokens at the end are dropped, so a program answered without a fence still runs as written.

    Example:
        >>> completion_from_query("<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\nx = 1<|im_end|>")
        'x = 1'
        >>> completion_from_query("PROMPT: x = 1</s>", "PROMPT: ")
        'x = 1'
    """
    if prompt and query.startswith(prompt):
        response = query[len(prompt):]
    else:
        cuts = [query.rfind(m) + len(m) for m in _ASSISTANT_MARKERS if m in query]
        response = query[max(cuts):] if cuts else query
    stripped = True
    while stripped:
        stripped = False
        response = response.rstrip()
        for token in END_OF_TURN:
            if response.endswith(token):
                response = response[: -len(token)]
                stripped = True
    return response


def _label(label: Any, rows: Mapping[str, Mapping] | None, where: str) -> tuple[Any, float | None]:
    """A label's tests and limit: a row id, a list of asserts, a dict with ``tests``, or a JSON text of those."""
    if isinstance(label, str):
        _text(label, where)
        if rows is not None and label in rows:
            row = rows[label]
            return row[schema.TESTS], _limit(row.get(TIME_LIMIT), where)
        try:
            label = json.loads(label)
        except RecursionError:
            raise _fail(f"{where} is JSON nested too deeply to read") from None
        except ValueError:
            if rows is not None:
                raise _fail(f"{where}: no row with id {label[:80]!r} in the loaded revision, and not JSON") from None
            raise _fail(f"{where} is not JSON (a list of asserts or {{'tests': [...]}}), and no dataset is loaded") \
                from None
    if isinstance(label, dict) and "tests" in label:
        unknown = sorted(set(label) - {"tests", TIME_LIMIT, "id"})
        if unknown:
            raise _fail(f"{where} has unknown keys {unknown}")
        return _tests_value(label["tests"], where), _limit(label.get(TIME_LIMIT), where)
    return _tests_value(label, where), None


def parse_openrlhf_request(body: Any, *, rows: Mapping[str, Mapping] | None = None,
                           max_completions: int = 4096) -> Batch:  # fmt: skip
    """Check an OpenRLHF remote-reward body (``query``, ``prompts``, ``labels``) and turn it into a :class:`Batch`.

    OpenRLHF 0.11 (``openrlhf/utils/agent.py``) posts one sample per request, as lists of one; older versions
    posted whole batches. Both fit.

    Args:
        body: the decoded JSON body.
        rows (`Mapping[str, Mapping]`, *optional*): the loaded revision's rows by id, for labels that are ids.
        max_completions (`int`, defaults to 4096): the most samples one request may carry.

    Raises:
        SchemaError: the body does not fit (nothing has run).

    Example:
        >>> body = {"query": ["Q: x = 1<|im_end|>"], "prompts": ["Q: "], "labels": ['["assert x == 1"]']}
        >>> parse_openrlhf_request(body).completions
        ['x = 1']
    """
    if not isinstance(body, dict):
        raise _fail(f"the body must be a JSON object, got {type(body).__name__}")
    queries = body.get("query", body.get("queries"))
    if isinstance(queries, str):
        queries = [queries]
    if not isinstance(queries, list):
        raise _fail("'query' must be a list of decoded prompt + response texts")
    n = len(queries)
    _check_size(n, max_completions)
    prompts = body.get("prompts")
    prompts = [None] * n if prompts is None else ([prompts] if isinstance(prompts, str) else prompts)
    labels = body.get("labels")
    labels = [labels] if isinstance(labels, str) else labels
    if not isinstance(prompts, list) or len(prompts) != n:
        raise _fail(f"'prompts' must be a list of {n} texts")
    if not isinstance(labels, list) or len(labels) != n:
        raise _fail(f"'labels' must be a list of {n} labels (row ids, or the tests as JSON)")
    completions, entries = [], []
    for i, (query, prompt, label) in enumerate(zip(queries, prompts, labels)):
        if not isinstance(query, str) or not (prompt is None or isinstance(prompt, str)):
            raise _fail(f"query[{i}] and prompts[{i}] must be strings")
        _text(query, f"query[{i}]")
        _text(prompt or "", f"prompts[{i}]")
        completions.append(_completion(completion_from_query(query, prompt), f"query[{i}]"))
        entries.append(_label(label, rows, f"labels[{i}]"))
    return Batch(completions, _columns(entries))
