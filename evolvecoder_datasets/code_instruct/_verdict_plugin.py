"""pytest plugin loaded by the verification harness (``-p ecd_verdict``); it writes the machine-readable verdict.

The run's secret key comes through an inherited pipe (``ECD_VERDICT_FD``), never the environment, a file or the
command line: the plugin reads it and closes the pipe when pytest loads it, before any test module is imported, and
removes its variables from the environment. At the end of the session it writes every collected test (with its
line), every collection error and every test phase's outcome to ``ECD_VERDICT_PATH``, signed with an HMAC of that
key; the reader (:func:`~evolvecoder_datasets.code_instruct.verdict.read_verdict`) refuses a file without a valid
signature. A test or solution that kills the interpreter (``os._exit(0)``) leaves no signed file: a crash, never a
pass.

What a test module could reach is kept out of its way (defence in depth: code that shares pytest's interpreter can
walk its frames, and a test that takes ``request`` holds pytest's objects; see docs/threat-model.md):

* nothing under a name a test can import: the hooks and their state (the key, the results) live on one object
  registered with pytest's plugin manager, and the module leaves ``sys.modules`` as soon as pytest registered it;
* a seal: what the ``pytest``, ``_pytest`` and ``pluggy`` modules and their classes hold is recorded when collection
  starts and compared after collection, after each test phase and at the end; a plugin registered after the start
  (``pytest_plugins`` in a test module, a conftest written at import) counts the same. Any change is written into
  the verdict as ``tampered``, which no reader takes as a pass;
* an audit hook (which nothing removes) refuses ``gc``'s object walks, ``sys._current_frames`` and trace or profile
  functions, and records the try;
* the functions the plugin calls are the ones it captured at import (module globals of its own, C functions where
  it matters: the JSON string quoting, the HMAC), so patching ``json``, ``hmac`` or builtins later changes nothing it
  writes.

Standard library and pytest only: it runs in the repository's virtualenv, which has pytest but not this package.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from _json import encode_basestring_ascii as _quote
from importlib import import_module as _import_module
from types import CodeType as _Code
from types import FunctionType as _Function
from types import MethodType as _Method
from types import ModuleType as _Module

from pytest import hookimpl as _hookimpl

try:
    from _hashlib import hmac_digest as _hmac_digest
except ImportError:  # pragma: no cover - an interpreter without OpenSSL: the pure-Python HMAC, captured now
    from hmac import digest as _hmac_digest

# Captured at import, before any test module runs: a test that patches builtins or ``os`` later changes none of them.
_str, _int, _bool, _len, _sorted, _isinstance, _type, _hasattr, _getattr, _list, _dict, _vars, _memoryview = (
    str, int, bool, len, sorted, isinstance, type, hasattr, getattr, list, dict, vars, memoryview)
_repr, _all = repr, all
_open, _write, _close, _replace = os.open, os.write, os.close, os.replace
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
_MODULES = sys.modules
_compile, _path, _module_dict = compile, os.path, _Module.__dict__["__dict__"].__get__
_parse, _any, _TASK_MODULE, _MISSING = ast.parse, any, "task_module", object()
_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")
# Phase outcomes in increasing severity: a test's verdict is the worst of its phases.
_RANK = {"passed": 0, "skipped": 1, "xfailed": 1, "xpassed": 1, "failed": 2, "error": 3}
# What the audit hook refuses: the ways to walk from a test to pytest's objects without holding one.
_REFUSED = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames",
                      "sys.settrace", "sys.setprofile"})
# pytest itself sets these around every test (the assertion plugin's comparison hooks).
_MOVING = frozenset({("_pytest.assertion.util", "_reprcompare"), ("_pytest.assertion.util", "_assertion_pass"),
                     ("_pytest.assertion.util", "_config")})
_MAX_TAMPERED = 64


def _read_key(fd_text: str) -> bytes:
    """The run's key from the inherited pipe, which is closed afterwards (so nothing later reads it again)."""
    if not fd_text.isdigit():
        return b""
    try:
        key = os.read(int(fd_text), 256).strip()
    except OSError:
        key = b""
    try:
        os.close(int(fd_text))
    except OSError:
        pass
    return key


class _Verdict:
    """The hooks and everything they record; one instance, registered with pytest's plugin manager only."""

    def __init__(self, path: str, key: bytes) -> None:
        self.path, self.key = path, key
        self.results: dict = {}
        self.collected: list = []
        self.collect_errors: list = []
        self.missing: set = set()
        self.tampered: list = []
        self.seal: dict = {}
        self.sealed = False
        self.params: list = []  # (id, repr of its parameters) of each parametrized test collected
        self.defs: dict = {}  # test file -> {(name, first line): code} of its module-level and class-level defs
        self.imports: dict = {}  # test file -> [(its name, the solution's name or None for the module)]
        self.solution = None  # ``task_module`` as this plugin imported it, and its names then
        self.exported: dict = {}
        self.importing: tuple = ()  # sys.meta_path, path hooks, sys.path and finder types once the solution loaded

    # -- tampering -----------------------------------------------------------------------------------------------

    def audit(self, event, args):
        if event in _REFUSED:
            self.tamper(f"audit: {event}")
            raise RuntimeError(f"{event} is refused while the verdict plugin runs")

    def tamper(self, what):
        if _len(self.tampered) < _MAX_TAMPERED and what not in self.tampered:
            self.tampered.append(what)

    def take_seal(self):
        """Record what pytest's and pluggy's modules and their own classes hold."""
        for name, module in _list(_MODULES.items()):
            if name in ("pytest", "_pytest", "pluggy") or name.startswith(("_pytest.", "pluggy.")):
                entries = _dict(_vars(module))
                self.seal[name] = (module, entries)
                for attr, value in entries.items():
                    if _isinstance(value, _type) and _getattr(value, "__module__", None) == name:
                        self.seal[(name, attr)] = (value, _dict(_vars(value)))
        self.sealed = True

    def check_seal(self, when):
        if not self.sealed:
            return
        for label, (holder, entries) in self.seal.items():
            if _isinstance(label, _str) and _MODULES.get(label) is not holder:
                self.tamper(f"{when}: sys.modules[{label!r}] replaced")
            now = _vars(holder)
            for attr, value in entries.items():
                if now.get(attr, now) is not value and (label, attr) not in _MOVING:
                    self.tamper(f"{when}: {label}.{attr} changed")
            if _len(now) != _len(entries):  # a new name: pytest only adds flags (a warning shown once)
                for attr, value in _list(now.items()):
                    if attr not in entries and _type(value) is not _bool:
                        self.tamper(f"{when}: {label}.{attr} added")

    # -- hooks ---------------------------------------------------------------------------------------------------

    def pytest_plugin_registered(self, plugin, manager):
        if self.sealed:
            self.tamper(f"a plugin registered during the run: {_type(plugin).__name__}")

    def pytest_collection(self, session):
        """Seal when collection starts: every plugin has started its session (the fixture manager registers then),
        and no test module has been imported yet: the test files are read and compiled now, as written."""
        self.take_seal()
        for arg in session.config.args:
            where = _path.realpath(_str(arg))
            self.defs[where], self.imports[where] = _defs_of(_str(arg))
        if _any(self.imports.values()):  # the solution, imported before any test module can redirect it
            try:
                self.solution = _import_module(_TASK_MODULE)
                self.exported = _dict(_vars(self.solution))
            except BaseException:  # noqa: BLE001 - the test module's own import of it fails the same way
                self.solution = None
            self.importing = (_list(sys.meta_path), _list(sys.path_hooks), _list(sys.path),
                              {_type(f) for f in _list(sys.path_importer_cache.values())})  # fmt: skip

    @_hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        """Inside the assertion plugin's wrapper, which leaves pytest's configuration in a module global during each
        test (``_pytest.assertion.util._config``, and the comparison hook's closure): cleared before the test runs
        (asserts are plain, so nothing reads them), restored by that wrapper afterwards."""
        util = _MODULES.get("_pytest.assertion.util")
        if util is not None:
            util._config = util._reprcompare = util._assertion_pass = None
        return (yield)

    def pytest_collectreport(self, report):
        if report.failed:
            self.collect_errors.append(_str(report.nodeid) or "<session>")
            self.note_missing(report)
        self.check_seal("collection")

    def pytest_collection_finish(self, session):
        for item in session.items:
            self.collected.append((_str(item.nodeid), 0 if self.redirected(item) else self.line_of(item)))
            callspec = _getattr(item, "callspec", None)
            if callspec is not None:  # the values the test is called with, as pytest collected them
                params = callspec.params
                text = _repr(params) if _type(params) is _dict and _literal(params, 0) else "<not a literal>"
                self.params.append((_str(item.nodeid), text))
        self.check_seal("collection")

    def redirected(self, item):
        """Whether what the test module imported from ``task_module`` may not be the solution the split calls: the
        solution this plugin imported first (before any test module ran) is not ``sys.modules``' any more, a name
        the test imported is not the solution's object, or the import system changed (``sys.path``, finders), so a
        plain pytest run would import another ``task_module``. Such a test's line is 0: a collection mismatch."""
        imports = self.imports.get(_path.realpath(_str(_getattr(item, "path", ""))))
        module = _getattr(item, "module", None)
        if not imports or self.solution is None or not _isinstance(module, _Module):
            return _bool(imports)
        meta, hooks, paths, finders = self.importing
        folder = _path.dirname(_path.realpath(_str(_getattr(item, "path", ""))))
        names = _module_dict(module)
        return (_MODULES.get(_TASK_MODULE) is not self.solution or _list(sys.meta_path) != meta
                or _list(sys.path_hooks) != hooks
                or _any(_type(f) not in finders and f is not None for f in _list(sys.path_importer_cache.values()))
                or _any(p not in paths and _path.realpath(_str(p)) != folder for p in _list(sys.path))
                or _any(not self.is_solutions(names.get(mine, _MISSING), theirs) for mine, theirs in imports))

    def is_solutions(self, value, name):
        """Whether ``value`` is the solution's ``name`` (the module for ``None``) as it was first imported, by
        identity; a name the module makes on request (its ``__getattr__``) is taken as it is."""
        expected = self.solution if name is None else self.exported.get(name, _MISSING)
        return expected is _MISSING or value is expected

    def line_of(self, item):
        """The first line of the ``def`` the item runs, or 0: its function must be a plain function of the test
        module whose code is what that ``def`` of the file, read before the module was imported, compiles to, with
        the module's globals. pytest's own location follows ``__wrapped__`` and ``place_as``, so a function made at
        import that names a test's ``def`` there would show that ``def``'s line."""
        function = _getattr(item, "obj", None)
        if _type(function) is _Method:
            function = function.__func__
        module = _getattr(item, "module", None)
        if _type(function) is not _Function or not _isinstance(module, _Module):
            return 0
        code = function.__code__
        written = self.defs.get(_path.realpath(_str(_getattr(item, "path", ""))), {}).get(
            (code.co_name, code.co_firstlineno))
        if written is None or written != code or function.__globals__ is not _module_dict(module):
            return 0
        return _int(code.co_firstlineno)

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.note_missing(report)
        if report.when == "call":
            if _hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "xpassed"
            else:
                outcome = report.outcome
        elif report.failed:
            outcome = "error"  # a fixture failed in setup or teardown
        elif report.skipped:
            outcome = "skipped"
        else:
            outcome = "passed"
        nodeid, outcome = _str(report.nodeid), _str(outcome)
        previous = self.results.get(nodeid)
        if previous is None or _RANK.get(outcome, 3) > _RANK.get(previous, 3):
            self.results[nodeid] = outcome
        self.check_seal(nodeid)

    def pytest_sessionfinish(self, session, exitstatus):
        self.check_seal("end")
        if self.path and self.key:
            self.write(_int(exitstatus))

    # -- the result ----------------------------------------------------------------------------------------------

    def note_missing(self, report):
        """Remember modules a failing import could not find (a diagnosis only; never part of the verdict)."""
        try:
            text = _str(report.longrepr)
        except Exception:  # noqa: BLE001 - a repr that cannot be rendered just gives no diagnosis
            text = ""
        self.missing.update(_NO_MODULE.findall(text))

    def write(self, exitstatus):
        """The payload (JSON written by hand with the captured C quoting), its HMAC on a line of its own."""
        def strings(values):
            return "[" + ",".join(_quote(_str(v)) for v in values) + "]"

        collected = ",".join("[" + _quote(n) + "," + _str(line) + "]" for n, line in self.collected)
        tests = ",".join(_quote(n) + ":" + _quote(o) for n, o in self.results.items())
        payload = ('{"version":2,"exitstatus":' + _str(exitstatus) + ',"collected":[' + collected + "]"
                   + ',"params":[' + ",".join("[" + _quote(n) + "," + _quote(t) + "]" for n, t in self.params) + "]"
                   + ',"collect_errors":' + strings(self.collect_errors) + ',"tests":{' + tests + "}"
                   + ',"missing_modules":' + strings(_sorted(self.missing))
                   + ',"tampered":' + strings(self.tampered) + "}").encode("ascii")
        signed = payload + b"\n" + _hmac_digest(self.key, payload, "sha256").hex().encode("ascii") + b"\n"
        partial = self.path + ".partial"
        fd = _open(partial, _FLAGS, 0o644)
        try:
            view = _memoryview(signed)
            while view:
                view = view[_write(fd, view):]
        finally:
            _close(fd)
        _replace(partial, self.path)


# The types whose repr is Python's own and reads back as the same value: a parameter of any other type (a ``str``
# subclass whose ``__repr__`` shows another text) matches no written-out value.
_LITERALS = frozenset({str, bytes, int, float, complex, bool, type(None)})
_CONTAINERS = frozenset({tuple, list, set, frozenset})


def _literal(value, depth):
    """Whether ``value`` is built of exact literal types only (at most 50 levels deep)."""
    kind = _type(value)
    if kind in _LITERALS:
        return True
    if depth > 50:
        return False
    if kind in _CONTAINERS:
        return _all(_literal(item, depth + 1) for item in _list(value))
    if kind is _dict:
        return _all(_literal(k, depth + 1) and _literal(v, depth + 1) for k, v in _list(_dict.items(value)))
    return False


def _defs_of(path):
    """``{(name, first line): code}`` of the functions a test file defines at module level and in its module-level
    classes, compiled from the file as it is now, and the names its module-level imports bind from ``task_module``
    (empty when it cannot be read or compiled)."""
    try:
        with open(path, "rb") as handle:
            source = handle.read()
        module, tree = _compile(source, path, "exec", dont_inherit=True), _parse(source)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}, []
    imports = []
    for stmt in tree.body:
        if _type(stmt) is ast.ImportFrom and stmt.module == _TASK_MODULE and not stmt.level:
            imports += [(a.asname or a.name, a.name) for a in stmt.names if a.name != "*"]
        elif _type(stmt) is ast.Import:
            imports += [(a.asname or a.name, None) for a in stmt.names if a.name == _TASK_MODULE]
    found = {}
    for const in module.co_consts:
        if _type(const) is _Code:
            found[(const.co_name, const.co_firstlineno)] = const
            for inner in const.co_consts:  # a class body's methods
                if _type(inner) is _Code and const.co_flags & 0x2 == 0:  # class bodies have no CO_NEWLOCALS
                    found[(inner.co_name, inner.co_firstlineno)] = inner
    return found, imports


_PENDING = [_Verdict(os.environ.pop("ECD_VERDICT_PATH", ""), _read_key(os.environ.pop("ECD_VERDICT_FD", "")))]


def pytest_addhooks(pluginmanager):
    """Register the hooks' object once (and, in a harness run, its audit hook: only a process pytest loaded this
    plugin into gets one), then leave ``sys.modules``: afterwards no import or module attribute leads to it."""
    if _PENDING:
        verdict = _PENDING.pop()
        if verdict.path and verdict.key:
            sys.addaudithook(verdict.audit)
        pluginmanager.register(verdict, "ecd_verdict_hooks")
    _MODULES.pop(__name__, None)
