"""Isolated mode: every test starts from the loaded program's state, on disk as in memory.

Each test runs in a fresh fork of the loaded program, so memory never crosses tests. Files are shared by the
folders a program can write (its working folder, which is also HOME and TMPDIR, and ``/tmp``, ``/var/tmp``,
``/dev/shm``): before each test the solution process removes what the last test added and puts back what the
program itself wrote while it loaded. Each program below tries to hand something from test 0 to test 1 through the
file system; test 1 must see the state right after loading.
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.execution import Sandbox

ATTACKS = {
    # A file in the working folder, then the folder's modification time set back so no change shows.
    "mtime_set_back": """
import os
def probe(i):
    if i == 0:
        st = os.stat(".")
        open("note.txt", "w").write("from test 0")
        os.utime(".", ns=(st.st_atime_ns, st.st_mtime_ns))
        return "done"
    return "seen" if os.path.exists("note.txt") else "clean"
""",
    # A file added inside a folder the program made while loading: the top folder does not change.
    "inside_a_loaded_folder": """
import os
os.makedirs("cache/deeper", exist_ok=True)
def probe(i):
    if i == 0:
        open("cache/deeper/note.txt", "w").write("from test 0")
        return "done"
    return "seen" if os.path.exists("cache/deeper/note.txt") else "clean"
""",
    # A file the program wrote while loading, rewritten by test 0.
    "loaded_file_rewritten": """
import os
open("state.txt", "w").write("clean")
def probe(i):
    if i == 0:
        open("state.txt", "w").write("seen")
        return "done"
    return open("state.txt").read()
""",
    # A loaded file removed by test 0.
    "loaded_file_removed": """
import os
open("state.txt", "w").write("clean")
def probe(i):
    if i == 0:
        os.remove("state.txt")
        return "done"
    return open("state.txt").read() if os.path.exists("state.txt") else "seen"
""",
    # A link made while loading, pointed elsewhere by test 0.
    "loaded_link_repointed": """
import os
open("a.txt", "w").write("clean")
open("b.txt", "w").write("seen")
os.symlink("a.txt", "current")
def probe(i):
    if i == 0:
        os.remove("current")
        os.symlink("b.txt", "current")
        return "done"
    return open("current").read()
""",
}


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=2, timeout_s=1.0, mode="isolated") as box:
        yield box


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_no_file_state_crosses_from_one_test_to_the_next(sb, name):
    report = sb.run(ATTACKS[name], ['assert probe(0) == "done"', 'assert probe(1) == "clean"',
                                    'assert probe(2) == "clean"'])  # fmt: skip
    assert report.statuses == ["pass", "pass", "pass"], report.messages


SCRATCH = """
import os
made = []
for folder in ("/tmp", "/dev/shm", "/var/tmp"):
    try:
        open(folder + "/ecd-state-{tag}.txt", "w").write("clean")
        made.append(folder + "/ecd-state-{tag}.txt")
    except OSError:
        pass
def probe(i):
    if i == 0:
        for path in made:
            open(path, "w").write("seen")
        return len(made)
    return "seen" if any(open(p).read() == "seen" for p in made if os.path.exists(p)) else "clean"
"""


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_no_state_crosses_through_the_scratch_folders():
    """Bubblewrap gives the uid no write access to ``/tmp``, ``/var/tmp`` or ``/dev/shm``; without isolation they
    are the host's, shared and writable, and loaded files there are put back too."""
    import os

    with Sandbox(workers=1, timeout_s=1.0, mode="isolated", isolation="none") as box:
        report = box.run(SCRATCH.replace("{tag}", str(os.getpid())),
                         ["assert probe(0) >= 1", 'assert probe(1) == "clean"', 'assert probe(2) == "clean"'])
    assert report.statuses == ["pass", "pass", "pass"], report.messages


def test_many_quick_tests_each_start_clean(sb):
    """Changes made within the same clock tick as the last cleaning are still seen (change times, not coarse
    modification times): 40 tests back to back, each adds a file and checks that no earlier one is there."""
    program = ("import os\n"
               "def step(i):\n"
               "    left = sorted(os.listdir('.'))\n"
               "    open(f'mark{i}', 'w').close()\n"
               "    return left\n")
    report = sb.run(program, [f"assert step({i}) == []" for i in range(40)])
    assert report.statuses == ["pass"] * 40, [m for m in report.messages if m]


def test_loaded_files_are_there_for_every_test(sb):
    program = ("import os\n"
               "os.makedirs('data', exist_ok=True)\n"
               "open('data/table.txt', 'w').write('1 2 3')\n"
               "def total():\n"
               "    value = sum(map(int, open('data/table.txt').read().split()))\n"
               "    open('data/table.txt', 'w').write('100')\n"
               "    return value\n")
    assert sb.run(program, ["assert total() == 6"] * 5).statuses == ["pass"] * 5


def test_quick_tests_leave_nothing_for_the_next_even_within_one_clock_tick():
    """Tests of a few microseconds each: a folder's change time may not move between two of them (tmpfs stamps it
    at the scheduler's tick), so a file one leaves must be found by what else moves (the folder's size)."""
    program = ("import os\n"
               "def probe(i):\n"
               "    if i % 2 == 0:\n"
               "        open(f'left{i}', 'w').close()\n"
               "        return 'done'\n"
               "    return 'seen' if any(name.startswith('left') for name in os.listdir('.')) else 'clean'\n")
    tests = [f"assert probe({i}) == {'done' if i % 2 == 0 else 'clean'!r}" for i in range(60)]
    with Sandbox(workers=1, timeout_s=1.0, mode="isolated") as sb:
        report = sb.run(program, tests)
    assert report.statuses == ["pass"] * 60, [m for m in report.messages if m]
