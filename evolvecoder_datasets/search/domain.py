"""The domain of a problem: which argument tuples its statement defines, so that no writer publishes a test outside it.

A test on an input the statement does not define pins the reference's accidental behaviour there, and a correct
program that validates its input, or reads the statement differently where it is silent, loses its reward on it.
Every writer (the search, the model writers' inputs, the fidelity oracle) therefore keeps only inputs the problem's
:class:`Domain` admits. A domain is one of:

- ``statement``: a precondition written from the problem's statement and shipped with its source (HumanEval:
  :mod:`evolvecoder_datasets.sources.statement_domains`), as EvalPlus did for HumanEval+; or one a row declares;
- ``constraints``: one read from the ``Constraints:`` block of the statement (LeetCode's, contest statements':
  :mod:`evolvecoder_datasets.sources.constraints`);
- ``model``: one the test-writer model wrote from the statement, checked in the sandbox before use
  (:mod:`evolvecoder_datasets.stages.support.model_domains`);
- ``inferred``: without one, a conservative domain read off the problem's own seed inputs (:func:`infer_domain`):
  per argument, the types the seeds use, a sign where every seed has it, the character classes of their strings,
  non-empty where no seed is empty, balanced brackets, sorted or distinct elements where every seed shares that
  shape. It is never wider than what the seeds show, so never wider than the statement allows.

A shape (``inferred``) is checked where the inputs are made: pure Python on literal values, and it names the rule an
input breaks (``type``, ``sign``, ``charset``, ``length``, ``shape``, ``arity``; a call whose arguments are not
literals cannot be checked: ``unchecked``). A precondition (``statement``) is
code: it runs in the sandbox beside the reference (:class:`~evolvecoder_datasets.search.probes.ProbeProgram`'s
``precondition``), never in the caller, and its rejections count under its ``how``.

:func:`domain_variants` writes the programs that are right by the statement yet differ from the reference outside
the domain (one raises ``ValueError`` there, one returns ``None``): the fidelity figures count them as right programs,
so a suite with a test outside the domain shows it as a true-positive rate below 1.

Which one a problem gets is decided a floor up (:func:`evolvecoder_datasets.stages.support.domains.problem_domain`);
a writer given none infers it from its seeds.

Example:
    >>> from evolvecoder_datasets.search.domain import infer_domain
    >>> domain = infer_domain([(3, "ab"), (10, "abc")])
    >>> domain.how, domain.violation((4, "zz")), domain.violation((-1, "ab")), domain.violation((2, "a!"))
    ('inferred', None, 'sign', 'charset')
"""

from __future__ import annotations

import json
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["DOMAIN_RULES", "SHAPE_CHECKER", "Domain", "domain_variants", "infer_domain"]

#: The rules an input can break, by the kind of domain that states them.
DOMAIN_RULES = ("arity", "type", "sign", "charset", "length", "shape", "statement", "constraints", "model",
                "unchecked")

_CLASSES = (string.ascii_lowercase, string.ascii_uppercase, string.digits)

# The shape checker, as source: the caller executes it to check inputs where they are made, and the variants of
# domain_variants carry it into the sandbox, so one text decides both. It never raises on literal values.
SHAPE_CHECKER = r'''
def _ecd_shape_rule(spec, value):
    kind = type(value).__name__
    rules = spec.get(kind)
    if rules is None:
        return "type"
    if kind in ("int", "float"):
        if "min" in rules and not value >= rules["min"]:
            return "sign"
        return None
    if kind == "str":
        if len(value) < rules.get("min_len", 0):
            return "length"
        allowed = rules.get("chars")
        if allowed is not None and any(c not in allowed for c in value):
            return "charset"
        if rules.get("balanced"):
            stack = []
            for c in value:
                if c in "([{<":
                    stack.append(c)
                elif c in ")]}>":
                    if not stack or stack.pop() != {")": "(", "]": "[", "}": "{", ">": "<"}[c]:
                        return "shape"
            if stack:
                return "shape"
        return None
    if kind in ("list", "tuple", "set", "frozenset", "dict"):
        if len(value) < rules.get("min_len", 0):
            return "length"
        if "lens" in rules and len(value) not in rules["lens"]:
            return "length"
        items = list(value.keys()) if kind == "dict" else list(value)
        if "item" in rules:
            for item in items:
                rule = _ecd_shape_rule(rules["item"], item)
                if rule:
                    return rule
        if kind == "dict" and "value" in rules:
            for item in value.values():
                rule = _ecd_shape_rule(rules["value"], item)
                if rule:
                    return rule
        try:
            if rules.get("sorted") and any(items[i] > items[i + 1] for i in range(len(items) - 1)):
                return "shape"
            if rules.get("distinct") and len(set(items)) != len(items):
                return "shape"
        except TypeError:
            return "type"
        return None
    return None

def _ecd_shape_violation(specs, args):
    if len(args) != len(specs):
        return "arity"
    for spec, value in zip(specs, args):
        try:
            rule = _ecd_shape_rule(spec, value)
        except (RecursionError, TypeError, ValueError):
            rule = "type"
        if rule:
            return rule
    return None
'''

_checker: dict[str, Any] = {}
exec(compile(SHAPE_CHECKER, "<shape checker>", "exec"), _checker)  # our own text, no input in it
_shape_violation = _checker["_ecd_shape_violation"]


@dataclass(frozen=True)
class Domain:
    """The inputs a problem defines: a precondition from its statement, or a shape inferred from its seeds.

    Args:
        how (`str`): ``"statement"`` (``contract`` holds the precondition), ``"inferred"`` (``shape`` holds one spec
            per argument) or ``"open"`` (every input is admitted: a row whose ``domain`` cell declares so, or a
            problem without a call to read a shape from).
        contract (`str`, *optional*): source defining ``precondition(<the callee's parameters>)`` -> bool.
        shape (`tuple[dict, ...]`): per argument position, a spec ``{type name: rules}`` (see :func:`infer_domain`).

    Example:
        >>> d = Domain("statement", contract="def precondition(n):\\n    return type(n) is int and n >= 1")
        >>> d.needs_sandbox, d.violation((0,))
        (True, None)
    """

    how: str
    contract: str | None = None
    shape: tuple = ()

    @property
    def needs_sandbox(self) -> bool:
        """Whether admission needs the precondition run (in the sandbox), beyond the shape checked here."""
        return bool(self.contract)

    def violation(self, args: Sequence[Any]) -> str | None:
        """The shape rule ``args`` break (a key of :data:`DOMAIN_RULES`), or ``None`` (a precondition is not run
        here: see :attr:`needs_sandbox`).

        Example:
            >>> infer_domain([([1, 2],), ([3],)]).violation(([],))
            'length'
        """
        if not self.shape:
            return None
        return _shape_violation(list(self.shape), tuple(args))

    def predicate_source(self) -> str | None:
        """Source defining ``precondition(*args)`` for this domain (the contract, or the shape checker with its spec),
        or ``None`` when every input is admitted.

        Example:
            >>> src = infer_domain([(1,)]).predicate_source()
            >>> ns = {}; exec(src, ns); ns["precondition"](5), ns["precondition"](-5)
            (True, False)
        """
        if self.contract:
            return self.contract
        if not self.shape:
            return None
        return (SHAPE_CHECKER + f"\n_ECD_SHAPE = {json.dumps(list(self.shape))}\n\n"
                "def precondition(*args):\n    return _ecd_shape_violation(_ECD_SHAPE, args) is None\n")

    def to_row(self, seed_violations: int = 0) -> dict[str, Any]:
        """The ``domain`` cell of a problem row: ``how``, ``contract``, ``shape`` (JSON) and the seed asserts found
        outside it.

        Example:
            >>> infer_domain([(1,)]).to_row()["shape"]
            '[{"int": {"min": 1}}]'
        """
        return {"how": self.how, "contract": self.contract, "shape": json.dumps(list(self.shape)) if self.shape else None,
                "seed_violations": int(seed_violations)}

    @classmethod
    def from_row(cls, cell: dict[str, Any] | None) -> Domain | None:
        """The domain a ``domain`` cell records (``None`` for an empty cell).

        Example:
            >>> Domain.from_row(infer_domain([("a",)]).to_row()).violation(("B",))
            'charset'
        """
        if not cell or not cell.get("how"):
            return None
        shape = tuple(json.loads(cell["shape"])) if cell.get("shape") else ()
        return cls(cell["how"], contract=cell.get("contract") or None, shape=shape)


def _numbers(values: list, kind: str) -> dict[str, Any]:
    low = min(values)
    if low >= 1:
        return {"min": 1 if kind == "int" else 0.0}  # a float seed of 0.5 says nothing about 0 or 1
    if low >= 0:
        return {"min": 0}
    return {}


def _chars(values: list[str]) -> str | None:
    seen = set("".join(values))
    if not seen:
        return ""
    allowed = set()
    for cls in _CLASSES:
        if seen & set(cls):
            allowed |= set(cls)
    allowed |= {c for c in seen if not any(c in cls for cls in _CLASSES)}
    return "".join(sorted(allowed))


def _balanced(values: list[str]) -> bool:
    """Whether every seed holding a bracket is balanced (and one does): the checker's own rule decides."""
    bracketed = [v for v in values if any(c in "()[]{}<>" for c in v)]
    return bool(bracketed) and all(_checker["_ecd_shape_rule"]({"str": {"balanced": True}}, v) is None
                                   for v in bracketed)


def _ordered(values: list, test) -> bool:
    long = [v for v in values if len(v) >= 3]
    try:
        return len(long) >= 2 and all(test(list(v)) for v in values if len(v) >= 2)
    except TypeError:
        return False


def _spec(values: list, depth: int = 0) -> dict[str, Any]:
    """The spec of one argument position (or of the elements of collections) from the values seen there."""
    by_kind: dict[str, list] = {}
    for v in values:
        by_kind.setdefault(type(v).__name__, []).append(v)
    spec: dict[str, Any] = {}
    for kind, vs in by_kind.items():
        rules: dict[str, Any] = {}
        if kind in ("int", "float"):
            rules = _numbers(vs, kind)
        elif kind == "str":
            rules = {"chars": _chars(vs)}
            if all(vs):
                rules["min_len"] = 1
            if _balanced(vs):
                rules["balanced"] = True
        elif kind in ("list", "tuple", "set", "frozenset", "dict") and depth < 4:
            if all(len(v) for v in vs):
                rules["min_len"] = 1
            if kind == "tuple" and len({len(v) for v in vs}) == 1:
                rules["lens"] = [len(vs[0])]
            items = [k for v in vs for k in (v.keys() if kind == "dict" else v)]
            if items:
                rules["item"] = _spec(items, depth + 1)
            if kind == "dict":
                inner = [x for v in vs for x in v.values()]
                if inner:
                    rules["value"] = _spec(inner, depth + 1)
            elif kind in ("list", "tuple"):
                if _ordered(vs, lambda v: all(v[i] <= v[i + 1] for i in range(len(v) - 1))):
                    rules["sorted"] = True
                if sum(len(v) >= 4 for v in vs) >= 3 and _ordered(vs, lambda v: len(set(map(repr, v))) == len(v)):
                    rules["distinct"] = True
        spec[kind] = rules
    return spec


def infer_domain(seeds: Sequence[Sequence[Any]]) -> Domain:
    """The conservative domain the seed inputs show (how ``"inferred"``; ``"open"`` without seeds).

    Per argument position: only the types the seeds pass there (``bool`` is not ``int``); a lower bound of 1 (or 0)
    where every seed number is at least that; for strings the character classes the seeds use (a lowercase letter
    admits every lowercase letter, other characters only themselves) and balanced brackets where every bracketed seed
    is balanced; for collections non-empty where no seed is empty, the element spec of all their elements, sorted or
    distinct elements where every seed is. Nothing the seeds do not show is admitted.

    Example:
        >>> d = infer_domain([("(()) ()",), ("((()))",)])
        >>> d.violation((")(",)), d.violation(("()()",)), d.violation(("(a)",))
        ('shape', None, 'charset')
    """
    seeds = [tuple(s) for s in seeds]
    if not seeds or len({len(s) for s in seeds}) != 1:
        return Domain("open")
    return Domain("inferred", shape=tuple(_spec([s[k] for s in seeds]) for k in range(len(seeds[0]))))


def domain_variants(reference: str, callee: str, domain: Domain | None) -> list[str]:
    """Programs right by the statement that differ from ``reference`` outside ``domain``: one raises ``ValueError``
    on an input the domain does not admit, one returns ``None`` there; inside it both call the reference. Empty for
    a domain that admits everything or a callee that is not a plain function name.

    Example:
        >>> ref = "def half(n):\\n    return n // 2\\n"
        >>> strict, lenient = domain_variants(ref, "half", infer_domain([(4,), (6,)]))
        >>> ns = {}; exec(strict, ns); ns["half"](8)
        4
        >>> ns["half"](-8)
        Traceback (most recent call last):
        ...
        ValueError: input outside the problem's domain
    """
    predicate = domain.predicate_source() if domain is not None else None
    if not predicate or not callee.isidentifier():
        return []
    head = (f"_ecd_domain = {{}}\nexec(compile({predicate!r}, '<domain>', 'exec'), _ecd_domain)\n"
            f"_ecd_reference = {{'__name__': '__ecd_reference__'}}\n"
            f"exec(compile({reference!r}, '<reference>', 'exec'), _ecd_reference)\n"
            "globals().update({k: v for k, v in _ecd_reference.items() if not k.startswith('__')})\n\n"
            f"def {callee}(*args, **kwargs):\n"
            "    try:\n"
            "        admitted = _ecd_domain['precondition'](*args, **kwargs) is True\n"
            "    except Exception:\n"
            "        admitted = False\n"
            "    if not admitted:\n")
    tail = f"    return _ecd_reference[{callee!r}](*args, **kwargs)\n"
    return [head + "        raise ValueError(\"input outside the problem's domain\")\n" + tail,
            head + "        return None\n" + tail]
