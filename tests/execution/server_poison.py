"""Programs that own their solution process S and turn what it writes against the server (issue 23's classes).

Each one reaches the result pipe and the run's nonce the way any program can (walking its frames at load time) and
then writes lines no honest S writes: keep-alive lines, a second load line, marks that are not numbers, wait
statuses out of range, truncated frames, garbage. Others hand a test's work to a forked child, switch the server's
supervision off, or nest folders deeper than any remover's recursion. Every one of them computes a wrong answer
(``double`` should return ``2 * x``), so a ``pass`` anywhere is a judge failure; the honest controls below pass.
"""

from __future__ import annotations

import textwrap

TESTS = ("assert double(1) == 2", "assert double(2) == 4", "assert double(3) == 6")

RIGHT = "def double(x):\n    return 2 * x\n"
WRONG = "def double(x):\n    return 2 * x + 1\n"

# The nonce and the result pipe, found at load time in S's frames (what any program can reach).
_HARNESS = textwrap.dedent('''
    import os, sys, time
    _N = _W = None
    _fr = sys._getframe()
    while _fr is not None:
        if "nonce" in _fr.f_locals and "wfd" in _fr.f_locals:
            _N, _W = _fr.f_locals["nonce"].encode(), _fr.f_locals["wfd"]
            break
        _fr = _fr.f_back
    del _fr
    def _say(line):
        if _W is not None:
            try:
                os.write(_W, _N + b" " + line + b"\\n")
            except OSError:
                pass
    def _burn(seconds):
        end = time.process_time() + seconds
        n = 0
        while time.process_time() < end:
            n += 1
        return n
    def _short_children():
        for _ in range(20):   # 0.8 s in all, 0.04 s each, every one ended before the server's next check
            if os.fork() == 0:
                _burn(0.04)
                os._exit(0)
            time.sleep(0.06)
''')


def _p(body: str) -> str:
    return _HARNESS + textwrap.dedent(body)


#: name -> program. Each keeps a job busy, lies, or breaks the server's reading; none may pass or hold a job past
#: its limits plus a few seconds.
POISON = {
    # -- time: nothing S writes extends a deadline ------------------------------------------------------------
    "keep_alive_lines_while_sleeping": _p('''
        def double(x):
            for _ in range(400):
                _say(b"R 999 pass = - 0")
                _say(b"O %d -" % x)
                time.sleep(0.05)
            return 2 * x
    '''),
    "keep_alive_done_lines_while_sleeping": _p('''
        def double(x):
            for _ in range(400):
                _say(b"D 999 0 0 -")
                time.sleep(0.05)
            return 2 * x
    '''),
    "second_load_line_resets_the_cpu_baseline": _p('''
        def double(x):
            for _ in range(40):
                _burn(0.1)
                _say(b"L %r" % time.process_time())
            return 2 * x
    '''),
    "burns_in_a_forked_child_and_waits": _p('''
        def double(x):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                _burn(0.8)
                os.write(w, b"%d" % (2 * x))
                os._exit(0)
            os.close(w)
            value = int(os.read(r, 64))
            os.waitpid(pid, 0)
            return value
    '''),
    "burns_in_a_forked_child_left_unreaped": _p('''
        def double(x):
            r, w = os.pipe()
            if os.fork() == 0:
                _burn(0.8)
                os.write(w, b"%d" % (2 * x))
                os._exit(0)
            os.close(w)
            return int(os.read(r, 64))
    '''),
    "burns_in_a_double_forked_grandchild": _p('''
        def double(x):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                if os.fork() == 0:
                    _burn(0.8)
                    os.write(w, b"%d" % (2 * x))
                    os._exit(0)
                os._exit(0)
            os.waitpid(pid, 0)
            os.close(w)
            return int(os.read(r, 64))
    '''),
    "turns_the_servers_supervision_off": _p('''
        _fs = sys.modules.get("_forkserver.libc")  # where the clone system call the tests' processes need lives
        if _fs is not None and hasattr(_fs, "_SYSCALL"):
            _fs._SYSCALL = None          # S would fork and time its tests itself, and say so on its load line
        def double(x):
            _burn(0.8)
            return 2 * x
    '''),
    # -- every line parsed by a total function ----------------------------------------------------------------
    "wait_status_out_of_range": _p('''
        def double(x):
            _say(b"D %d 99999999999999999999999999 0 -" % (x - 1))
            _say(b"D 0 -5 0 -")
            return 2 * x + 1
    '''),
    "cpu_mark_not_a_number": _p('''
        def double(x):
            _say(b"R %d value = - nan" % (x - 1))
            _say(b"R %d value = - inf" % (x - 1))
            _say(b"L -1e400")
            return 2 * x + 1
    '''),
    "garbage_and_truncated_frames": _p('''
        def double(x):
            _say(b"\\xff\\xfe garbage \\x00")
            _say(b"Z 1 2 3")
            _say(b"R")
            _say(b"V %d 1f 999999" % (x - 1))
            os.write(_W or 1, b"half a line without its end")
            return 2 * x + 1
    '''),
    "claims_every_test_passed": _p('''
        def double(x):
            _say(b"R %d pass = - 0" % (x - 1))
            _say(b"X pass =")
            return 2 * x + 1
    '''),
    "huge_identity_and_counts": _p('''
        def double(x):
            _say(b"V %d %s 4" % (x - 1, b"f" * 400))
            _say(b"R %d value = %s 0" % (x - 1, b"QUFB" * 10))
            _say(b"U")
            return 2 * x + 1
    '''),
    # -- the working folder, whatever a program leaves there --------------------------------------------------
    "nests_folders_far_deeper_than_any_recursion": _p('''
        def double(x):
            base = os.getcwd()
            fd = os.open(".", os.O_RDONLY)
            for i in range(700):
                os.mkdir("d", dir_fd=fd)
                inner = os.open("d", os.O_RDONLY, dir_fd=fd)
                os.close(fd)
                fd = inner
            os.symlink("/", "root-link", dir_fd=fd)
            os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=fd)
            os.chdir(base)
            os.chmod("d", 0)
            return 2 * x + 1
    '''),
}

#: Work in children the kernel would reap without counting them: a child whose parent ignores SIGCHLD (or sets
#: SA_NOCLDWAIT) is reaped at its exit and its time is in no one's account. Each returns the right value after work
#: worth more than the limit (so ``pass`` is wrong: its honest run times out). The solution process keeps SIGCHLD at
#: its default with a seccomp filter (``_forkserver/libc.py``), so the change fails and the children are counted.
REAPED_UNSEEN = {
    "burns_in_a_child_the_kernel_reaps": _p('''
        import signal
        def double(x):
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # the child is reaped by the kernel, counted by no one
            r, w = os.pipe()
            if os.fork() == 0:
                _burn(0.8)
                os.write(w, b"%d" % (2 * x))
                os._exit(0)
            os.close(w)
            value = int(os.read(r, 64))
            time.sleep(0.05)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            return value
    '''),
    "a_chain_of_short_children_each_gone_between_checks": _p('''
        import signal
        def double(x):
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_IGN)
            except OSError:
                pass   # refused: go on as if it had worked
            _short_children()
            return 2 * x
    '''),
    "sa_nocldwait_through_libc": _p('''
        import ctypes, signal
        _libc = ctypes.CDLL(None, use_errno=True)
        def double(x):
            _libc.signal(signal.SIGCHLD, 1)   # SIG_IGN through libc's own rt_sigaction call
            act = ctypes.create_string_buffer(152)
            ctypes.memmove(ctypes.addressof(act) + 136, ctypes.c_ulong(2).value.to_bytes(8, "little"), 8)  # SA_NOCLDWAIT
            _libc.sigaction(signal.SIGCHLD, act, None)
            _short_children()
            return 2 * x
    '''),
    "a_child_that_ignores_sigchld_for_its_own_children": _p('''
        import signal
        def double(x):
            if os.fork() == 0:   # reaped by the test as usual; its own children would not be counted in it
                try:
                    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
                except OSError:
                    pass
                _short_children()
                os._exit(0)
            os.wait()
            return 2 * x
    '''),
}

#: Where a program can only lose (its own tests become crashes or timeouts): asserted for every poison program.
NEVER_PASS = {name: TESTS for name in POISON}
