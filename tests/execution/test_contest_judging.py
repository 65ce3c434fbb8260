"""Contest judging through the real sandbox: C++ beside Python, checkers under the testlib and Kattis contracts,
and the default token compare.

Every program and checker here runs in the real fork servers (compiles in the toolchain server, checkers in the
checker server), through the public ``Sandbox.run_stdio``. The attack classes: a checker that crashes, loops, lies
in its exit code or writes where it should not cannot make a program pass (the case is ``unexecuted`` and the report
flags an infrastructure failure); a program that floods, writes binary bytes or garbage, or attacks its own binary
or the files a checker reads gets its own verdict.
"""

from __future__ import annotations

import random
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.execution.checkers import Checker, checker_verdict, outputs_match

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ on this machine")

SUM_CPP = r"""
#include <bits/stdc++.h>
using namespace std;
int main() { long long a, b; cin >> a >> b; cout << a + b << "\n"; }
"""
SUM_INT_CPP = SUM_CPP.replace("long long", "int")  # overflows on big cases: a wrong answer, not a crash

# Kattis: any pair of distinct indices (1-based) whose values sum to the target is right.
PAIR_KATTIS = r"""
import sys
given = open(sys.argv[1]).read().split()
n, target, values = int(given[0]), int(given[1]), [int(x) for x in given[2:]]
words = sys.stdin.read().split()
def say(text):
    with open(sys.argv[3] + "judgemessage.txt", "w") as fh:
        fh.write(text)
if len(words) != 2 or not all(w.isdigit() and len(w) < 10 for w in words):
    say("expected two indices"); sys.exit(43)
i, j = int(words[0]), int(words[1])
if not (1 <= i <= n and 1 <= j <= n and i != j and values[i - 1] + values[j - 1] == target):
    say(f"indices {i} {j} do not make {target}"); sys.exit(43)
sys.exit(42)
"""
PAIR_CASES = ["4 10\n1 9 3 7\n", "3 5\n2 3 2\n", "5 0\n-1 1 4 -4 9\n"]
PAIR_ANSWERS = ["1 2\n", "1 2\n", "1 2\n"]
PAIR_FIRST = """
n, t = map(int, input().split()); v = list(map(int, input().split()))
print(*next((i + 1, j + 1) for i in range(n) for j in range(i + 1, n) if v[i] + v[j] == t))
"""
PAIR_LAST_CPP = r"""
#include <bits/stdc++.h>
int main() { int n; long long t; std::cin >> n >> t; std::vector<long long> v(n); for (auto& x : v) std::cin >> x;
  for (int i = n - 1; i >= 0; --i) for (int j = i - 1; j >= 0; --j) if (v[i] + v[j] == t) { printf("%d %d\n", i + 1, j + 1); return 0; } }
"""

# testlib: the same numbers in any order.
ANY_ORDER_TESTLIB = r"""
#include "testlib.h"
#include <algorithm>
#include <vector>
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    int n = inf.readInt();
    std::vector<long long> want(n), got(n);
    for (auto& x : want) x = inf.readLong();
    for (auto& x : got) x = ouf.readLong();
    if (!ouf.seekEof()) quitf(_wa, "extra output");
    std::sort(want.begin(), want.end()); std::sort(got.begin(), got.end());
    if (want != got) quitf(_wa, "not the same numbers");
    quitf(_ok, "%d numbers", n);
}
"""
ORDER_CASES = ["3 5 1 4\n", "1 7\n", "4 2 2 9 -1\n"]
ORDER_ANSWERS = ["1 4 5\n", "7\n", "-1 2 2 9\n"]


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=2, timeout_s=1.0, memory_mb=512) as box:
        yield box


# -- the default compare -----------------------------------------------------------------------------------------
def test_integers_compare_exactly_at_any_tolerance():
    for tol in (None, 1e-9, 1e-6, 0.5, 1e9):
        assert not outputs_match("1000000000", "1000000007", tol)
        assert not outputs_match("999999", "1000000", tol)
        assert not outputs_match("123456789012345678901234567890", "123456789012345678901234567891", tol)
        assert not outputs_match("1.0", "1", tol)  # an integer answer wants an integer
        assert outputs_match("+7", "7", tol) and outputs_match("-0", "0", tol)


def test_a_tolerance_applies_only_to_fractional_or_exponent_answers():
    assert outputs_match("0.3333334", "0.333333", 1e-6)
    assert outputs_match("3.3333e-1", "0.333333", 1e-5)
    assert outputs_match("2", "2.000000", 1e-9)
    assert not outputs_match("0.3334", "0.333333", 1e-6)
    assert not outputs_match("0.3333334", "0.333333", None)  # no tolerance given: text
    for garbage in ("nan", "inf", "-inf", "1_000.0", "0x1p-2", "1e", "."):
        assert not outputs_match(garbage, "0.25", 1e9), garbage


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(10**30), max_value=10**30), st.integers(min_value=-(10**30), max_value=10**30))
def test_distinct_integers_never_match(a, b):
    assert outputs_match(str(a), str(b), 1e-3) == (a == b)


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), st.floats(min_value=1e-9, max_value=1e-2))
def test_fractional_answers_match_within_the_tolerance_and_not_beyond(x, tol):
    expected = f"{x:.6f}"
    value = float(expected)
    scale = max(1.0, abs(value))
    assert outputs_match(repr(value + 0.4 * tol * scale), expected, tol)
    assert not outputs_match(repr(value + 3 * tol * scale), expected, tol)


def test_checker_contracts_map_every_ending():
    assert checker_verdict("testlib", 0, None)[0] == "pass"
    assert [checker_verdict("testlib", c, None)[0] for c in (1, 2, 7)] == ["fail"] * 3
    assert checker_verdict("kattis", 42, None)[0] == "pass" and checker_verdict("kattis", 43, None)[0] == "fail"
    lies = [("testlib", 3), ("testlib", 42), ("testlib", 255), ("kattis", 0), ("kattis", 1), ("kattis", 3)]
    assert {checker_verdict(contract, code, None)[0] for contract, code in lies} == {"checker_failed"}
    for killed in ("cpu", "wall", "output", "signal"):
        assert checker_verdict("testlib", None, killed)[0] == "checker_failed"


def test_bad_jobs_get_a_clear_error():
    with pytest.raises(ConfigError, match="unknown language"):
        Job("x", inputs=["1"], outputs=["1"], language="cobol")
    with pytest.raises(ConfigError, match="stdin/stdout"):
        Job("x = 1", tests=["assert x == 1"], checker=Checker("import sys", "python", "kattis"))
    with pytest.raises(ConfigError, match="contract"):
        Checker("int main() {}", contract="polygon")


# -- Python on stdin/stdout ----------------------------------------------------------------------------------------
def test_a_python_program_failing_its_own_assert_is_an_error_not_a_wrong_answer(sb):
    report = sb.run_stdio("n = int(input())\nassert n < 5\nprint(n)", ["3\n", "9\n"], ["3\n", "9\n"])
    assert report.statuses == ["pass", "error"] and "AssertionError" in report.messages[1]


def test_a_tolerance_in_run_stdio_never_loosens_integers(sb):
    report = sb.run_stdio("print(int(input()) + 7)", ["1000000000\n", "0\n"], ["1000000000\n", "7\n"],
                          float_tol=1e-6)  # fmt: skip
    assert report.statuses == ["fail", "pass"]


# -- C++ -------------------------------------------------------------------------------------------------------------
@needs_gxx
def test_cpp_programs_get_every_contest_verdict(sb):
    cases, answers = ["1 2\n", "2000000000 2000000000\n"], ["3\n", "4000000000\n"]
    assert sb.run_stdio(SUM_CPP, cases, answers, language="cpp").statuses == ["pass", "pass"]
    assert sb.run_stdio(SUM_INT_CPP, cases, answers, language="cpp").statuses == ["pass", "fail"]
    loop = "int main() { volatile unsigned long x = 0; for (;;) x++; }"
    assert sb.run_stdio(loop, cases[:1], answers[:1], language="cpp").statuses == ["timeout"]
    segv = "#include <cstdio>\nint main() { int* p = nullptr; int a; scanf(\"%d\", &a); if (a > 1) *p = a; puts(\"3\"); }"
    report = sb.run_stdio(segv, cases, answers, language="cpp")
    assert report.statuses == ["pass", "crash"] and "segmentation" in report.messages[1]
    throws = "#include <vector>\nint main() { std::vector<int> v(3); return v.at(7); }"
    assert sb.run_stdio(throws, cases[:1], answers[:1], language="cpp").statuses[0] in ("crash", "error")
    exits = "#include <cstdio>\nint main() { puts(\"3\"); return 3; }"
    report = sb.run_stdio(exits, cases[:1], answers[:1], language="cpp")
    assert report.statuses == ["error"] and "exit code 3" in report.messages[0]
    hog = "#include <vector>\nint main() { std::vector<char> v(2000000000, 1); return v[5]; }"
    assert sb.run_stdio(hog, cases[:1], answers[:1], language="cpp").statuses[0] in ("crash", "error")


@needs_gxx
def test_a_compile_error_is_a_syntax_error_with_the_compilers_words(sb):
    report = sb.run_stdio("int main() { return undefined_name; }", ["1\n", "2\n"], ["1\n", "2\n"], language="cpp")
    assert report.statuses == ["syntax_error", "syntax_error"] and "undefined_name" in report.messages[0]
    assert report.infra_error is None  # the program's fault: a reward of 0, not None


@needs_gxx
def test_compiling_has_its_own_limits(sb):
    # Template recursion the compiler gives up on, and an include that never ends: errors, not hangs.
    deep = "template<int N> struct F { enum { v = F<N + 1>::v }; };\nint main() { return F<0>::v; }"
    assert sb.run_stdio(deep, ["1\n"], ["1\n"], language="cpp").statuses == ["syntax_error"]
    endless = '#include "/dev/zero"\nint main() {}'
    assert sb.run_stdio(endless, ["1\n"], ["1\n"], language="cpp").statuses == ["syntax_error"]
    stdin_include = '#include "/dev/stdin"\nint main() {}'  # the compiler's stdin is empty: a program, silent
    assert sb.run_stdio(stdin_include, ["1\n"], ["1\n"], language="cpp").statuses == ["fail"]
    secret = '#include "/etc/shadow"\nint main() {}'
    report = sb.run_stdio(secret, ["1\n"], ["1\n"], language="cpp")
    assert report.statuses == ["syntax_error"] and "root:" not in report.messages[0]


@needs_gxx
def test_a_cpp_program_cannot_change_the_binary_later_cases_run(sb):
    tamper = r"""
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>
int main() {
    int n; scanf("%d", &n);
    const char* junk = "\x7f" "ELF broken";
    const char* paths[] = {"/proc/self/exe", "/proc/self/fd/3", "/proc/self/fd/4"};
    for (const char* path : paths) {
        int fd = open(path, O_WRONLY);
        if (fd >= 0) { write(fd, junk, 10); close(fd); }
    }
    printf("%d\n", n * 2);
}
"""
    report = sb.run_stdio(tamper, ["1\n", "2\n", "3\n"], ["2\n", "4\n", "6\n"], language="cpp")
    assert report.statuses == ["pass", "pass", "pass"]
    assert sb.run_stdio(tamper, ["5\n"], ["10\n"], language="cpp").statuses == ["pass"]  # the cached binary too


# -- checkers ----------------------------------------------------------------------------------------------------------
def test_a_kattis_validator_accepts_every_right_answer_and_rejects_wrong_ones(sb):
    checker = Checker(PAIR_KATTIS, language="python", contract="kattis")
    assert sb.run_stdio(PAIR_FIRST, PAIR_CASES, PAIR_ANSWERS, checker=checker).statuses == ["pass"] * 3
    wrong = "input(); input(); print(1, 1)"
    report = sb.run_stdio(wrong, PAIR_CASES, PAIR_ANSWERS, checker=checker)
    assert report.statuses == ["fail"] * 3 and "do not make" in report.messages[0]
    # The token compare would have rejected the right programs that answer another pair.
    assert sb.run_stdio(PAIR_FIRST, PAIR_CASES, ["9 9\n"] * 3).statuses == ["fail"] * 3


@needs_gxx
def test_a_testlib_checker_in_cpp_judges_cpp_and_python_alike(sb):
    checker = Checker(ANY_ORDER_TESTLIB)  # cpp, testlib
    python = "n, *v = map(int, input().split())\nprint(*sorted(v, reverse=True))"
    assert sb.run_stdio(python, ORDER_CASES, ORDER_ANSWERS, checker=checker).statuses == ["pass"] * 3
    cpp_wrong = r"""
#include <bits/stdc++.h>
int main() { int n; std::cin >> n; std::vector<long long> v(n); for (auto& x : v) std::cin >> x;
  for (int i = 0; i < n; ++i) std::cout << (i ? v[0] : v[i]) << ' '; }
"""
    report = sb.run_stdio(cpp_wrong, ORDER_CASES, ORDER_ANSWERS, language="cpp", checker=checker)
    assert report.statuses == ["fail", "pass", "fail"] and report.infra_error is None
    assert report.messages[2].startswith("checker:")
    extra = sb.run_stdio("n, *v = map(int, input().split())\nprint(*v, 0)", ORDER_CASES, ORDER_ANSWERS,
                         checker=checker)  # fmt: skip
    assert extra.statuses == ["fail"] * 3


HOSTILE_CHECKERS = {
    "crashes": "import sys\nsys.exit(1 // 0)",
    "loops": "while True:\n    pass",
    "sleeps": "import time\ntime.sleep(3600)",
    "kills itself": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
    "exits 0 under kattis": "import sys\nsys.exit(0)",
    "exits 3": "import sys\nsys.exit(3)",
    "floods": "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)",
    "eats memory": "x = bytearray(4 << 30)",
    "forks": "import os\nwhile True:\n    os.fork()",
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "sleeps" else n
                                  for n in sorted(HOSTILE_CHECKERS)])  # (sleeps: two 9.5 s wall limits, CI only)
def test_a_checker_that_fails_never_passes_nor_fails_the_program(sb, name):
    """A checker that fails on the program's output and on the jury's answer too (the second run that tells a broken
    checker from a program's doing) is nobody's verdict: no pass, no fail, the infrastructure flag."""
    checker = Checker(HOSTILE_CHECKERS[name], language="python", contract="kattis")
    report = sb.run_stdio("print(input())", ["1\n", "2\n"], ["1\n", "2\n"], checker=checker)
    assert report.statuses == ["unexecuted", "unexecuted"], (name, report)
    assert report.infra_error and "checker" in report.infra_error
    assert all("checker" in m for m in report.messages)


@needs_gxx
def test_a_checker_that_does_not_compile_is_an_infrastructure_failure(sb):
    report = sb.run_stdio("print(1)", ["x\n"], ["1\n"], checker=Checker("int main( {"))
    assert report.statuses == ["unexecuted"] and "does not compile" in report.infra_error


def test_a_checker_cannot_change_what_the_next_case_is_judged_against(sb):
    # It rewrites the answer file (read-only, a copy) and leaves files behind for the next case: neither counts.
    tamper = r"""
import os, sys
for path in (sys.argv[2], sys.argv[1]):
    try:
        with open(path, "w") as fh:
            fh.write("999")
    except OSError:
        pass
open(os.path.join(os.path.dirname(sys.argv[1]), "..", "planted"), "w").close() if os.access("..", os.W_OK) else None
sys.exit(42 if sys.stdin.read().split() == open(sys.argv[2]).read().split() else 43)
"""
    checker = Checker(tamper, language="python", contract="kattis")
    report = sb.run_stdio("print(input())", ["1\n", "2\n", "3\n"], ["1\n", "5\n", "3\n"], checker=checker)
    assert report.statuses == ["pass", "fail", "pass"]


PROGRAMS_AGAINST_CHECKERS = {
    "binary bytes": "import sys\nsys.stdout.buffer.write(bytes(range(256)) * 4)",
    "garbage tokens": "print('1e999 nan -0 ' + '9' * 5000)",
    "nothing": "pass",
    "a path to the answer": "import glob\nprint(*glob.glob('/tmp/**/answer', recursive=True), '../answer')",
    "planted files": (
        "import os\nfor name in ('answer', 'input', 'output', 'feedback'):\n"
        "    open(name, 'w').write('1 2')\nprint(9, 9)"
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS_AGAINST_CHECKERS))
def test_a_program_that_attacks_the_checker_gets_its_own_verdict(sb, name):
    checker = Checker(PAIR_KATTIS, language="python", contract="kattis")
    report = sb.run_stdio(PROGRAMS_AGAINST_CHECKERS[name], PAIR_CASES, PAIR_ANSWERS, checker=checker)
    assert report.statuses == ["fail"] * 3 and report.infra_error is None, (name, report)


def test_a_flood_is_the_programs_error_before_any_checker_runs(sb):
    checker = Checker(PAIR_KATTIS, language="python", contract="kattis")
    report = sb.run_stdio("while True:\n    print('1 2' * 1000)", PAIR_CASES[:1], PAIR_ANSWERS[:1], checker=checker)
    assert report.statuses == ["error"] and "output" in report.messages[0] and report.infra_error is None


def test_checked_verdicts_agree_with_an_independent_oracle_on_random_cases(sb):
    """Random pair problems, judged by the Kattis validator, against a reading of the problem written here."""
    rng = random.Random(7)
    checker = Checker(PAIR_KATTIS, language="python", contract="kattis")
    cases, answers, truth = [], [], []
    claim = "n, t = map(int, input().split()); v = list(map(int, input().split()))\nprint(1, 2)"
    for _ in range(12):
        values = [rng.randint(-5, 5) for _ in range(rng.randint(2, 5))]
        target = values[0] + values[1] if rng.random() < 0.5 else rng.randint(-10, 10)
        cases.append(f"{len(values)} {target}\n{' '.join(map(str, values))}\n")
        answers.append("1 2\n")
        truth.append(values[0] + values[1] == target)
    report = sb.run_stdio(claim, cases, answers, checker=checker)
    assert report.statuses == ["pass" if ok else "fail" for ok in truth]


def test_an_open_r1_codeforces_checker_is_judged_by_the_score_it_prints(sb):
    """``open-r1/codeforces``' generated checkers: ``checker input answer output``, exit 0, stdout ``1``/``100``."""
    source = """
import sys
given, answer, output = (open(path).read().split() for path in sys.argv[1:4])
n, values = int(given[0]), sorted(map(int, given[1:]))
try:
    said = sorted(map(int, output))
except ValueError:
    said = None
print(100 if said == values else 0)
"""
    checker = Checker(source, language="python", contract="codeforces")
    right = "n, *v = map(int, input().split())\nprint(*v[::-1])"
    report = sb.run_stdio(right, ORDER_CASES, ORDER_ANSWERS, checker=checker)
    assert report.statuses == ["pass"] * 3 and report.infra_error is None
    wrong = sb.run_stdio("n, *v = map(int, input().split())\nprint(*v[1:], 'x')", ORDER_CASES, ORDER_ANSWERS,
                         checker=checker)  # fmt: skip
    assert wrong.statuses == ["fail"] * 3 and "score" in wrong.messages[0]
    crashes = Checker("import sys\nprint(1)\nsys.exit(2)", language="python", contract="codeforces")
    report = sb.run_stdio(right, ORDER_CASES, ORDER_ANSWERS, checker=crashes)
    assert report.statuses[0] == "unexecuted" and report.infra_error.startswith("checker failed")



@needs_gxx
def test_sources_with_or_without_the_precompiled_header_first_are_judged_alike(sb):
    """``bits/stdc++.h`` is precompiled once per toolchain server and used where a source includes it first; a
    source that includes something else first, or defines a macro before it, compiles from the real header."""
    body = "int main() { long long a, b; std::cin >> a >> b; std::cout << a * b << '\\n'; }\n"
    variants = [
        "#include <bits/stdc++.h>\n" + body,
        "#include <cstdio>\n#include <bits/stdc++.h>\n" + body,
        "#define LOCAL_JUDGE 1\n#include <bits/stdc++.h>\n" + body,
        "#include <bits/stdc++.h>\n#define WIDE int\n" + body.replace("long long", "WIDE"),  # overflows
    ]
    verdicts = [sb.run_stdio(v, ["3 4\n", "3000000000 3\n"], ["12\n", "9000000000\n"], language="cpp").statuses
                for v in variants]  # fmt: skip
    assert verdicts == [["pass", "pass"]] * 3 + [["pass", "fail"]]


def test_a_broken_checker_is_told_apart_from_a_failed_sandbox():
    """The execute stage keeps a broken checker's cells (rerunning cannot help) and fails the stage on a sandbox
    failure (a rerun redoes it): the two infra errors must say which they are."""
    from evolvecoder_datasets.execution._engine import _checked
    from evolvecoder_datasets.execution.checkers import CHECKER_FAILED

    class Failing:
        def __init__(self, said):
            self.said = said

        def check(self, checker, cases):
            return {}, self.said

    job = Job("print(1)", inputs=["1\n", "2\n"], outputs=["1\n", "2\n"],
              checker=Checker("import sys", language="python", contract="kattis"))  # fmt: skip
    reply = {"statuses": ["done", "done"], "outputs": ["1\n", "2\n"]}
    broken, infra = _checked(Failing(f"{CHECKER_FAILED}: it does not compile: x"), job, reply, None)
    assert infra.startswith(CHECKER_FAILED) and {s for s, _ in broken.values()} == {"unexecuted"}
    lost, infra = _checked(Failing("the checker's sandbox failed: it died"), job, reply, None)
    assert not infra.startswith(CHECKER_FAILED) and set(lost) == {0, 1}
