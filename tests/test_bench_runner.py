"""`make bench` runs benchmarks/run_all.py: every benchmark is listed there, with arguments its script accepts."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _run_all():
    spec = importlib.util.spec_from_file_location("run_all", BENCH / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _flags(script: Path) -> set[str]:
    """The ``--options`` a script's argparse declares (read from its source, nothing is imported)."""
    flags = set()
    for node in ast.walk(ast.parse(script.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            flags.update(a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("--"))
    return flags


def test_every_benchmark_script_is_run_by_make_bench():
    run_all = _run_all()
    assert run_all.unlisted() == []
    assert all((BENCH / script).is_file() for script, _ in run_all.BENCHMARKS.values())
    assert "benchmarks/run_all.py" in (BENCH.parent / "Makefile").read_text()


def test_each_quick_argument_is_one_its_benchmark_declares():
    run_all = _run_all()
    for name, (script, quick) in run_all.BENCHMARKS.items():
        unknown = {a for a in quick if a.startswith("--")} - _flags(BENCH / script)
        assert not unknown, f"{name}: {script} does not take {sorted(unknown)}"


def test_list_prints_each_command_without_running_it(capsys):
    assert _run_all().main(["--list", "--only", "rounds", "sandbox"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["rounds: " + str(BENCH / "bench_rounds.py") + " --rows 2000 --repeats 1",
                   "sandbox: " + str(BENCH / "bench_sandbox.py") + " --quick --rounds 1"]
