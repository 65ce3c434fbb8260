"""Each round's test fidelity in a recipe run: an oracle built once, the pool labelled once, every suite judged.

At round 0 (:meth:`FidelityTracker.prepare`) every problem with a confirmed reference (at most
``FidelityConfig.sample`` of them, a seeded draw by id: :func:`~evolvecoder_datasets.search.oracle.oracle_sample`;
the others count as ``not_sampled``) gets an oracle
(:mod:`evolvecoder_datasets.search.oracle`), and every program of its pool (model samples and mutants) plus the
semantics-preserving rewrites of its reference (:mod:`evolvecoder_datasets.mutants.rewrites`) is labelled right or
wrong by it. The pool never changes across rounds, so the labels hold for every round. Each round
(:meth:`FidelityTracker.round_report`) judges that round's suite: the pool's verdicts are its pass matrix; the
rewrites (right programs that are not the reference; never published) run on the tests they have not met yet,
under the problem's calibrated time limit, as the pool did. The rewrites the oracle calls wrong are left out and
counted: the oracle is the judge of a rewrite, not the rewriter. Beside them, the reference's **domain variants**
(:func:`~evolvecoder_datasets.search.domain.domain_variants`: one raises ``ValueError`` outside the problem's domain,
one returns ``None`` there) are right programs too: the oracle draws only inside the domain, so they agree with it, and
a suite that holds a test outside the domain rejects them (a true-positive rate below 1 on kind ``variant``).

The oracle only labels; it never chooses, keeps or publishes a test. On Ray, the oracle and the rewrites run on
the driver's machine (they are small next to the pool).

Example:
    >>> from evolvecoder_datasets.recipe.fidelity import FidelityTracker
    >>> tracker = FidelityTracker(config)          # doctest: +SKIP
    >>> tracker.prepare(round0)                    # doctest: +SKIP
    >>> tracker.round_report(round0, 0)["suite"]   # doctest: +SKIP
    {'right': 412, 'wrong': 2410, 'tpr': 1.0, 'tnr': 0.88, ...}
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import schema
from ..limits import SandboxSettings
from ..metrics.fidelity import NOT_SAMPLED, ProblemFidelity, fidelity_report
from ..schema import TIME_LIMIT
from ..stages.sample import MUTANT_MODEL
from .stdin import SUBMISSION_MODEL

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

    from .config import RecipeConfig

__all__ = ["FidelityTracker"]

logger = logging.getLogger(__name__)


@dataclass
class _Problem:
    labels: np.ndarray | None  # over the pool rows
    reason: str | None
    rewrites: list[str] = field(default_factory=list)  # oracle-right rewrites, then oracle-right domain variants
    kinds: list[str] = field(default_factory=list)  # per entry of rewrites: "rewrite" or "variant"
    rewrite_verdicts: dict[tuple[str, float | None], list[str]] = field(default_factory=dict)  # (test, limit) -> status


class FidelityTracker:
    """The oracle labels of a run and each round's fidelity figures (see the module docstring).

    Args:
        config (`RecipeConfig`): the run (its ``fidelity`` section, its sandbox settings and finalize rules).
    """

    def __init__(self, config: RecipeConfig) -> None:
        self.config = config
        self.settings = config.fidelity
        self.problems: dict[str, _Problem] = {}
        self.summary: dict[str, Any] = {}
        self.prepared = False

    # -------------------------------------------------------------------------------------------- round 0
    def _fast_sandbox(self):
        from ..execution import shared_sandbox

        # the stage's sandbox in the oracle's mode (fast) under its limit, at the one default timeout policy
        return shared_sandbox(self.config.execute, mode=self.settings.sandbox.mode,
                              timeout_s=float(self.settings.sandbox.timeout_s),
                              max_consecutive_timeouts=SandboxSettings.max_consecutive_timeouts)

    def prepare(self, ds: Dataset) -> None:
        """Build the oracles and label the pool and the rewrites (once, from round 0's rows).

        Example:
            >>> FidelityTracker(config).prepare(round0)   # doctest: +SKIP
        """
        from ..mutants.rewrites import rewrite_program
        from ..search.domain import domain_variants
        from ..search.oracle import OracleProblem, build_oracles, label_programs, oracle_sample
        from ..search.oracle_cache import OracleCache
        from ..stages.support.domains import derive_domain

        self.prepared = True
        cols = ds.column_names
        ids = [str(i) for i in ds[schema.ID]]
        refs = ds[schema.REFERENCE_SOLUTIONS] if schema.REFERENCE_SOLUTIONS in cols else [None] * len(ids)
        oks = ds[schema.REFERENCE_OK] if schema.REFERENCE_OK in cols else [False] * len(ids)
        references = [(r[0] if ok and r else None) for r, ok in zip(refs, oks)]
        # at most `sample` problems with a reference get an oracle (a seeded draw by id); the rest are not_sampled
        picked = oracle_sample([pid for pid, ref in zip(ids, references) if ref], self.settings)
        unsampled = {pid for pid, ref in zip(ids, references) if ref and pid not in picked}
        references = [None if pid in unsampled else ref for pid, ref in zip(ids, references)]
        pools = [[s["code"] for s in sols] for sols in ds[schema.SOLUTIONS]]
        origins = ds[schema.TEST_ORIGIN] if schema.TEST_ORIGIN in cols else [None] * len(ids)
        # each problem's domain, as its first round will derive it: the oracle draws inside it, and the variants of
        # the reference that differ only outside it are right programs
        domains = [derive_domain(pid, list(tests), [str((o or {}).get("method", "seed")) for o in (orig or ())]
                                 or ["seed"] * len(tests), ref, question)
                   for pid, tests, orig, ref, question in zip(ids, ds[schema.TESTS], origins, references,
                                                             ds[schema.QUESTION])]
        problems = [OracleProblem(pid, ref, list(tests), pool, domain=domain)
                    for pid, ref, tests, pool, (domain, _) in zip(ids, references, ds[schema.TESTS], pools, domains)]
        sandbox = self._fast_sandbox() if any(references) else None
        cache = OracleCache() if self.settings.cache else None
        oracles = build_oracles(problems, self.settings, sandbox=sandbox, cache=cache)
        rewrites = [[r.code for r in rewrite_program(ref)] if ref and self.settings.rewrites else []
                    for ref in references]
        variants = [domain_variants(ref, call.callee, domain) if ref and call and self.settings.rewrites else []
                    for ref, (domain, call) in zip(references, domains)]
        labels = label_programs(oracles, [p + r + v for p, r, v in zip(pools, rewrites, variants)], self.settings,
                                sandbox=sandbox, cache=cache)
        generated = right_rewrites = variants_made = right_variants = 0
        counts = {"right": 0, "wrong": 0, "unlabelled": 0}
        for pid, oracle, pool, rws, vs, lab in zip(ids, oracles, pools, rewrites, variants, labels):
            if lab is None:
                self.problems[pid] = _Problem(None, oracle.reason or "no_oracle")
                continue
            pool_labels, rw_labels = lab[: len(pool)], lab[len(pool): len(pool) + len(rws)]
            v_labels = lab[len(pool) + len(rws):]
            kept = [code for code, ok in zip(rws, rw_labels) if ok == 1]
            kept_variants = [code for code, ok in zip(vs, v_labels) if ok == 1]
            generated += len(rws)
            right_rewrites += len(kept)
            variants_made += len(vs)
            right_variants += len(kept_variants)
            self.problems[pid] = _Problem(pool_labels, None, kept + kept_variants,
                                          ["rewrite"] * len(kept) + ["variant"] * len(kept_variants))
            counts["right"] += int((pool_labels == 1).sum())
            counts["wrong"] += int((pool_labels == 0).sum())
            counts["unlabelled"] += int((pool_labels == -1).sum())
        sizes = [len(o.tests) for o in oracles if o.available]
        sizes += self._prepare_stdin(ds, references, pools, counts)
        for pid in unsampled:
            self.problems[pid] = _Problem(None, NOT_SAMPLED)
        reasons: dict[str, int] = {}
        for p in self.problems.values():
            if p.labels is None and p.reason != NOT_SAMPLED:
                reasons[p.reason or "no_oracle"] = reasons.get(p.reason or "no_oracle", 0) + 1
        self.summary = {
            "problems": len(sizes),
            "no_oracle": dict(sorted(reasons.items())),
            "sampled": {"problems": len(picked), "of": len(picked) + len(unsampled), "setting": self.settings.sample},
            "inputs_per_problem": {"mean": float(np.mean(sizes)) if sizes else None,
                                   "min": int(min(sizes)) if sizes else None, "max": int(max(sizes)) if sizes else None},
            "pool": counts,
            "rewrites": {"generated": generated, "right": right_rewrites, "wrong": generated - right_rewrites},
            "domain_variants": {"generated": variants_made, "right": right_variants,
                                "wrong": variants_made - right_variants},
            "domains": dict(sorted(Counter(d.how for d, _ in domains).items())),
            "cached": {"oracles": cache.hits if cache else 0, "labels": cache.labels_read if cache else 0},
            "settings": {"inputs": self.settings.inputs, "candidates": self.settings.candidates,
                         "seed": self.settings.seed, "timeout_s": self.settings.sandbox.timeout_s,
                         "sample": self.settings.sample},
        }
        if generated - right_rewrites:
            logger.warning("%d of %d rewrites disagree with their oracle: left out of the fidelity figures",
                           generated - right_rewrites, generated)

    def _prepare_stdin(self, ds: Dataset, references: list[str | None], pools: list[list[str]],
                       counts: dict[str, int]) -> list[int]:
        """Label the pools of the stdin/stdout problems by their own oracle (:mod:`~evolvecoder_datasets.search.
        stdio_oracle`); the sizes of the oracles built."""
        from ..search.stdio_oracle import label_stdio_programs, stdio_oracle
        from ..search.stdio_writer import StdioProblem

        cols = ds.column_names
        if schema.INPUTS not in cols:
            return []
        rows = [i for i, (tests, cases) in enumerate(zip(ds[schema.TESTS], ds[schema.INPUTS])) if cases and not tests]
        if not rows:
            return []
        cell = lambda name, i: ds[name][i] if name in cols else None  # noqa: E731 - one optional cell
        matrices = ds[schema.PASS_MATRIX] if schema.PASS_MATRIX in cols else [[]] * len(ds)
        # the round-0 verdicts on the problem's own cases: a program failing one is wrong without an oracle run
        problems = [StdioProblem(str(ds[schema.ID][i]), references[i], list(ds[schema.INPUTS][i]),
                                 list(ds[schema.OUTPUTS][i]), pools[i], matrices[i] or [],
                                 question=ds[schema.QUESTION][i],
                                 # the reference in its own language (a C++ one may value a Python problem)
                                 language=cell(schema.REFERENCE_LANGUAGE, i) or cell(schema.LANGUAGE, i) or "python",
                                 languages=[cell(schema.LANGUAGE, i) or "python"] * len(pools[i]),
                                 checker=cell(schema.CHECKER, i),
                                 float_tol=cell(schema.FLOAT_TOL, i),
                                 limit=self.config.execute.job_timeout(cell(TIME_LIMIT, i)) or self.settings.sandbox.timeout_s,
                                 validator=cell(schema.VALIDATOR, i)) for i in rows]
        sandbox = self._fast_sandbox()
        oracles = stdio_oracle(problems, sandbox, inputs=self.settings.inputs, seed=self.settings.seed)
        labels = label_stdio_programs(problems, sandbox, oracles=oracles)
        sizes = []
        for k, (problem, oracle) in enumerate(zip(problems, oracles)):
            if oracle is None:
                self.problems[problem.id] = _Problem(None, "no_reference" if not problem.reference else "no_shape")
                continue
            lab = np.asarray(labels[k], dtype=np.int8)
            self.problems[problem.id] = _Problem(lab, None)
            counts["right"] += int((lab == 1).sum())
            counts["wrong"] += int((lab == 0).sum())
            counts["unlabelled"] += int((lab == -1).sum())
            sizes.append(len(oracle[0]))
        return sizes

    # -------------------------------------------------------------------------------------------- checkpoint
    def save(self, path: str | os.PathLike, key: str) -> None:
        """Write the prepared oracle's labels and summary as JSON (atomically), under the run's round-0 ``key``.

        Example:
            >>> tracker.save("runs/x/stages/fidelity_oracle.json", key)   # doctest: +SKIP
        """
        problems = {pid: {"labels": None if p.labels is None else p.labels.tolist(), "reason": p.reason,
                          "rewrites": p.rewrites, "kinds": p.kinds} for pid, p in self.problems.items()}
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".partial")
        tmp.write_text(json.dumps({"key": key, "summary": self.summary, "problems": problems}))
        os.replace(tmp, target)

    def load(self, path: str | os.PathLike, key: str) -> bool:
        """Read an oracle :meth:`save` wrote for the same ``key``; False (nothing read) for another key, a missing
        or an unreadable file, so the caller builds it again.

        Example:
            >>> FidelityTracker(config).load("runs/x/stages/fidelity_oracle.json", key)   # doctest: +SKIP
            True
        """
        try:
            saved = json.loads(Path(path).read_text())
            if saved.get("key") != key:
                return False
            problems = {str(pid): _Problem(None if p["labels"] is None else np.asarray(p["labels"], dtype=np.int8),
                                           p["reason"], list(p["rewrites"]), list(p["kinds"]))
                        for pid, p in saved["problems"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return False
        self.problems, self.summary, self.prepared = problems, dict(saved.get("summary") or {}), True
        return True

    # -------------------------------------------------------------------------------------------- each round
    def _rewrite_matrix(self, problem: _Problem, tests: list[str], limit: float | None) -> tuple[np.ndarray, np.ndarray]:
        """Pass and status matrices of the problem's rewrites on ``tests`` (only unseen tests are run)."""
        from ..execution import Job
        from ..execution import shared_sandbox

        if not problem.rewrites:
            return np.zeros((0, len(tests)), bool), np.zeros((0, len(tests)), dtype=object)
        missing = [t for t in dict.fromkeys(tests) if (t, limit) not in problem.rewrite_verdicts]
        if missing:
            jobs = [Job(code, tests=missing, timeout_s=limit) for code in problem.rewrites]
            reports = shared_sandbox(self.config.execute).run_many(jobs)
            for j, test in enumerate(missing):
                problem.rewrite_verdicts[(test, limit)] = [r.statuses[j] if j < len(r.statuses) else "crash"
                                                           for r in reports]
        S = np.array([[problem.rewrite_verdicts[(t, limit)][k] for t in tests] for k in range(len(problem.rewrites))],
                     dtype=object).reshape(len(problem.rewrites), len(tests))
        return S == "pass", S

    def _problem(self, row: dict[str, Any], columns: np.ndarray | None = None) -> ProblemFidelity:
        from ..passmatrix import as_pass_matrix

        pid = str(row[schema.ID])
        state = self.problems.get(pid)
        tests = list(row[schema.TESTS]) or list(row.get(schema.INPUTS) or [])  # a stdin problem's cases
        origins = row.get(schema.TEST_ORIGIN) or [{"method": "unknown"}] * len(tests)
        if columns is not None:
            tests = [tests[c] for c in columns]
            origins = [origins[c] for c in columns]
        if state is None or state.labels is None:
            return ProblemFidelity(pid, np.zeros((0, len(tests)), bool), None,
                                   reason=state.reason if state else "no_oracle")
        sols = row[schema.SOLUTIONS]
        n = len(sols)
        # an empty pool (no mutant survived generation, no sample) still has one column per test
        n_cases = len(row[schema.TESTS]) or len(row.get(schema.INPUTS) or [])
        M = (as_pass_matrix(row[schema.PASS_MATRIX]).reshape(n, n_cases) if n
             else np.zeros((0, n_cases), bool))
        S = row.get(schema.STATUSES)
        S = np.asarray(S, dtype=object).reshape(M.shape) if S is not None and M.size else None
        if columns is not None:
            M = M[:, columns]
            S = S[:, columns] if S is not None else None
        limit = row.get(TIME_LIMIT)
        R, RS = self._rewrite_matrix(state, tests, float(limit) if limit else None)
        from ..schema import STATUS_NAMES

        pool_status = (np.array([[c if isinstance(c, str) else STATUS_NAMES[int(c)] for c in r] for r in S],
                                dtype=object).reshape(M.shape)
                       if S is not None else np.where(M, "pass", "fail").astype(object))
        kinds = ["mutant" if s["model"] == MUTANT_MODEL else "submission" if str(s["model"]).startswith(
            SUBMISSION_MODEL) else "sample" for s in sols] + list(state.kinds)
        return ProblemFidelity(
            pid, np.vstack([M, R]), np.concatenate([state.labels, np.ones(len(state.rewrites), np.int8)]),
            kinds=kinds, methods=[o["method"] for o in origins], statuses=np.vstack([pool_status, RS]))

    def round_report(self, ds: Dataset, r: int | str) -> dict[str, Any]:
        """Round ``r``'s fidelity report (:func:`~evolvecoder_datasets.metrics.fidelity.fidelity_report`) with the
        oracle's summary.

        Example:
            >>> tracker.round_report(round1, 1)["suite"]["tnr"]   # doctest: +SKIP
            0.93
        """
        keep = [c for c in (schema.ID, schema.TESTS, schema.INPUTS, schema.TEST_ORIGIN, schema.SOLUTIONS,
                            schema.PASS_MATRIX, schema.STATUSES, TIME_LIMIT) if c in ds.column_names]
        problems = [self._problem(row) for row in ds.select_columns(keep)]
        report = fidelity_report(problems, max_listed=self.settings.max_listed)
        report["round"] = r
        report["oracle"] = self.summary
        return report

    def final_rules(self, last: Dataset, final: Dataset) -> dict[str, Any]:
        """For the problems ``main`` keeps: the tests and the fidelity of the paper's rule (at most
        ``max_per_group`` per identical pass vector) and of the reduced suite (greedy set cover), both computed on
        the last round's matrices with the final filter's thresholds; ``published`` names the rule ``main`` used.

        Example:
            >>> tracker.final_rules(round3, final)["cover"]["tests"]   # doctest: +SKIP
            410
        """
        from .. import passmatrix
        from ..stages.finalize import _counted_rows
        from ..seeding import problem_rng

        cfg = self.config.finalize_config()
        kept_ids = {str(i) for i in final[schema.ID]}
        keep = [c for c in (schema.ID, schema.TESTS, schema.TEST_ORIGIN, schema.SOLUTIONS, schema.PASS_MATRIX,
                            schema.STATUSES, TIME_LIMIT, schema.REFERENCE_OK) if c in last.column_names]
        out: dict[str, Any] = {"published": cfg.reduce, "trust_reference": cfg.trust_reference}
        for rule in passmatrix.REDUCE_RULES:
            problems, tests = [], 0
            for row in last.select_columns(keep):
                pid = str(row[schema.ID])
                if pid not in kept_ids or not row[schema.TESTS]:
                    continue
                M = passmatrix.as_pass_matrix(row[schema.PASS_MATRIX])
                counted = _counted_rows(row[schema.SOLUTIONS], M.shape[0], cfg.exclude_models)
                if counted.size == 0:
                    continue
                outcome = passmatrix.final_filter_outcome(
                    M[counted], rng=problem_rng(cfg.seed, pid, "finalize"), min_pass_rate=cfg.min_pass_rate,
                    max_per_group=cfg.max_per_group, min_tests=cfg.min_tests, max_perfect=cfg.max_perfect,
                    reduce=rule, pool=M,
                    exempt=np.arange(M.shape[1]) if cfg.trust_reference and row.get(schema.REFERENCE_OK) else None)
                tests += len(outcome.kept)
                problems.append(self._problem(row, outcome.kept))
            report = fidelity_report(problems, max_listed=0)
            out[rule] = {"tests": tests, **report["suite"]}
        return out

