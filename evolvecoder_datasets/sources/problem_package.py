"""ICPC/Kattis problem packages (the folder layout contest judges share) as seed rows.

A package is one folder per problem:

| path | what this reader takes from it |
|---|---|
| ``problem.yaml`` | ``validation`` (``default`` or ``custom``), ``validator_flags``, a stated ``time_limit`` |
| ``problem_statement/problem.en.tex`` (or ``problem.tex``, ``problem.en.md``, ``problem.md``) | ``question`` |
| ``.timelimit`` | ``time_limit_s`` when ``problem.yaml`` gives none |
| ``data/sample/**/*.in`` + ``*.ans``, then ``data/secret/**/*.in`` + ``*.ans`` | ``inputs`` / ``outputs`` |
| ``output_validators/<name>/`` or ``output_validator/`` | ``checker`` with the ``kattis`` contract |
| ``checker/checker.cpp``, ``checker.cpp`` or ``check.cpp`` | ``checker`` with the ``testlib`` contract |
| ``validator.cpp`` (or ``validator/validator.cpp``, ``val.cpp``), or ``input_validators/`` | ``validator``: testlib (exit 0 on a valid input) or Kattis (exit 42) |
| ``submissions/<verdict>/*.py``, ``*.cpp``, ``*.cc`` | ``submissions``; accepted Python ones are ``solutions`` |

The row has the seed columns (:data:`~evolvecoder_datasets.sources.base.SEED_COLUMNS`, ``id`` is
``Package_<folder name>``, ``source`` is ``ProblemPackage``) and these columns besides:

- ``checker``: ``None`` when the output is judged by token compare, else ``{"source", "language", "contract"}``
  (``language`` ``"cpp"`` or ``"python"``, ``contract`` ``"kattis"`` or ``"testlib"``);
- ``float_tol``: the tolerance of the token compare from ``validator_flags`` (``float_tolerance``, or the larger
  of ``float_absolute_tolerance`` and ``float_relative_tolerance``), ``None`` when there is none or a checker
  judges;
- ``time_limit_s``: seconds per case, or ``None``; ``language``: always ``"python"`` (the language of
  ``solutions``);
- ``submissions``: ``{"verdict", "language", "path", "source"}`` per kept submission, ``path`` relative to the
  package; ``skipped_submissions``: how many submissions were left out (other languages, folders of files,
  verdicts other than the four this reader keeps).

A stated ``validation: default`` means the default validator judges, so an ``output_validators/`` folder is then
left unused (as contest tools do); a testlib checker is used whenever there is one. What is not read: ``limits``
other than a time limit (``time_multiplier``, ``memory``, ...), the ``case_sensitive`` and
``space_change_sensitive`` flags, and any flags given to a custom validator. Interactive problems are refused. A
package that does not fit raises :class:`~evolvecoder_datasets.errors.SourceFormatError` naming the file at fault.
``problem.yaml`` is read with PyYAML (a core dependency), imported when a package is read.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from evolvecoder_datasets.sources.problem_package import load_problem_package
    >>> folder = Path(tempfile.mkdtemp()) / "double"
    >>> for sub in ("problem_statement", "data/sample"):
    ...     (folder / sub).mkdir(parents=True)
    >>> _ = (folder / "problem_statement" / "problem.md").write_text("Print twice the number you read.")
    >>> _ = (folder / "data" / "sample" / "1.in").write_text("21\\n")
    >>> _ = (folder / "data" / "sample" / "1.ans").write_text("42\\n")
    >>> row = load_problem_package(folder)
    >>> row["id"], row["inputs"], row["outputs"], row["checker"]
    ('Package_double', ['21\\n'], ['42\\n'], None)
"""

from __future__ import annotations

import logging
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import schema
from ..errors import ConfigError, SourceFormatError
from .base import ON_ERROR, checker_feature, empty_row, seed_features

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset, Features

logger = logging.getLogger(__name__)

SOURCE = "ProblemPackage"
#: The submission folders kept, in the order a row lists them.
VERDICTS = ("accepted", "wrong_answer", "time_limit_exceeded", "run_time_error")

__all__ = [
    "SOURCE",
    "VERDICTS",
    "load_problem_package",
    "load_problem_packages",
    "problem_package_features",
]

# Where a statement may be, first found wins (``statement/`` is the 2023-07 version of the format's folder).
_STATEMENTS = (
    "problem_statement/problem.en.tex",
    "problem_statement/problem.tex",
    "problem_statement/problem.en.md",
    "problem_statement/problem.md",
    "statement/problem.en.tex",
    "statement/problem.en.md",
)
_TESTLIB_CHECKERS = ("checker/checker.cpp", "checker.cpp", "check.cpp")
_TESTLIB_VALIDATORS = ("validator/validator.cpp", "validator.cpp", "val.cpp")
_LANGUAGE_OF = {".py": "python", ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".C": "cpp", ".c": "c"}
_SUBMISSION_LANGUAGE_OF = _LANGUAGE_OF
_TOLERANCE_FLAGS = ("float_tolerance", "float_absolute_tolerance", "float_relative_tolerance")
_QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def load_problem_package(folder: str | os.PathLike) -> dict[str, Any]:
    """One problem package folder as a seed row (see the module's docstring for the columns).

    Test cases are the ``.in``/``.ans`` pairs of ``data/sample`` and then of ``data/secret``, each group sorted by
    its path and read through subfolders; texts are kept byte for byte (decoded as UTF-8).

    Args:
        folder (`str` or `os.PathLike`): the package, the folder that holds ``data/``.

    Returns:
        `dict`: the seed row with ``checker``, ``float_tol``, ``time_limit_s``, ``language``, ``submissions`` and
        ``skipped_submissions`` added.

    Raises:
        SourceFormatError: the folder or its ``data/`` folder is missing, an ``.in`` has no ``.ans`` (or the other
            way round), ``problem.yaml`` is not YAML or says something this reader cannot use (an interactive
            problem, an unknown ``validation``, a flag without its number), no statement is found, a custom
            validation has no validator or a validator has several source files, or a file is not UTF-8 text.

    Example:
        >>> from pathlib import Path
        >>> import evolvecoder_datasets
        >>> from evolvecoder_datasets.sources import load_problem_package
        >>> fixtures = Path(evolvecoder_datasets.__file__).parents[1] / "tests" / "data" / "problem_packages"
        >>> row = load_problem_package(fixtures / "circle")
        >>> row["id"], len(row["inputs"]), row["float_tol"], row["time_limit_s"]
        ('Package_circle', 5, 1e-06, 1.5)
        >>> [(s["verdict"], s["language"]) for s in load_problem_package(fixtures / "anypath")["submissions"]]
        [('accepted', 'python'), ('accepted', 'cpp'), ('wrong_answer', 'python')]
    """
    package = Path(folder)
    if not package.is_dir():
        raise SourceFormatError(f"{package}: not a problem package folder (it does not exist or is a file)")
    config = _read_config(package)
    validation = _validation(package, config)
    checker = _checker(package, validation)
    row = empty_row(f"Package_{package.resolve().name}", SOURCE, _statement(package))
    row[schema.INPUTS], row[schema.OUTPUTS] = _cases(package)
    submissions, skipped = _submissions(package)
    row[schema.SOLUTIONS] = [
        s["source"] for s in submissions if s["verdict"] == "accepted" and s["language"] == "python"
    ]
    row[schema.CHECKER] = checker
    row[schema.FLOAT_TOL] = None if checker is not None else _float_tolerance(package, config)
    row[schema.TIME_LIMIT] = _time_limit(package, config)
    row[schema.LANGUAGE] = "python"
    row[schema.VALIDATOR] = _input_validator(package)
    row["submissions"] = submissions
    row["skipped_submissions"] = skipped
    return row


def load_problem_packages(folder: str | os.PathLike, *, on_error: str = "raise") -> Dataset:
    """Every problem package below ``folder``, sorted by path, as one ``datasets.Dataset``.

    A package is a folder holding ``problem.yaml`` or ``data/``; the search does not look inside a package, and
    ``folder`` may itself be one. Columns and types are :func:`problem_package_features`.

    Args:
        folder (`str` or `os.PathLike`): a folder of packages (at any depth).
        on_error (`str`, defaults to `"raise"`): ``"raise"`` stops at the first package that cannot be read;
            ``"skip"`` leaves such packages out and logs a warning with the count and the first reasons.

    Returns:
        `datasets.Dataset`: one row per package.

    Raises:
        ConfigError: ``on_error`` is not ``"raise"`` or ``"skip"``.
        SourceFormatError: ``folder`` is not a folder, holds no package (or none that could be read), two packages
            share a folder name (their ids would repeat), or, with ``on_error="raise"``, a package cannot be read.

    Example:
        >>> from pathlib import Path
        >>> import evolvecoder_datasets
        >>> from evolvecoder_datasets.sources import load_problem_packages
        >>> fixtures = Path(evolvecoder_datasets.__file__).parents[1] / "tests" / "data" / "problem_packages"
        >>> ds = load_problem_packages(fixtures)
        >>> list(ds["id"])
        ['Package_anyorder', 'Package_anypath', 'Package_circle', 'Package_sumpair']
        >>> [c and c["contract"] for c in ds["checker"]]
        ['testlib', 'kattis', None, None]
    """
    from datasets import Dataset

    if on_error not in ON_ERROR:
        raise ConfigError(f"on_error must be one of {ON_ERROR}, got {on_error!r}")
    root = Path(folder)
    if not root.is_dir():
        raise SourceFormatError(f"{root}: not a folder of problem packages")
    packages = _package_folders(root)
    if not packages:
        raise SourceFormatError(f"{root}: holds no problem package (a folder with problem.yaml or data/)")
    by_name: dict[str, Path] = {}
    for package in packages:
        if package.name in by_name:
            raise SourceFormatError(
                f"two packages are named {package.name!r} ({by_name[package.name]} and {package}): "
                f"their ids would both be Package_{package.name}"
            )
        by_name[package.name] = package
    rows, reasons = [], []
    for package in packages:
        try:
            rows.append(load_problem_package(package))
        except SourceFormatError as err:
            if on_error == "raise":
                raise
            reasons.append(str(err))
    if reasons:
        logger.warning(
            "problem packages: skipped %d of %d that cannot be read, e.g. %s",
            len(reasons),
            len(packages),
            "; ".join(reasons[:3]),
        )
    if not rows:
        raise SourceFormatError(f"{root}: none of its {len(packages)} problem packages could be read")
    return Dataset.from_list(rows, features=problem_package_features())


def problem_package_features() -> Features:
    """``datasets.Features`` of the rows :func:`load_problem_packages` writes: the seed columns and the package's
    own (``checker`` is a struct or null, ``submissions`` a list of structs). Imports ``datasets`` lazily.

    Example:
        >>> from evolvecoder_datasets.sources.problem_package import problem_package_features
        >>> features = problem_package_features()
        >>> list(features)[10:]
        ['checker', 'float_tol', 'time_limit_s', 'language', 'validator', 'submissions', 'skipped_submissions']
        >>> sorted(features["checker"])
        ['contract', 'language', 'source']
    """
    from datasets import List, Value

    features = seed_features()
    features[schema.CHECKER] = checker_feature()
    features[schema.FLOAT_TOL] = Value("float64")
    features[schema.TIME_LIMIT] = Value("float64")
    features[schema.LANGUAGE] = Value("string")
    features[schema.VALIDATOR] = checker_feature()
    features["submissions"] = List(
        {"verdict": Value("string"), "language": Value("string"), "path": Value("string"), "source": Value("string")}
    )
    features["skipped_submissions"] = Value("int32")
    return features


def _package_folders(root: Path) -> list[Path]:
    """Packages at or below ``root``, in sorted order, not looking inside a package, a hidden folder or a link."""
    if _is_package(root):
        return [root]
    found = []
    for child in sorted(root.iterdir()):
        if child.is_dir() and not child.is_symlink() and not child.name.startswith("."):
            found += _package_folders(child)
    return found


def _is_package(folder: Path) -> bool:
    return (folder / "problem.yaml").is_file() or (folder / "data").is_dir()


def _read_text(path: Path) -> str:
    """The file's text, exactly (no newline translation), or a :class:`SourceFormatError` naming it."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise SourceFormatError(f"{path}: cannot be read ({err.strerror or err})") from err
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SourceFormatError(f"{path}: not UTF-8 text (byte {err.start})") from err


def _read_config(package: Path) -> dict[str, Any]:
    """``problem.yaml`` as a mapping (empty when the package has none)."""
    import yaml

    path = package / "problem.yaml"
    if not path.exists():
        return {}
    try:
        config = yaml.safe_load(_read_text(path))
    except yaml.YAMLError as err:
        raise SourceFormatError(f"{path}: not valid YAML ({' '.join(str(err).split())})") from err
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise SourceFormatError(f"{path}: must be a mapping of keys, got {type(config).__name__}")
    return config


def _validation(package: Path, config: dict[str, Any]) -> str | None:
    """``"default"``, ``"custom"``, or ``None`` when ``problem.yaml`` does not say."""
    path = package / "problem.yaml"
    kind = config.get("type")
    kinds = kind.split() if isinstance(kind, str) else kind if isinstance(kind, list) else []
    value = config.get("validation")
    if value is None:
        words: list[str] = []
    elif isinstance(value, str):
        words = value.split()
    else:
        raise SourceFormatError(f"{path}: validation must be text such as 'default' or 'custom', got {value!r:.60}")
    if "interactive" in words or "interactive" in kinds:
        raise SourceFormatError(f"{path}: interactive problems cannot be judged on stdin/stdout pairs")
    if not words:
        return None
    if words[0] not in ("default", "custom"):
        raise SourceFormatError(f"{path}: validation must start with 'default' or 'custom', got {value!r:.60}")
    return words[0]


def _statement(package: Path) -> str:
    for name in _STATEMENTS:
        path = package / name
        if path.is_file():
            text = _read_text(path).strip()
            if not text:
                raise SourceFormatError(f"{path}: the statement is empty")
            return text
    raise SourceFormatError(f"{package}: no statement; expected one of {', '.join(_STATEMENTS)}")


def _case_key(path: Path, root: Path) -> tuple[str, ...]:
    return path.relative_to(root).parts


def _cases(package: Path) -> tuple[list[str], list[str]]:
    """The inputs and answers of ``data/sample`` then ``data/secret``."""
    data = package / "data"
    if not data.is_dir():
        raise SourceFormatError(f"{data}: missing; a package keeps its test cases in data/sample and data/secret")
    inputs, outputs = [], []
    for group in ("sample", "secret"):
        root = data / group
        if not root.is_dir():
            continue
        visible = [p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")]
        for answer in visible:
            if answer.suffix == ".ans" and not answer.with_suffix(".in").is_file():
                raise SourceFormatError(f"{answer}: has no input file {answer.with_suffix('.in').name}")
        for case in sorted((p for p in visible if p.suffix == ".in"), key=lambda p: _case_key(p, root)):
            answer = case.with_suffix(".ans")
            if not answer.is_file():
                raise SourceFormatError(f"{case}: has no answer file {answer.name}")
            inputs.append(_read_text(case))
            outputs.append(_read_text(answer))
    if not inputs:
        raise SourceFormatError(f"{data}: no test cases (.in with .ans) in data/sample or data/secret")
    return inputs, outputs


def _number(value: Any, *, what: str, path: Path) -> float:
    """A positive finite number from YAML or a text file."""
    try:
        number = float(str(value).strip()) if not isinstance(value, bool) else math.nan
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        raise SourceFormatError(f"{path}: {what} must be a positive number, got {value!r:.60}")
    return number


def _time_limit(package: Path, config: dict[str, Any]) -> float | None:
    """``limits.time_limit`` or ``time_limit`` of ``problem.yaml``, else the ``.timelimit`` file, else None."""
    limits = config.get("limits")
    if limits is not None and not isinstance(limits, dict):
        raise SourceFormatError(f"{package / 'problem.yaml'}: limits must be a mapping, got {limits!r:.60}")
    for value in ((limits or {}).get("time_limit"), config.get("time_limit")):
        if value is not None:
            return _number(value, what="time_limit", path=package / "problem.yaml")
    path = package / ".timelimit"
    if path.is_file():
        return _number(_read_text(path), what="the time limit", path=path)
    return None


def _float_tolerance(package: Path, config: dict[str, Any]) -> float | None:
    """The token compare's tolerance from ``validator_flags``: the larger of the absolute and relative ones set."""
    path = package / "problem.yaml"
    flags = config.get("validator_flags")
    if flags is None:
        return None
    if isinstance(flags, list):
        flags = " ".join(map(str, flags))
    if not isinstance(flags, str):
        raise SourceFormatError(f"{path}: validator_flags must be text, got {flags!r:.60}")
    words = flags.split()
    absolute = relative = None
    for i, word in enumerate(words):
        if word not in _TOLERANCE_FLAGS:
            continue
        if i + 1 == len(words):
            raise SourceFormatError(f"{path}: validator flag {word} needs a number after it")
        value = _number(words[i + 1], what=f"validator flag {word}", path=path)
        if word != "float_relative_tolerance":
            absolute = value
        if word != "float_absolute_tolerance":
            relative = value
    set_ = [t for t in (absolute, relative) if t is not None]
    return max(set_) if set_ else None


def _checker(package: Path, validation: str | None) -> dict[str, str] | None:
    """The package's checker: a Kattis output validator (unless ``validation: default`` says not to use one) or
    a testlib checker; ``None`` when the token compare judges."""
    kattis = None if validation == "default" else _kattis_validator(package)
    testlib = [package / name for name in _TESTLIB_CHECKERS if (package / name).is_file()]
    if len(testlib) > 1:
        raise SourceFormatError(f"{package}: several testlib checkers ({', '.join(map(str, testlib))}); keep one")
    if kattis is not None and testlib:
        raise SourceFormatError(f"{package}: both an output validator and a testlib checker ({testlib[0]}); keep one")
    if testlib:
        return {"source": _read_text(testlib[0]), "language": "cpp", "contract": "testlib"}
    if kattis is not None:
        return kattis
    if validation == "custom":
        raise SourceFormatError(
            f"{package / 'problem.yaml'}: says validation: custom, but the package has no output_validators/ "
            "folder and no testlib checker (checker.cpp)"
        )
    return None


def _kattis_validator(package: Path, kind: str = "output") -> dict[str, str] | None:
    """The one output validator of ``output_validators/`` (a subfolder or loose files) or ``output_validator/``
    (``kind="input"``: the one input validator of ``input_validators/`` or ``input_validator/``)."""
    legacy, current = package / f"{kind}_validators", package / f"{kind}_validator"
    if legacy.is_dir() and current.is_dir():
        raise SourceFormatError(f"{package}: has both {kind}_validators/ and {kind}_validator/; keep one")
    if current.is_dir():
        folder = current
    elif legacy.is_dir():
        # Each subfolder is one validator, and so is each source file lying in output_validators/ itself.
        validators = [p for p in sorted(legacy.iterdir()) if not p.name.startswith(".")
                      and (p.is_dir() or p.suffix in _LANGUAGE_OF)]  # fmt: skip
        if not validators:
            return None
        if len(validators) > 1:
            raise SourceFormatError(
                f"{legacy}: holds several {kind} validators ({', '.join(p.name for p in validators)}); keep one"
            )
        folder = validators[0] if validators[0].is_dir() else legacy
    else:
        return None
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
    sources = [p for p in files if p.suffix in _LANGUAGE_OF]
    if not sources:
        raise SourceFormatError(
            f"{folder}: no C++ or Python source in the {kind} validator (found {[p.name for p in files][:5]})"
        )
    if len(sources) > 1:
        raise SourceFormatError(
            f"{folder}: the {kind} validator has several source files ({', '.join(p.name for p in sources)}); "
            "a checker is stored as one source file"
        )
    source = _read_text(sources[0])
    if sources[0].suffix != ".py":
        source = _inline_headers(sources[0], source, set())
    return {"source": source, "language": _LANGUAGE_OF[sources[0].suffix], "contract": "kattis"}


def _input_validator(package: Path) -> dict[str, str] | None:
    """The package's input validator: a testlib one (``validator.cpp``; exit 0 on a valid input) or the Kattis one
    of ``input_validators/`` (exit 42); ``None`` without one."""
    testlib = [package / name for name in _TESTLIB_VALIDATORS if (package / name).is_file()]
    kattis = _kattis_validator(package, "input")
    if len(testlib) > 1 or (testlib and kattis is not None):
        raise SourceFormatError(f"{package}: several input validators ({', '.join(map(str, testlib))}"
                                f"{' and input_validators/' if kattis else ''}); keep one")
    if testlib:
        return {"source": _inline_headers(testlib[0], _read_text(testlib[0]), set()), "language": "cpp",
                "contract": "testlib"}
    return kattis


def _inline_headers(path: Path, source: str, seen: set[Path]) -> str:
    """``source`` with each ``#include "x.h"`` of a header beside it replaced by the header's text (recursively,
    once per header), so a validator of several files (``validate.cc`` + ``validate.h``, as contest tooling ships
    them) is stored as one source. ``testlib.h`` stays an include: the vendored copy is on the include path."""

    def inline(match: re.Match) -> str:
        name = match.group(1)
        header = (path.parent / name).resolve()
        if name == "testlib.h" or not header.is_file() or not header.is_relative_to(path.parent.resolve()):
            return match.group(0)
        if header in seen:
            return f"/* {name}: included above */"
        seen.add(header)
        return f"/* begin {name} */\n{_inline_headers(header, _read_text(header), seen)}\n/* end {name} */"

    return _QUOTED_INCLUDE.sub(inline, source)


def _submissions(package: Path) -> tuple[list[dict[str, str]], int]:
    """Kept submissions, in :data:`VERDICTS` order then by path, and the number left out."""
    root = package / "submissions"
    if not root.is_dir():
        return [], 0
    kept: list[tuple[int, str, dict[str, str]]] = []
    skipped = 0
    for verdict_folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for entry in sorted(verdict_folder.iterdir()):
            if entry.name.startswith("."):
                continue
            language = _SUBMISSION_LANGUAGE_OF.get(entry.suffix) if entry.is_file() else None
            if verdict_folder.name not in VERDICTS or language is None:
                skipped += 1
                continue
            path = entry.relative_to(package).as_posix()
            submission = {"verdict": verdict_folder.name, "language": language, "path": path}
            submission["source"] = _read_text(entry)
            kept.append((VERDICTS.index(verdict_folder.name), path, submission))
    if skipped:
        logger.debug("%s: left out %d submissions (other languages or verdicts)", package, skipped)
    return [s for _, _, s in sorted(kept, key=lambda k: k[:2])], skipped
