"""What a code_instruct run makes: the :class:`Task` record and its delivery contract, the yield report, the run.

A task is two files, the pytest module (:data:`TEST_FILE`) and the reference solution it imports
(:data:`SOLUTION_FILE`); ``JUDGED_INSIDE`` and ``JUDGED_OUTSIDE`` say where the verdicts that verified it were
decided. :func:`instruction_for` is the text an agent receives; :class:`YieldReport` counts what a run drew, asked,
rejected and emitted; :class:`CodeInstructRun` holds the tasks and the report of one repository.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .backend import RepoEnvironment
from .repository import Repository

__all__ = [
    "SOLUTION_FILE",
    "TEST_FILE",
    "CodeInstructRun",
    "Task",
    "YieldReport",
    "instruction_for",
    "tasks_from_runs",
]

#: A verdict decided in the process that ran the solution (pytest's).
JUDGED_INSIDE = "inside"
#: Verdicts decided by the sandbox's judge, in a process that never ran the solution.
JUDGED_OUTSIDE = "outside"
TEST_FILE = "test_task.py"
SOLUTION_FILE = "task_module.py"


@dataclass(frozen=True)
class Task:
    """One emitted, execution-verified task.

    Args:
        id (`str`): ``<distribution>_<seed index>``.
        problem (`str`): the problem description as the model wrote it.
        instruction (`str`): the problem plus the delivery contract (:func:`instruction_for`).
        test (`str`): the pytest module (``test_task.py``).
        solution (`str`): the reference module (``task_module.py``).
        repo (`str`): the distribution name.
        repo_version (`str`): its version.
        package (`str`): the import name the task uses.
        path (`str`): the seed file.
        start_line (`int`): first line of the seed window.
        end_line (`int`): last line of the seed window.
        model (`str`): the model that wrote it.
        attempts (`int`): LLM calls spent on this seed, this one included.
        seed_index (`int`): the seed window's index in the run.
        stage_a (`dict[str, str]`): per-test outcomes without the solution.
        stage_b (`dict[str, str]`): per-test outcomes with the solution.
        environment (`str`): ``backend:key`` of the environment that verified it.
        judged (`str`, defaults to ``"inside"``): where the verdicts that verified it were decided: ``"outside"``
            when the test was split into planned asserts and the sandbox's judge decided both stages
            (:func:`~.verification.verify_task`); ``"inside"`` when pytest did, in the interpreter that imported
            ``task_module.py``, where a solution can reach the verdict plugin and forge its file. The exports leave
            ``"inside"`` tasks out unless asked (``CodeInstructConfig.export_judged_inside``; see
            docs/threat-model.md).
        judged_reason (`str`, defaults to ``""``): why a task was judged inside
            (:attr:`~.verification.Verification.inside_reason`: the split's refusal, a collection that differs from
            the split, a backend the sandbox cannot reach); empty when judged outside.
    """

    id: str
    problem: str
    instruction: str
    test: str
    solution: str
    repo: str
    repo_version: str
    package: str
    path: str
    start_line: int
    end_line: int
    model: str
    attempts: int
    seed_index: int
    stage_a: dict[str, str] = field(default_factory=dict)
    stage_b: dict[str, str] = field(default_factory=dict)
    environment: str = ""
    judged: str = JUDGED_INSIDE
    judged_reason: str = ""


@dataclass
class YieldReport:
    """What a run drew, asked, rejected and emitted.

    Attributes:
        repository (`str`): ``dist==version`` (or ``"<n> repositories"`` after :meth:`merge`).
        seeds_sampled (`int`): seed windows requested.
        seeds_without_window (`int`): seeds for which no acceptable window was found.
        attempts (`int`): LLM calls (= candidates).
        verified (`int`): candidates that reached execution.
        emitted (`int`): tasks emitted.
        skip_reasons (`Counter`): per rejected candidate, its reason.
        seed_outcomes (`Counter`): per seed, ``"emitted"`` or the reason of its last rejection.
        judged_inside (`Counter`): per emitted task judged inside, why (:func:`inside_reason_key`).
    """

    repository: str = ""
    seeds_sampled: int = 0
    seeds_without_window: int = 0
    attempts: int = 0
    verified: int = 0
    emitted: int = 0
    skip_reasons: Counter = field(default_factory=Counter)
    seed_outcomes: Counter = field(default_factory=Counter)
    judged_inside: Counter = field(default_factory=Counter)

    @property
    def yield_rate(self) -> float:
        """Emitted tasks per LLM call (0.0 when nothing was asked)."""
        return self.emitted / self.attempts if self.attempts else 0.0

    def merge(self, other: YieldReport) -> YieldReport:
        """The sum of two reports (e.g. over repositories)."""
        names = [n for n in (self.repository, other.repository) if n]
        return YieldReport(
            repository=", ".join(names),
            seeds_sampled=self.seeds_sampled + other.seeds_sampled,
            seeds_without_window=self.seeds_without_window + other.seeds_without_window,
            attempts=self.attempts + other.attempts,
            verified=self.verified + other.verified,
            emitted=self.emitted + other.emitted,
            skip_reasons=self.skip_reasons + other.skip_reasons,
            seed_outcomes=self.seed_outcomes + other.seed_outcomes,
            judged_inside=self.judged_inside + other.judged_inside,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data, with the yield rate and the reasons sorted by count."""
        return {
            "repository": self.repository,
            "seeds_sampled": self.seeds_sampled,
            "seeds_without_window": self.seeds_without_window,
            "attempts": self.attempts,
            "verified": self.verified,
            "emitted": self.emitted,
            "yield_rate": round(self.yield_rate, 4),
            "skip_reasons": dict(self.skip_reasons.most_common()),
            "seed_outcomes": dict(self.seed_outcomes.most_common()),
            "judged_inside": dict(self.judged_inside.most_common()),
        }

    def __str__(self) -> str:
        lines = [
            f"code_instruct yield for {self.repository or '?'}",
            f"  seeds sampled        {self.seeds_sampled} ({self.seeds_without_window} without a usable window)",
            f"  LLM calls            {self.attempts}",
            f"  reached execution    {self.verified}",
            f"  emitted              {self.emitted} ({self.yield_rate:.1%} of calls)",
        ]
        if self.skip_reasons:
            lines.append("  skipped candidates by reason:")
            lines += [f"    {reason:<32} {count}" for reason, count in self.skip_reasons.most_common()]
        if self.judged_inside:
            lines.append("  emitted but judged inside (left out of exports unless asked), by reason:")
            lines += [f"    {reason:<32} {count}" for reason, count in self.judged_inside.most_common()]
        return "\n".join(lines)


def inside_reason_key(reason: str) -> str:
    """The counter key of a judged-inside reason: the split's refusal with its name, else the reason's head.

    Example:
        >>> inside_reason_key("split: fixture"), inside_reason_key("collection_mismatch: pytest collects ...")
        ('split: fixture', 'collection_mismatch')
    """
    head, _, rest = reason.partition(": ")
    return f"split: {rest}" if head == "split" else head or "unknown"


@dataclass
class CodeInstructRun:
    """The result of :func:`~.pipeline.generate_tasks`.

    Attributes:
        tasks (`list[Task]`): emitted tasks, in seed order.
        report (`YieldReport`): the counts.
        environment (`RepoEnvironment`): the environment tasks were verified in.
        rejected (`list[dict]`): one record per rejected candidate (seed, attempt, reason, detail, and the parsed
            sections when there were any), for inspection.
        repository (`Repository`, *optional*): the repository the tasks are grounded in (task folders copy its
            source tree into their container recipe).
        environment_spec (`EnvironmentSpec`, *optional*): the container recipe of the environment, when the backend
            built one (:class:`~.containers.ContainerBackend`); for a virtualenv it is read at export time.
    """

    tasks: list[Task]
    report: YieldReport
    environment: RepoEnvironment
    rejected: list[dict[str, Any]] = field(default_factory=list)
    repository: Repository | None = None
    environment_spec: Any = None

def instruction_for(problem: str, repo: Repository | None = None, *, package: str | None = None) -> str:
    """The task as an agent receives it: the problem and an explicit delivery contract.

    Args:
        problem (`str`): the problem description.
        repo (`Repository`, *optional*): names the installed package and its version in the contract.
        package (`str`, *optional*): the import name, when no repository is given.

    Example:
        >>> text = instruction_for("Write `double(x)`.", package="click")
        >>> text.splitlines()[0], "`task_module.py`" in text, "`click`" in text
        ('Write `double(x)`.', True, True)
    """
    if repo is not None:
        uses = f"the installed `{repo.package}` package ({repo.dist_name} {repo.version})"
    elif package:
        uses = f"the installed `{package}` package"
    else:
        uses = "the installed packages"
    contract = (
        f"Write your implementation to `{SOLUTION_FILE}` in the current working directory; the tests import it "
        f"with `from task_module import ...`. You may use {uses}. Do not edit the tests."
    )
    return f"{problem.strip()}\n\n## Delivery\n\n{contract}"


def tasks_from_runs(runs: Sequence[CodeInstructRun]) -> list[Task]:
    """All tasks of several runs, in order (one run per repository)."""
    return [task for run in runs for task in run.tasks]
