"""The server believes nothing its solution process S writes (issue 23), in both modes, through ``Sandbox``.

Each poison program of ``server_poison.py`` owns S (it found the nonce and the result pipe at load time) and writes
what no honest S writes, or hands its work to processes out of the test's own, or leaves a folder nested far deeper
than a recursive remover goes. For each one, on a sandbox with a single worker (so every job meets what the last
one left):

- no test of the poison job passes (each computes a wrong answer or exceeds its limit);
- the job ends within its limits plus a few seconds (nothing S writes moves a deadline);
- the sandbox reports no failure of its own (a program-caused failure is the program's verdict, never infra);
- the worker is clean afterwards: a right program then passes every test and a wrong one fails every test, with
  and without ``stop_on_failure`` (no verdict, frame or stop left over from the poison job).
"""

from __future__ import annotations

import time

import pytest

from evolvecoder_datasets.execution import Job

from .conftest import sandbox_per_mode
from .server_poison import POISON, REAPED_UNSEEN, RIGHT, TESTS, WRONG

LIMITS = {"workers": 1, "timeout_s": 0.5, "wall_timeout_s": 1.5, "memory_mb": 512}  # the wall: 3x the CPU limit
SLACK_S = 5.0


def _bound(n_tests: int) -> float:
    """Limits plus a few seconds: a load, then each test at most its wall-clock limit (tests restart after one)."""
    return 2.0 + n_tests * (LIMITS["wall_timeout_s"] * 1.5 + 2.0) + SLACK_S


single_worker = sandbox_per_mode(**LIMITS)


@pytest.mark.parametrize("name", sorted(POISON))
def test_a_program_that_owns_its_solution_process_gets_no_pass_and_leaves_a_clean_worker(single_worker, name):
    sb = single_worker
    start = time.monotonic()
    poison = sb.run(POISON[name], list(TESTS))
    took = time.monotonic() - start
    assert "pass" not in poison.statuses, (name, poison)
    assert poison.infra_error is None, (name, poison)
    assert took < _bound(len(TESTS)), (name, took, poison)
    right, wrong = sb.run_many([Job(RIGHT, tests=list(TESTS)), Job(WRONG, tests=list(TESTS))])
    assert right.statuses == ["pass"] * len(TESTS), (name, right)
    assert wrong.statuses == ["fail"] * len(TESTS), (name, wrong)
    sb.run(POISON[name], list(TESTS))
    stopped = sb.run_many([Job(RIGHT, tests=list(TESTS), stop_on_failure=True),
                           Job(WRONG, tests=list(TESTS), stop_on_failure=True)])  # fmt: skip
    assert stopped[0].statuses == ["pass"] * len(TESTS), (name, stopped[0])
    # (isolated mode runs a stopping job's tests in a random order weighted by earlier failures: any one may be first)
    assert "fail" in stopped[1].statuses and "pass" not in stopped[1].statuses, (name, stopped[1])


def test_a_stopping_poison_job_leaves_no_stream_for_the_next_job(single_worker):
    """A job that stops at its first failure, whose S floods lines meanwhile, then right and wrong jobs that stop."""
    sb = single_worker
    many = [f"assert double({i}) == {2 * i}" for i in range(1, 30)]
    for name in ("keep_alive_lines_while_sleeping", "garbage_and_truncated_frames", "wait_status_out_of_range"):
        poison = sb.run_many([Job(POISON[name], tests=many, stop_on_failure=True)])[0]
        assert "pass" not in poison.statuses and poison.infra_error is None, (name, poison)
        right, wrong = sb.run_many([Job(RIGHT, tests=many, stop_on_failure=True),
                                    Job(WRONG, tests=many, stop_on_failure=True)])  # fmt: skip
        assert right.statuses == ["pass"] * len(many), (name, right)
        assert "pass" not in wrong.statuses, (name, wrong)


def test_honest_work_in_a_child_or_a_deep_folder_still_passes(single_worker):
    """The controls: the same shapes, within the limits and with right answers, pass (the checks above can fail)."""
    program = ("import os\n"
               "def double(x):\n"
               "    r, w = os.pipe()\n"
               "    pid = os.fork()\n"
               "    if pid == 0:\n"
               "        os.write(w, b'%d' % (2 * x))\n"
               "        os._exit(0)\n"
               "    os.close(w)\n"
               "    value = int(os.read(r, 64))\n"
               "    os.waitpid(pid, 0)\n"
               "    for i in range(300):\n"
               "        os.mkdir('d')\n"
               "        os.chdir('d')\n"
               "    return value\n")
    report = single_worker.run(program, list(TESTS))
    assert report.statuses == ["pass"] * len(TESTS), report
    assert single_worker.run(RIGHT, list(TESTS)).statuses == ["pass"] * len(TESTS)


@pytest.mark.parametrize("name", sorted(REAPED_UNSEEN))
def test_work_in_children_the_kernel_would_reap_unseen_is_counted(single_worker, name):
    """The solution process cannot ignore SIGCHLD (a seccomp filter refuses the change), so no child of a test is
    reaped without its time counted: 0.8 s of work spread over children never passes a 0.5 s limit. Before the
    filter, the chain of short children passed both tests in both modes (the server saw at most one child alive at
    each check)."""
    report = single_worker.run(REAPED_UNSEEN[name], list(TESTS))
    assert "pass" not in report.statuses, report


def test_a_program_is_told_it_cannot_change_sigchld_and_can_still_read_it(single_worker):
    program = ("import signal\n\ndef double(x):\n    assert signal.getsignal(signal.SIGCHLD) == signal.SIG_DFL\n"
               "    signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n    return 2 * x\n")  # fmt: skip
    report = single_worker.run(program, ["assert double(1) == 2"])
    assert report.statuses == ["error"] and "Operation not permitted" in report.messages[0], report


@pytest.mark.parametrize("mode", ["isolated", "fast"])
def test_without_the_filter_the_chain_of_short_children_passes(monkeypatch, mode):
    """What the filter stops (so the test above can fail): a fork server whose solution processes skip it
    (``_forkserver.libc._lock_sigchld`` patched in its bootstrap, through the in-process engine) passes the chain."""
    from evolvecoder_datasets.execution import _engine

    real = _engine.server_command
    patch = "import _forkserver.libc as _l; _l._lock_sigchld = lambda *a: False; "

    def command(isolation: str, python_env: str | None = None) -> list[str]:
        return [arg.replace("_forkserver.main()", patch + "_forkserver.main()") for arg in real(isolation, python_env)]

    monkeypatch.setattr(_engine, "server_command", command)
    with _engine.LocalEngine(mode=mode, **LIMITS) as engine:
        attacked = engine.run_many([Job(REAPED_UNSEEN["a_chain_of_short_children_each_gone_between_checks"],
                                        tests=list(TESTS))])[0]  # fmt: skip
    assert "pass" in attacked.statuses, attacked
