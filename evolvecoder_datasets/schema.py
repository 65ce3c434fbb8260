"""Column names and ``datasets.Features`` of the two row kinds this library produces.

Problem rows are what gets published (``main`` of ``org/EvolveCoder-22k`` keeps exactly ``id``, ``question``,
``tests``); solution-pool rows carry the sampled programs and their pass matrix for analysis.

Example:
    >>> from evolvecoder_datasets import schema
    >>> sorted(schema.PUBLISHED_COLUMNS)
    ['id', 'question', 'tests']
    >>> schema.check_columns({"id": [], "tests": []}, ["id", "tests"], stage="execute")
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .errors import SchemaError

# Problem rows
ID = "id"
SOURCE = "source"
QUESTION = "question"
TESTS = "tests"
TEST_ORIGIN = "test_origin"
ROUND = "round"
DROP_REASON = "drop_reason"
# Stdin/stdout problems (TACO / APPS / CodeContests style)
INPUTS = "inputs"
OUTPUTS = "outputs"
# ... judged by a special judge ({source, language, contract} or null; execution/checkers.py), in a language
# (``python`` when absent; execution/languages.py), with a tolerance for fractional numbers (float or null)
CHECKER = "checker"
LANGUAGE = "language"
FLOAT_TOL = "float_tol"
# ... whose inputs a shipped validator admits ({source, language} or null; testlib contract: exit 0 on a valid input)
VALIDATOR = "validator"
# Solution-pool rows
SOLUTIONS = "solutions"
PASS_MATRIX = "pass_matrix"
STATUSES = "statuses"
# Per test: True when its verdict could not be decided outside the sandbox (see execution.judge)
JUDGED_INSIDE = "judged_inside"

# Seed rows (sources/): what an adapter writes besides the problem columns
STARTER_CODE = "starter_code"
ENTRY_POINT = "entry_point"
DIFFICULTY = "difficulty"
#: Internal: a row the adapter could not convert carries its reason here until it is filtered out.
SKIP_REASON = "_skip_reason"
# Near-duplicate marks (sources/exact.py and stages/dedup.py)
DUP_OF = "dup_of"
DUP_SCORE = "dup_score"
# Refine stage: the seed's text, the reference programs and what the reference check did
SEED_QUESTION = "seed_question"
REFERENCE_SOLUTIONS = "reference_solutions"
REFERENCE_OK = "reference_ok"
# ... for stdin/stdout problems, the reference's language where it is not the row's (a C++ accepted submission
# valuing the inputs of a Python problem); null: the row's ``language``
REFERENCE_LANGUAGE = "reference_language"
REFINE_DROPPED_TESTS = "refine_dropped_tests"
REFERENCE_FAILED_TESTS = "reference_failed_tests"
REFINE_FALLBACK = "refine_fallback"
# Sample stage: failed requests per problem
SAMPLE_ERRORS = "sample_errors"
# Evolve stage: one log entry per method and round
EVOLVE_LOG = "evolve_log"
# Evolve stage: the inputs a problem defines (search/domain.py), recorded at its first round
DOMAIN = "domain"
# Finalize stage: what the final filter removed per problem
FINAL_LOW_RATE_TESTS = "final_low_rate_tests"
FINAL_DUPLICATE_TESTS = "final_duplicate_tests"
FINAL_PERFECT = "final_perfect"

# Decontamination (decontam.py): the benchmark problem a row overlaps, or null
CONTAMINATED_BY = "contaminated_by"
# Embeddings: the dedup stage's internal vectors, and the embedding stage's output (stages/embed.py)
DEDUP_EMBEDDING = "_dedup_embedding"
EMBEDDING = "embedding"
# Reference verdicts and the mutation-score stage (stages/references.py, stages/mutation.py)
REFERENCE = "reference"
REFERENCE_PASSED = "reference_passed"
MUTATION_SCORE = "mutation_score"
MUTANTS_KILLED = "mutants_killed"
MUTANTS_CONSIDERED = "mutants_considered"
# Calibrated time limits (limits.py, stages/calibrate.py): the CPU seconds per test of a problem, or null
TIME_LIMIT = "time_limit_s"

#: The columns that hold one entry per test (stdin/stdout problems keep their cases in ``inputs``/``outputs``).
PER_TEST_COLUMNS = (TESTS, INPUTS, OUTPUTS, TEST_ORIGIN)

PUBLISHED_COLUMNS = (ID, QUESTION, TESTS)
#: ... and, where the rows are stdin/stdout problems, what judges them: their cases, checker, tolerance, language and
#: time limit (the columns a reward reads).
STDIO_PUBLISHED_COLUMNS = (INPUTS, OUTPUTS, CHECKER, FLOAT_TOL, LANGUAGE, TIME_LIMIT)

# The ``dropped`` config of a published revision: one row per problem the run removed, with where and why.
STAGE = "stage"
REASON = "reason"
DROPPED_COLUMNS = (ID, STAGE, REASON)

TEST_METHODS = ("seed", "refine", "adversarial", "discriminative", "search", "mutant")

#: How a labelled program joins a pool (``model`` of its ``solutions`` entry): ``submission:<verdict>``, the verdict a
#: contest judge gave (a problem package's folder, CodeContests' correct or incorrect list, a TACO row's solutions).
SUBMISSION_MODEL = "submission:"
#: ... and the label of the programs known right: a new stdin case any of them fails is not published.
ACCEPTED_MODEL = SUBMISSION_MODEL + "accepted"

# Typed per-cell outcomes of the sandbox, in the order of their int8 codes.
STATUS_NAMES = ("pass", "fail", "error", "timeout", "memory", "crash", "syntax_error", "unexecuted")
STATUS_CODES = {name: code for code, name in enumerate(STATUS_NAMES)}


def problem_features():
    """``datasets.Features`` of problem rows (imports ``datasets`` lazily).

    Example:
        >>> from evolvecoder_datasets.schema import problem_features
        >>> "tests" in problem_features()
        True
    """
    from datasets import Features, List, Value

    return Features(
        {
            ID: Value("string"),
            SOURCE: Value("string"),
            QUESTION: Value("string"),
            TESTS: List(Value("string")),
            TEST_ORIGIN: List({"round": Value("int32"), "method": Value("string")}),
            ROUND: Value("int32"),
            DROP_REASON: Value("string"),
        }
    )


def solution_features():
    """``datasets.Features`` of solution-pool rows.

    Example:
        >>> from evolvecoder_datasets.schema import solution_features
        >>> list(solution_features())
        ['id', 'solutions', 'pass_matrix', 'statuses']
    """
    from datasets import Features, List, Value

    return Features(
        {
            ID: Value("string"),
            SOLUTIONS: List({"model": Value("string"), "sample": Value("int32"), "code": Value("string")}),
            PASS_MATRIX: List(List(Value("bool"))),
            STATUSES: List(List(Value("string"))),
        }
    )


def evolve_log_feature():
    """The ``datasets`` type of the ``evolve_log`` column: per problem, one entry per method and round (what was
    asked, the model's answers received, what was parsed and added, and why tests were rejected).

    Example:
        >>> from evolvecoder_datasets.schema import evolve_log_feature
        >>> sorted(evolve_log_feature().feature)[:3]
        ['added', 'answers', 'dependent']
    """
    from datasets import List, Value

    return List(
        {
            "round": Value("int32"),
            "method": Value("string"),
            "programs": List(Value("int32")),
            "notes": List(Value("string")),
            "requested": Value("int32"),
            "answers": Value("int32"),
            "parsed": Value("int32"),
            "added": Value("int32"),
            "duplicates": Value("int32"),
            "dependent": Value("int32"),
            "reference_failed": Value("int32"),
            "split_failed": Value("int32"),
            "error": Value("string"),
            "out_of_domain": List({"rule": Value("string"), "count": Value("int32")}),
        }
    )


def domain_feature():
    """The ``datasets`` type of the ``domain`` column: how the problem's domain was obtained (``statement``,
    ``inferred``, ``open``), its precondition source or its inferred shape (JSON), and how many of the problem's own
    asserts lie outside it (dropped and reported at its first round).

    Example:
        >>> from evolvecoder_datasets.schema import domain_feature
        >>> sorted(domain_feature())
        ['contract', 'how', 'seed_violations', 'shape']
    """
    from datasets import Value

    return {"how": Value("string"), "contract": Value("string"), "shape": Value("string"),
            "seed_violations": Value("int32")}


def check_columns(batch_or_columns: Mapping[str, Any] | Iterable[str], required: Iterable[str], *, stage: str) -> None:
    """Raise :class:`SchemaError` naming the stage when a required column is missing.

    Args:
        batch_or_columns: a batch dict (as ``Dataset.map(batched=True)`` passes) or an iterable of column names.
        required: the columns the stage reads.
        stage (`str`): the stage name, for the message.

    Raises:
        SchemaError: a required column is absent.

    Example:
        >>> check_columns(["id"], ["id", "tests"], stage="execute")
        Traceback (most recent call last):
        ...
        evolvecoder_datasets.errors.SchemaError: stage 'execute' needs column(s) ['tests']; got ['id']
    """
    present = list(batch_or_columns.keys()) if isinstance(batch_or_columns, Mapping) else list(batch_or_columns)
    missing = [c for c in required if c not in present]
    if missing:
        raise SchemaError(f"stage {stage!r} needs column(s) {missing}; got {sorted(present)}")
