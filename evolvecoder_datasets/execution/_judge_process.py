"""A judge process of the execution service: one fork server per isolation kind, the planner and the judge.

Started by :mod:`.service` with ``subprocess`` (a scrubbed environment, an address-space limit), one per core. It
reads ``("run", settings, job)`` frames on its stdin and answers each with the job's report; it is the only place
that plans tests, decodes program-chosen values and judges. It is disposable: where judging a job fails (an
exception, a ``MemoryError`` against its limit, a crash of the interpreter itself), that job is ``crash``; the
service kills it when a job overruns its CPU budget and starts a fresh one for the next job.

Run: ``python -m evolvecoder_datasets.execution._judge_process ADDRESS_SPACE_BYTES`` (the service does).
"""

from __future__ import annotations

import marshal
import os
import resource
import sys

from ._protocol import SETTINGS, crash_report, encode_report, read_frame, write_frame

_ISOLATION = SETTINGS.index("isolation")
_PYTHON_ENV = SETTINGS.index("python_env")

_MAX_ENGINES = 64


def _limit_address_space(limit: int) -> None:
    """The soft limit only: the fork servers started from here raise it again for their own children."""
    if limit > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))


class _Judge:
    def __init__(self) -> None:
        self.pools: dict = {}
        self.engines: dict = {}

    def pool(self, isolation: str, python_env: str | None = None):
        from ._engine import _Pool

        pool = self.pools.get((isolation, python_env))
        if pool is None:
            pool = self.pools[(isolation, python_env)] = _Pool(isolation, 1, python_env)
        pool.start()
        return pool

    def engine(self, settings: tuple):
        from ._engine import LocalEngine

        engine = self.engines.get(settings)
        if engine is None:
            if len(self.engines) >= _MAX_ENGINES:
                self.engines.clear()
            pool = self.pool(settings[_ISOLATION], settings[_PYTHON_ENV])
            engine = self.engines[settings] = LocalEngine.from_wire(settings, pool)  # the tuple as received
        return engine

    def run(self, settings: tuple, job_bytes: bytes, order: list | None = None) -> bytes:
        """One job's report; ``order`` (from the service's failure counts) runs its tests in that order, the
        report back in the given one."""
        from ._order import _in_given_order, _permuted
        from .sandbox import Job

        job = Job(*marshal.loads(job_bytes))
        isolation = settings[_ISOLATION]
        try:
            engine = self.engine(settings)
            engine.start()
        except Exception as err:  # noqa: BLE001 - a fork server that cannot start: not the program's doing
            return crash_report(job.size, isolation, f"sandbox failure: {err}", infra_error=str(err))
        try:
            if order and sorted(order) == list(range(job.size)):
                return encode_report(_in_given_order(engine.execute(_permuted(job, order), order_failures=False),
                                                     order))  # fmt: skip
            return encode_report(engine.execute(job, order_failures=False))
        except BaseException as err:  # noqa: BLE001 - judging hostile input failed: the job's verdict
            return crash_report(job.size, isolation, f"judge failed: {type(err).__name__}"[:200])

    def info(self) -> tuple:
        """Pids and uids of the fork servers of this interpreter's environment (a ``python_env`` pool's are
        another sandbox's)."""
        pools = [pool for (_, python_env), pool in self.pools.items() if python_env is None]
        pids = [pid for pool in pools for pid in pool.pids]
        uids = [w.uid for pool in pools for w in pool.workers]
        return pids, uids


def main() -> None:
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    in_fd, out_fd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)  # nothing printed by accident lands on the protocol pipe
    _limit_address_space(limit)
    judge = _Judge()
    while True:
        frame = read_frame(in_fd)
        if frame is None:
            break
        request = marshal.loads(frame)
        op = request[0]
        if op == "run":
            reply = judge.run(request[1], request[2], request[3] if len(request) > 3 else None)
        elif op == "warm":
            try:
                judge.pool(request[1])
            except Exception:  # noqa: BLE001, S110 - told at the first job
                pass
            reply = marshal.dumps(judge.info())
        else:
            reply = marshal.dumps(judge.info())
        write_frame(out_fd, reply)
    for pool in judge.pools.values():
        pool.close()


if __name__ == "__main__":
    main()
