"""Test fidelity: how often a suite accepts the programs an oracle calls right and rejects those it calls wrong.

Pure numpy over pass matrices and oracle labels (:mod:`evolvecoder_datasets.search.oracle` makes the labels).
A suite **accepts** a program when it passes every test of the suite. Over the programs an oracle labelled:

- **TPR** (true-positive rate) = right programs accepted / right programs; **FNR** = 1 - TPR (right ones rejected:
  an over-specified test, or a time limit too tight for a correct but slower program: cause ``limit``);
- **TNR** (true-negative rate) = wrong programs rejected / wrong programs; **FPR** = 1 - TNR (wrong ones let through).

A rate over no program is ``None``, never a number; so is every figure of a problem without an oracle (no
reference, as LeetCode seeds): such problems are counted apart (``no_oracle``), never folded into a rate. Problems
left out of a sampled oracle (``FidelityConfig.sample``) are counted as ``not_sampled``, not as errors. Beside each
TPR and TNR, ``tpr_ci`` and ``tnr_ci`` give its 95% Wilson score interval on the program counts
(:func:`wilson_interval`). It treats programs as independent draws; programs of one problem are not, so the true
uncertainty is wider where a few problems hold most of the programs.

Example:
    >>> import numpy as np
    >>> from evolvecoder_datasets.metrics.fidelity import confusion
    >>> M = np.array([[1, 1], [1, 0], [1, 1], [0, 0]], bool)     # 4 programs x 2 tests
    >>> labels = np.array([1, 1, 0, 0], np.int8)                  # right, right, wrong, wrong
    >>> c = confusion(M.all(axis=1), labels)
    >>> c.tpr, c.tnr, c.fpr, c.fnr, c.right, c.wrong
    (0.5, 0.5, 0.5, 0.5, 2, 2)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import SchemaError
from ..schema import STATUS_NAMES

__all__ = ["Confusion", "ProblemFidelity", "accepted_by", "confusion", "fidelity_report", "method_columns",
           "rate_rows", "wilson_interval", "NOT_SAMPLED"]

#: Why a problem has no figure without any error: the oracle's sample (``FidelityConfig.sample``) left it out.
NOT_SAMPLED = "not_sampled"


def wilson_interval(successes: int, total: int, z: float = 1.959964) -> list[float] | None:
    """The Wilson score interval ``[low, high]`` of a proportion ``successes / total`` (95% by default); ``None``
    over no trial.

    Unlike the normal approximation it stays inside [0, 1] and is not empty at 0 or 1 successes: with all of 20
    programs accepted, the rate may still be as low as 0.84.

    Example:
        >>> from evolvecoder_datasets.metrics.fidelity import wilson_interval
        >>> [round(x, 4) for x in wilson_interval(20, 20)], wilson_interval(0, 0)
        ([0.8389, 1.0], None)
    """
    if total <= 0:
        return None
    p, z2 = successes / total, z * z
    centre = (p + z2 / (2 * total)) / (1 + z2 / total)
    half = z * ((p * (1 - p) + z2 / (4 * total)) / total) ** 0.5 / (1 + z2 / total)
    return [max(0.0, centre - half), min(1.0, centre + half)]


@dataclass(frozen=True)
class Confusion:
    """Counts of one suite over labelled programs.

    Attributes:
        tp (`int`): right programs accepted.  fn (`int`): right programs rejected.
        tn (`int`): wrong programs rejected.  fp (`int`): wrong programs accepted.

    Example:
        >>> (Confusion(tp=3, fn=1) + Confusion(tn=5, fp=0)).as_dict()["tnr"]
        1.0
    """

    tp: int = 0
    fn: int = 0
    tn: int = 0
    fp: int = 0

    def __add__(self, other: Confusion) -> Confusion:
        return Confusion(self.tp + other.tp, self.fn + other.fn, self.tn + other.tn, self.fp + other.fp)

    @property
    def right(self) -> int:
        """Programs the oracle calls right."""
        return self.tp + self.fn

    @property
    def wrong(self) -> int:
        """Programs the oracle calls wrong."""
        return self.tn + self.fp

    @staticmethod
    def _rate(part: int, whole: int) -> float | None:
        return part / whole if whole else None

    @property
    def tpr(self) -> float | None:
        """Right programs accepted, as a share of right programs (``None`` without any)."""
        return self._rate(self.tp, self.right)

    @property
    def fnr(self) -> float | None:
        """Right programs rejected, as a share of right programs."""
        return self._rate(self.fn, self.right)

    @property
    def tnr(self) -> float | None:
        """Wrong programs rejected, as a share of wrong programs."""
        return self._rate(self.tn, self.wrong)

    @property
    def fpr(self) -> float | None:
        """Wrong programs accepted, as a share of wrong programs."""
        return self._rate(self.fp, self.wrong)

    def as_dict(self) -> dict[str, Any]:
        """The counts, the two totals, the four rates (``None`` where undefined) and the 95% Wilson intervals of
        TPR and TNR (``tpr_ci``, ``tnr_ci``: ``[low, high]`` or ``None``).

        Example:
            >>> d = Confusion(tp=1).as_dict()
            >>> d["tnr"] is None, d["tnr_ci"] is None, [round(x, 3) for x in d["tpr_ci"]]
            (True, True, [0.207, 1.0])
        """
        return {"right": self.right, "wrong": self.wrong, "tpr": self.tpr, "tnr": self.tnr, "fpr": self.fpr,
                "fnr": self.fnr, "tp": self.tp, "fn": self.fn, "tn": self.tn, "fp": self.fp,
                "tpr_ci": wilson_interval(self.tp, self.right), "tnr_ci": wilson_interval(self.tn, self.wrong)}


def accepted_by(M: Any, columns: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """Which programs (rows of ``M``) pass every test of ``columns`` (all tests by default; none: all accepted).

    Example:
        >>> import numpy as np
        >>> accepted_by(np.array([[1, 0], [1, 1]], bool), [0]).tolist(), accepted_by(np.zeros((2, 0), bool)).tolist()
        ([True, True], [True, True])
    """
    M = np.asarray(M, dtype=bool)
    if M.ndim != 2:
        raise SchemaError(f"a pass matrix must be 2-D, got shape {M.shape}")
    sub = M if columns is None else M[:, np.asarray(columns, dtype=np.int64)]
    return sub.all(axis=1)


def confusion(accepted: Any, labels: Any) -> Confusion:
    """Counts of a suite's decisions against oracle labels (``1``/True right, ``0``/False wrong, ``-1`` unlabelled).

    Example:
        >>> confusion([True, False, True], [1, 0, -1]).as_dict()["tp"], confusion([True, False, True], [1, 0, -1]).tn
        (1, 1)
    """
    accepted = np.asarray(accepted, dtype=bool)
    labels = np.asarray(labels).astype(np.int8)
    if accepted.shape != labels.shape:
        raise SchemaError(f"{accepted.shape[0]} decisions for {labels.shape[0]} labels")
    right, wrong = labels == 1, labels == 0
    return Confusion(tp=int((accepted & right).sum()), fn=int((~accepted & right).sum()),
                     tn=int((~accepted & wrong).sum()), fp=int((accepted & wrong).sum()))


def method_columns(origins: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """Test indices per writing method (``test_origin[i]["method"]``: seed, refine, adversarial, discriminative,
    search, ...).

    Example:
        >>> {m: c.tolist() for m, c in method_columns([{"method": "seed"}, {"method": "search"},
        ...                                            {"method": "seed"}]).items()}
        {'search': [1], 'seed': [0, 2]}
    """
    out: dict[str, list[int]] = {}
    for i, origin in enumerate(origins):
        out.setdefault(str(origin.get("method", "unknown")), []).append(i)
    return {m: np.asarray(out[m], dtype=np.int64) for m in sorted(out)}


@dataclass
class ProblemFidelity:
    """One problem as the fidelity report sees it.

    Args:
        id (`str`): the problem id.
        matrix (array-like): ``(programs, tests)`` pass matrix of the suite.
        labels (array-like or `None`): per program, 1 right / 0 wrong / -1 unlabelled; `None`: no oracle.
        kinds (`Sequence[str]`, *optional*): per program, what it is (``sample``, ``mutant``, ``rewrite``).
        methods (`Sequence[str]`, *optional*): per test, the method that wrote it.
        statuses (array-like, *optional*): ``(programs, tests)`` status names or codes (to tell a timeout from a
            wrong value where a right program is rejected).
        reason (`str`, *optional*): why there is no oracle.

    Example:
        >>> ProblemFidelity("P_1", [[True]], None, reason="no_reference").reason
        'no_reference'
    """

    id: str
    matrix: Any
    labels: Any
    kinds: Sequence[str] | None = None
    methods: Sequence[str] | None = None
    statuses: Any = None
    reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _cause(statuses: Any, rows: np.ndarray, M: np.ndarray) -> str:
    """Why right programs were rejected: ``limit`` when any rejecting cell timed out (the calibrated time limit
    rejected it: too tight for a right but slower program, or the program hangs on an input the oracle lacks,
    which a re-run under the oracle's own limit tells apart), else the commonest status (``fail``: an
    over-specified test or an oracle miss)."""
    if statuses is None:
        return "fail"
    S = np.asarray(statuses)
    names = Counter()
    for r in np.flatnonzero(rows):
        for c in np.flatnonzero(~M[r]):
            value = S[r, c]
            names[STATUS_NAMES[int(value)] if not isinstance(value, str) else value] += 1
    if names.get("timeout"):
        return "limit"
    return names.most_common(1)[0][0] if names else "fail"


def fidelity_report(problems: Sequence[ProblemFidelity], *, max_listed: int = 20) -> dict[str, Any]:
    """A suite's fidelity over many problems, pooled over programs: overall, by program kind, by test method, and
    the problems where it rejects a right program or accepts a wrong one.

    Args:
        problems (`Sequence[ProblemFidelity]`): each problem's matrix, labels, kinds and test methods.
        max_listed (`int`, defaults to 20): problems listed by name for each kind of error (all are counted).

    Returns:
        `dict`: ``problems`` (with an oracle), ``no_oracle`` (reason -> problems), ``not_sampled`` (problems the
        oracle's sample left out: not an error), ``suite`` (a
        :meth:`Confusion.as_dict`), ``by_kind`` and ``by_method`` (name -> the same; a method's row judges its
        tests alone, as if they were the whole suite), ``rejects_right`` and ``accepts_wrong`` (``problems``,
        ``programs`` and ``listed``: ``{"id", "programs", "cause"}`` / ``{"id", "programs"}``).

    Example:
        >>> import numpy as np
        >>> p = ProblemFidelity("P_1", np.array([[1, 1], [0, 1], [1, 1]], bool), [1, 1, 0],
        ...                     kinds=["rewrite", "rewrite", "mutant"], methods=["seed", "search"])
        >>> report = fidelity_report([p, ProblemFidelity("L_1", np.ones((1, 1), bool), None, reason="no_reference")])
        >>> report["suite"]["tpr"], report["suite"]["tnr"], report["no_oracle"], report["rejects_right"]["listed"]
        (0.5, 0.0, {'no_reference': 1}, [{'id': 'P_1', 'programs': 1, 'cause': 'fail'}])
        >>> report["by_method"]["search"]["tpr"], report["by_kind"]["mutant"]["fpr"]
        (1.0, 1.0)
    """
    total = Confusion()
    by_kind: dict[str, Confusion] = {}
    by_method: dict[str, Confusion] = {}
    no_oracle: Counter = Counter()
    not_sampled = 0
    rejects: list[dict[str, Any]] = []
    accepts: list[dict[str, Any]] = []
    counted = 0
    for p in problems:
        if p.labels is None:
            if p.reason == NOT_SAMPLED:
                not_sampled += 1
            else:
                no_oracle[p.reason or "no_oracle"] += 1
            continue
        labels = np.asarray(p.labels).astype(np.int8)
        M = np.asarray(p.matrix, dtype=bool).reshape(len(labels), -1) if len(labels) else np.zeros((0, 0), bool)
        counted += 1
        accepted = accepted_by(M)
        c = confusion(accepted, labels)
        total += c
        kinds = np.asarray(list(p.kinds) if p.kinds is not None else ["program"] * len(labels), dtype=object)
        for kind in sorted(set(kinds.tolist())):
            rows = kinds == kind
            by_kind[kind] = by_kind.get(kind, Confusion()) + confusion(accepted[rows], labels[rows])
        methods = list(p.methods) if p.methods is not None else []
        for method, columns in method_columns([{"method": m} for m in methods]).items():
            by_method[method] = by_method.get(method, Confusion()) + confusion(accepted_by(M, columns), labels)
        if c.fn:
            rejects.append({"id": p.id, "programs": c.fn, "cause": _cause(p.statuses, ~accepted & (labels == 1), M)})
        if c.fp:
            accepts.append({"id": p.id, "programs": c.fp})
    return {
        "problems": counted,
        "no_oracle": dict(sorted(no_oracle.items())),
        "not_sampled": not_sampled,
        "suite": total.as_dict(),
        "by_kind": {k: v.as_dict() for k, v in sorted(by_kind.items())},
        "by_method": {k: v.as_dict() for k, v in sorted(by_method.items())},
        "rejects_right": {"problems": len(rejects), "programs": sum(r["programs"] for r in rejects),
                          "listed": rejects[:max_listed]},
        "accepts_wrong": {"problems": len(accepts), "programs": sum(a["programs"] for a in accepts),
                          "listed": sorted(accepts, key=lambda a: -a["programs"])[:max_listed]},
    }


def rate_rows(by_round: Mapping[Any, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows ``{"round", "right", "wrong", "tpr", "tnr", "fpr", "fnr"}`` of a round -> :meth:`Confusion.as_dict`
    mapping, in round order (what the card's table and :func:`~evolvecoder_datasets.metrics.figures.plot_fidelity`
    show).

    Example:
        >>> rate_rows({"1": Confusion(tp=2, tn=1, fp=1).as_dict(), "0": Confusion(tp=2, fp=2).as_dict()})[0]["tnr"]
        0.0
    """
    def order(key: Any) -> tuple[bool, Any]:
        text = str(key)
        return (not text.isdigit(), int(text) if text.isdigit() else text)

    rows = []
    for r in sorted(by_round, key=order):
        entry = by_round[r]
        rows.append({"round": int(r) if str(r).isdigit() else str(r),
                     **{k: entry.get(k) for k in ("right", "wrong", "tpr", "tnr", "fpr", "fnr")}})
    return rows
