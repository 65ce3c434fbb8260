"""Limits and entering a child: the rlimits and uid of a job's processes, and what every child inherits.

:class:`Limits` is read from a job (``Limits.of``), or sent whole to a solution process cloned from the zygote
(``zygote.spawn_spec``); ``_enter_child`` is the set-up of a solution process (session, fds, limits, cwd, uid);
``_prepare_server_process`` puts streams, environment and signal dispositions in their final state once in the
server, so that no child pays for them.
"""

from __future__ import annotations

import os
import resource
import signal
import sys

from .job import Job, ProgramJob, _Record
from .pristine import _close, _isinstance, pin_builtins

pin_builtins(globals())


def _devnull_std() -> None:
    fd = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        if fd != target:
            os.dup2(fd, target)
    if fd > 2:
        _close(fd)


class Limits(_Record):
    """Resource limits applied in the solution child (and inherited by its grandchildren): bytes of address space,
    of a file written, open files, processes of the uid, the uid (None: this server's own) and CPU seconds.

    Example:
        >>> from evolvecoder_datasets.execution._forkserver.job import WARM_UP, AssertJob
        >>> limits = Limits.of(AssertJob.parse(WARM_UP))
        >>> limits.cpu, limits.memory >> 20, Limits.parse(limits.frame()) == limits
        (9, 1024, True)
    """

    memory: int
    fsize: int
    nofile: int
    nproc: int
    uid: int | None
    cpu: int

    @classmethod
    def of(cls, job: Job) -> Limits:
        """The limits of ``job``'s processes.

        The kernel's CPU cap per process is a backstop that holds even when the supervising child runs the
        program's code: in fast mode the solution child runs every test; otherwise each process runs one (a
        compile's or a checker's tool included: those jobs count no tests here).
        """
        n = job.size if _isinstance(job, ProgramJob) else 0
        share = n * job.timeout_s if job.fast else job.timeout_s + 0.01 * n
        return cls(memory=job.memory_mb * 1024 * 1024, fsize=job.max_output_bytes, nofile=job.max_open_files,
                   nproc=job.max_processes, uid=job.uid, cpu=int(job.load_timeout_s + share + 2.0) + 1)  # fmt: skip

    def apply(self) -> None:
        for limit, value in (
            (resource.RLIMIT_AS, self.memory),
            (resource.RLIMIT_FSIZE, self.fsize),
            (resource.RLIMIT_NOFILE, self.nofile),
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_NPROC, self.nproc),
            (resource.RLIMIT_CPU, self.cpu),
        ):
            if value and value > 0:
                try:
                    resource.setrlimit(limit, (value, value + 1 if limit == resource.RLIMIT_CPU else value))
                except (ValueError, OSError):
                    pass

    def drop_privileges(self) -> bool:
        if self.uid is None or os.geteuid() != 0:
            return False
        try:
            os.setgroups([])
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)
        except OSError:
            return False
        return True


_CHILD_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
              "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # fmt: skip


def _enter_child(limits: Limits, keep_fd: int, workdir: str, *, session: bool, also_keep: int = -1) -> None:
    """Set-up of a solution child: session, fds, limits, cwd, uid.

    Streams, environment and signal dispositions were put in their final state once in the server (see
    :func:`_prepare_server_process`), so a child inherits them instead of paying for them on every job: after a
    fork every page a child writes is a copy, and this set-up runs once per program.
    """
    if session:
        os.setsid()
    low = 3
    for fd in sorted(f for f in (keep_fd, also_keep) if f >= 0):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)
    limits.apply()
    os.chdir(workdir)
    limits.drop_privileges()


_CHILD_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGALRM, signal.SIGCHLD)


def _prepare_server_process(workdir: str) -> None:
    """What every child should inherit: fds 0-2 and sys streams on /dev/null, the children's environment (nothing
    of the caller's), default signal dispositions."""
    _devnull_std()
    sys.stdin = open(0, "r", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    os.environ.clear()
    os.environ.update(_CHILD_ENV)
    os.environ["HOME"] = workdir
    os.environ["TMPDIR"] = workdir
    for sig in _CHILD_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
