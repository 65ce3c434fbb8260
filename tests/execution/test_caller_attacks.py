"""The caller class of attacks: hostile tests and program-chosen values aimed at the process that asks for verdicts.

Tests are model-written and a program chooses the bytes of its values, so planning, decoding and judging are
hostile-input work. Each attack here once crashed, stalled, bloated or read the caller (a GRPO trainer, a recipe's
driver) when the judge ran inside it: a segfault at planning or judge time, an exception out of the value
decoder, CPU and memory bombs in the judge's part of a test, quadratic decoding, a test that reads the caller's
environment, a test that fans out into many helper processes. Now the judge runs in the execution service, so for
each, through every entry point (``Sandbox.run`` in both modes, ``run_tests``, the binary reward in both modes):
the caller's process survives, its own CPU time and memory stay small (read from its rusage and ``/proc``), and
every test gets a verdict, never an exception nor an infrastructure error.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from evolvecoder_datasets.execution import Job, Sandbox, run_tests
from evolvecoder_datasets.rewards import make_code_reward
from evolvecoder_datasets.schema import STATUS_NAMES

SECRET = "caller-secret-7f3a9"
IDENTITY = "def f(x):\n    return x\n"

# (name, program, tests): tests whose judge's part attacks whoever judges.
ATTACKS = [
    ("reduce_zip_segfault_at_judge_time", IDENTITY,
     ["import functools\nassert functools.reduce(zip, [[f(1)]] * 300000) is not None",
      "import functools\nz = functools.reduce(zip, [[1]] * 300000, [f(1)])\nassert list(z) != [1]"]),
    ("reduce_zip_segfault_at_planning_time", IDENTITY,
     ["import functools\nassert f(1) == len(list(functools.reduce(zip, [[1]] * 300000)))",
      "assert f(1) == " + "[" * 180 + "1" + "]" * 180]),
    ("decoder_range_overflow", "def f(x):\n    return range(10 ** 20)\n",
     ["assert len(f(1)) == 3", "assert f(1) == range(3)", "assert f(1)[-1] == 5"]),
    ("decoder_huge_floats", "def f(x):\n    return [1e308 * 10, -1e308 * 10, float('nan'), 10 ** 4000]\n",
     ["assert f(1) == [1.0]", "assert round(f(1)[0]) == 1", "assert int(f(1)[3] * 1.0) == 3"]),
    ("cpu_bomb_repeated_squaring", IDENTITY,
     ["x = f(3)\nfor _ in range(40):\n    x = x * x\nassert x > 0",
      "x = f(7)\nx = x ** 10 ** 8\nassert x != 1"]),
    ("cpu_bomb_fraction_power", IDENTITY,
     ["from fractions import Fraction\nassert Fraction(3, 2) ** 10 ** 9 != f(1)",
      "from fractions import Fraction\nassert Fraction(f(3), 2) ** (10 ** 8) > 0"]),
    ("cpu_bomb_math_prod", IDENTITY,
     ["import math\nassert math.prod(range(1, 500000)) != f(1)",
      "import math\nassert math.factorial(f(10 ** 6)) > 0"]),
    ("cpu_bomb_decimal_round", IDENTITY,
     ["from decimal import Decimal\nassert round(Decimal('1E+500000')) != f(1)",
      "from decimal import Decimal\nassert round(Decimal(f('9E+400000'))) > 0"]),
    ("memory_bomb_in_judge", IDENTITY,
     ["assert [f(0)] * (10 ** 10) != []", "assert 'a' * f(8 * 10 ** 9) != ''",
      "assert len(bytes(f(6 * 10 ** 9))) > 0"]),
    ("quadratic_decoding_equal_hashes", "def f(x):\n    return [i * (2 ** 61 - 1) for i in range(x)]\n",
     ["assert len(set(f(60000))) == 60000", "assert len({v: 1 for v in f(60000)}) > 0"]),
    ("environment_read_by_str_format", IDENTITY,
     ["assert f('{0.__class__.__init__.__globals__}'.format(f)) == 1",
      "import os\nassert f(1) == '{0}'.format(os.environ)",
      "assert f(1) == '{0.__globals__[os].environ}'.format(f)",
      "import os\nassert f(os.environ.get('ECD_CALLER_SECRET')) is None"]),
    ("fan_out_into_helper_processes", "def f(x):\n    return 'a' * (x % 3 + 1)\n",
     ["import re\nfor i in range(120):\n    assert re.fullmatch('a+', f(i))",
      "import re\nassert all(re.fullmatch('a+', f(i)) for i in [" + ", ".join(map(str, range(120))) + "])"]),
]


def _caller_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _caller_rss_mib() -> float:
    with open("/proc/self/status") as fh:
        return int(fh.read().split("VmRSS:")[1].split()[0]) / 1024


@pytest.fixture(autouse=True)
def caller_secret(monkeypatch):
    monkeypatch.setenv("ECD_CALLER_SECRET", SECRET)


def _assert_verdicts(report, n: int) -> None:
    assert len(report.statuses) == n and report.infra_error is None, report
    assert all(s in STATUS_NAMES for s in report.statuses), report.statuses
    assert all(SECRET not in m for m in report.messages), report.messages


class _Bounded:
    """The caller's own CPU time and resident memory across a block: small, whatever the attack costs the judge."""

    def __enter__(self):
        self.cpu, self.rss = _caller_cpu_s(), _caller_rss_mib()
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            cpu, grown = _caller_cpu_s() - self.cpu, _caller_rss_mib() - self.rss
            # In the caller these attacks cost 5-24 s of CPU each, or 4-8 GB: here a round trip's worth.
            assert cpu < 1.0, f"the caller spent {cpu:.2f} s of CPU"
            assert grown < 64, f"the caller grew by {grown:.0f} MiB"


# The judge runs outside the sandbox in both modes: the default run sends every attack through the fast mode and
# the fast reward; CI (slow tests) also through the isolated mode and the other entry points (~14 s each).
@pytest.mark.parametrize("mode", [pytest.param("isolated", marks=pytest.mark.slow), "fast"])
def test_every_caller_attack_gets_verdicts_through_sandbox_run(mode):
    with Sandbox(workers=2, timeout_s=1.0, mode=mode) as sb:
        sb.run(IDENTITY, ["assert f(1) == 1"])  # started: what follows is the attacks' cost alone
        for _, program, tests in ATTACKS:
            with _Bounded():
                report = sb.run(program, tests)
            _assert_verdicts(report, len(tests))
        assert sb.run(IDENTITY, ["assert f(2) == 2", "assert f(2) == 3"]).statuses == ["pass", "fail"]


@pytest.mark.slow
def test_a_batch_of_every_attack_gets_verdicts_through_run_many():
    jobs = [Job(program, tests=tests) for _, program, tests in ATTACKS]
    jobs += [Job(program, tests=tests, stop_on_failure=True) for _, program, tests in ATTACKS]
    with Sandbox(workers=2, timeout_s=1.0) as sb:
        sb.run(IDENTITY, ["assert f(1) == 1"])
        with _Bounded():
            reports = sb.run_many(jobs)
    for job, report in zip(jobs, reports):
        _assert_verdicts(report, len(job.tests))


@pytest.mark.slow
def test_every_caller_attack_gets_verdicts_through_run_tests():
    run_tests(IDENTITY, ["assert f(1) == 1"])
    for _, program, tests in ATTACKS:
        with _Bounded():
            report = run_tests(program, tests)
        _assert_verdicts(report, len(tests))


@pytest.mark.parametrize("mode", [pytest.param("isolated", marks=pytest.mark.slow), "fast"])
def test_every_caller_attack_gets_a_reward_through_code_reward(mode):
    reward = make_code_reward(mode=mode, timeout_s=1.0, workers=2)
    assert reward(completions=[f"```python\n{IDENTITY}```"], tests=[["assert f(1) == 1"]]) == [1.0]
    completions = [f"```python\n{program}```" for _, program, _ in ATTACKS]
    with _Bounded():
        values = reward(completions=completions, tests=[tests for _, _, tests in ATTACKS])
    assert len(values) == len(ATTACKS) and all(isinstance(v, float) for v in values), values


def test_the_service_holds_no_variable_of_the_caller():
    """The judge's process is what a test's ``str.format`` could read: the service and its judges were started
    with an environment of their own, so a secret of the caller is not in any of them."""
    with Sandbox(workers=1, isolation="none") as sb:
        servers = sb.server_pids
    judges = {_parent(pid) for pid in servers}
    service = {_parent(pid) for pid in judges}
    assert len(service) == 1 and os.getpid() not in judges | service
    for pid in judges | service:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            environ = fh.read()
        assert SECRET.encode() not in environ and b"ECD_CALLER_SECRET" not in environ
        assert os.environ.get("HOME", "~").encode() not in environ.split(b"\0")


def test_the_caller_never_imports_the_judge_the_planner_or_the_fork_server():
    """What runs a program's values lives in the service: a caller that runs jobs and rewards loads none of it."""
    script = (
        "import sys\n"
        "from evolvecoder_datasets.execution import Sandbox, run_tests\n"
        "from evolvecoder_datasets.rewards import code_reward\n"
        "with Sandbox(workers=1) as sb:\n"
        "    assert sb.run('def f():\\n    return 1', ['assert f() == 1']).statuses == ['pass']\n"
        "    assert sb.run_stdio('print(1)', ['\\n'], ['1\\n']).statuses == ['pass']\n"
        "assert run_tests('x = 1', ['import re\\nassert re.fullmatch(\"1\", str(x))']).statuses == ['pass']\n"
        "assert code_reward(completions=['```python\\nx = 1\\n```'], tests=[['assert x == 1']]) == [1.0]\n"
        "loaded = [m for m in sys.modules if m.endswith(('_wire', '_wire_decode', 'verdicts', '_engine', '_inside'))\n"
        "          or '._forkserver' in m or '.judge' in m]\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.getcwd()}, check=True)  # fmt: skip
    assert out.stdout.strip() == "[]", out.stdout + out.stderr[-2000:]


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[1])
