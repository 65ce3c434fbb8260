"""Task folders as Harbor reads them: Harbor's own linter, layout, task.toml, the container recipe, the scripts, and
re-verification from the folder alone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from evolvecoder_datasets.code_instruct import (
    CodeInstructConfig,
    SeedConfig,
    export_task_folders,
    generate_tasks,
    sample_snippets,
    tasks_to_dataset,
)
from evolvecoder_datasets.code_instruct.dockerfile import (
    BASE_IMAGES,
    check_build_context,
    parse_dockerfile,
)
from evolvecoder_datasets.code_instruct.export import files_from_patch, verify_task_folder
from evolvecoder_datasets.code_instruct.repository import open_repository
from evolvecoder_datasets.errors import ConfigError
from evolvecoder_datasets.llm import LLMConfig
from evolvecoder_datasets.llm.testing import ScriptedOpenAIServer

from .conftest import answer

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

SCRIPT = [["good_caption"], ["good_slugs"]]


@pytest.fixture(scope="module")
def export_run(tinytext_repo, tinytext_env, venv_backend, tmp_path_factory):
    seeds = SeedConfig(seed=3)
    snippets = sample_snippets(tinytext_repo, len(SCRIPT), config=seeds)
    by_text = {s.text.rstrip(): answers for s, answers in zip(snippets, SCRIPT)}

    def respond(body):
        prompt = body["messages"][-1]["content"]
        shown = max((text for text in by_text if text in prompt), key=len)
        return answer("tinytext", by_text[shown][0])

    config = CodeInstructConfig(num_seeds=len(SCRIPT), seeds=seeds, verify_timeout_s=60, decontamination=())
    with ScriptedOpenAIServer(respond) as server:
        llm = LLMConfig(model="scripted-coder", base_url=server.base_url, max_retries=0,
                        cache_dir=str(tmp_path_factory.mktemp("llm")))  # fmt: skip
        run = generate_tasks(tinytext_repo, llm=llm, environment=venv_backend, config=config)
    assert len(run.tasks) == 2
    return run


@pytest.fixture(scope="module")
def folders(export_run, tmp_path_factory):
    return export_task_folders(export_run, tmp_path_factory.mktemp("tasks"), include_judged_inside=True)


def test_folder_layout_is_harbors(folders, export_run):
    folder = folders[0]
    assert [f.name for f in folders] == [t.id for t in export_run.tasks]
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()
                   and "environment/src/" not in p.relative_to(folder).as_posix())  # fmt: skip
    assert [t.judged for t in export_run.tasks] == ["outside", "outside"]
    assert files == ["environment/Dockerfile", "environment/requirements.txt", "instruction.md",
                     "solution/patch.diff", "solution/solve.sh", "task.toml", "tests/ecd_judge.zip", "tests/judge.json",
                     "tests/test.sh", "tests/test_task.py"]  # fmt: skip
    assert (folder / "tests" / "test_task.py").read_text() == export_run.tasks[0].test
    assert files_from_patch((folder / "solution" / "patch.diff").read_text()) == {
        "task_module.py": export_run.tasks[0].solution}


def test_task_toml_holds_harbor_fields_and_our_provenance_in_metadata(folders, export_run):
    meta = tomllib.loads((folders[1] / "task.toml").read_text())
    task = export_run.tasks[1]
    assert set(meta) == {"schema_version", "artifacts", "task", "metadata", "agent", "verifier", "environment"}
    assert meta["artifacts"] == ["/app/task_module.py"]  # handed from the agent's container to the verifier's
    assert meta["verifier"] == {"environment_mode": "separate", "timeout_sec": 180.0}
    assert meta["agent"]["user"] == "agent" and meta["task"]["name"] == f"evolvecoder/{task.id}"
    provenance = meta["metadata"]
    assert (provenance["repo"], provenance["repo_version"], provenance["package"]) == ("tiny-textkit", "0.3.1",
                                                                                       "tinytext")  # fmt: skip
    assert provenance["seed_lines"] == [task.start_line, task.end_line] and provenance["verified_in"] == task.environment
    assert provenance["source_tree_sha256"] == export_run.repository.tree_hash()
    assert provenance["python_version"] == ".".join(map(str, sys.version_info[:3]))


def test_dockerfile_rebuilds_the_verified_environment(folders, export_run):
    context = folders[0] / "environment"
    assert check_build_context(context) == []
    steps = parse_dockerfile((context / "Dockerfile").read_text())
    assert steps[0] == ("FROM", BASE_IMAGES["3.11"])
    assert ("WORKDIR", "/app") in steps
    pins = (context / "requirements.txt").read_text().split()
    versions = dict(line.split("==") for line in pins)
    assert versions["pytest"] == export_run.environment.versions["pytest"]
    assert "tiny-textkit" not in versions  # installed from src/, the exact tree that was verified
    assert open_repository(context / "src").tree_hash() == export_run.repository.tree_hash()


def test_check_build_context_names_each_problem(tmp_path):
    (tmp_path / "requirements.txt").write_text("pytest==8.3.2\nrequests\n")
    (tmp_path / "Dockerfile").write_text(
        f"FROM {BASE_IMAGES['3.11']}\nCOPY requirements.txt /r.txt\nRUN python -m pip install -r /r.txt\n"
        "COPY missing /src\nRUN useradd agent\nWORKDIR /app\n"
    )
    problems = check_build_context(tmp_path)
    assert sorted(problems) == sorted(["COPY source 'missing' is not in the build context",
                                       "RUN installs unpinned requirement(s) ['requests']"])  # fmt: skip


def test_scripts_apply_the_patch_and_reward_only_a_real_pass(folders, export_run, tmp_path):
    """solve.sh and test.sh as Harbor runs them, here with the verified venv's python first on PATH."""
    folder = folders[0]
    env_bin = str(export_run.environment.root) + "/bin"
    path = f"{env_bin}:/usr/local/bin:/usr/bin:/bin"

    def reward(work, logs, where=folder):
        subprocess.run(["bash", str(where / "tests" / "test.sh"), str(work), str(logs)], env={"PATH": path},
                       capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        return (logs / "reward.txt").read_text().strip()

    empty = tmp_path / "empty"
    empty.mkdir()
    assert reward(empty, tmp_path / "logs-empty") == "0"
    for applier in ("patch", "python"):  # with `patch` on PATH, and as in the image, without it
        work = tmp_path / f"work-{applier}"
        work.mkdir()
        tools = tmp_path / f"bin-{applier}"
        tools.mkdir()
        if applier == "python":
            for name in ("bash", "cat", "dirname", "mkdir"):
                found = shutil.which(name)
                (tools / name).symlink_to(found)
            run_path = f"{env_bin}:{tools}"
        else:
            if shutil.which("patch") is None:
                continue
            run_path = path
        proc = subprocess.run(["bash", str(folder / "solution" / "solve.sh"), str(work)], env={"PATH": run_path},
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert (work / "task_module.py").read_text() == export_run.tasks[0].solution
        assert reward(work, tmp_path / f"logs-{applier}") == "1"
    for name, cheat_source in CHEATS.items():
        cheat = tmp_path / f"cheat-{name}"
        cheat.mkdir()
        (cheat / "task_module.py").write_text(cheat_source)
        assert reward(cheat, tmp_path / f"logs-cheat-{name}") == "0", name
    # Without bubblewrap (a container without user namespaces: isolation "none"), the agent's code runs under an
    # unprivileged uid with the host's files in view; test.sh makes the tests unreadable to it first. The reader
    # needs nothing but the standard library, and wins where the test file is readable (the control).
    if os.geteuid() == 0:  # the uid drop is what keeps the files out of reach
        bare = tmp_path / "bare-folder"
        shutil.copytree(folder, bare)
        config = json.loads((bare / "tests" / "judge.json").read_text())
        (bare / "tests" / "judge.json").write_text(json.dumps({**config, "isolation": "none"}))
        in_view = Path(tempfile.mkdtemp(prefix="ecd-in-view-"))
        try:
            in_view.chmod(0o755)
            shutil.copy(bare / "tests" / "test_task.py", in_view / "test_task.py")
            (in_view / "test_task.py").chmod(0o644)
            for name, where in (("control", in_view), ("reader", bare / "tests")):
                work = tmp_path / f"reads-{name}"
                work.mkdir()
                (work / "task_module.py").write_text(READS_THE_TESTS.replace("TESTS_DIR", str(where)))
                won = reward(work, tmp_path / f"logs-reads-{name}", bare)
                assert won == ("1" if name == "control" else "0"), (name, (tmp_path / f"logs-reads-{name}"
                                                                          / "verdict.json").read_text())
        finally:
            shutil.rmtree(in_view, ignore_errors=True)
    linked = tmp_path / "linked"  # a task_module.py that is a link (to the right solution) is not followed
    linked.mkdir()
    (linked / "task_module.py").symlink_to(tmp_path / "work-python" / "task_module.py")
    assert reward(linked, tmp_path / "logs-linked") == "0"


# Reads the expected values out of the task's own test file and answers from them (caption_lines(text, width...)).
READS_THE_TESTS = (  # no import: the standard library may be out of the dropped uid's reach on a bare host
    "_TABLE = {}\n"
    "try:\n"
    "    for _line in open('TESTS_DIR/test_task.py').read().splitlines():\n"
    "        if 'caption_lines(' in _line and ') == ' in _line:\n"
    "            _call, _, _want = _line.strip()[len('assert '):].partition(' == ')\n"
    "            _TABLE[_call[len('caption_lines('):].split(', ')[0]] = eval(_want)\n"
    "        elif 'lines = caption_lines(' in _line:\n"
    "            _last = _line.split('caption_lines(')[1].split(', ')[0]\n"
    "        elif 'assert lines == ' in _line:\n"
    "            _TABLE[_last] = eval(_line.split('assert lines == ')[1])\n"
    "except Exception:\n"
    "    pass\n"
    "def caption_lines(text, width, prefix='> '):\n"
    "    if width <= len(prefix):\n        raise ValueError(width)\n"
    "    return _TABLE.get(repr(text).replace(\"'\", '\"'), ['wrong'])\n"
)


# Wrong task_module.py files that try to win test.sh's reward rather than solve the task.
CHEATS = {
    "exits_zero": "import os\nos._exit(0)\n",
    "forges_the_pytest_plugin": (
        "import sys\n_p = sys.modules.get('ecd_verdict')\n"
        "if _p is not None:\n    _p._record = lambda nodeid, outcome: _p._RESULTS.__setitem__(nodeid, 'passed')\n"
        "def caption_lines(*a, **k):\n    return []\n"),
    "writes_the_reward_file": (
        "import glob, os\n"
        "for _p in glob.glob('/proc/[0-9]*/cmdline'):\n"
        "    try:\n        _args = open(_p, 'rb').read().split(b'\\0')\n    except OSError:\n        continue\n"
        "    for _a in _args:\n"
        "        for _f in ('reward.txt', 'verdict.json'):\n"
        "            try:\n                open(os.path.join(_a.decode(), _f), 'w').write('1')\n"
        "            except Exception:\n                pass\n"
        "def caption_lines(*a, **k):\n    return []\n"),
    "equal_to_everything": (
        "class _Yes(list):\n    def __eq__(self, other):\n        return True\n    __hash__ = None\n"
        "def caption_lines(*a, **k):\n    return _Yes()\n"),
}


def test_folder_reverifies_from_its_own_files(folders, tmp_path):
    from evolvecoder_datasets.code_instruct import VenvBackend
    from tests.code_instruct.conftest import env_cache

    lines = (folders[0] / "environment" / "requirements.txt").read_text().split()
    backend = VenvBackend(cache_dir=env_cache(), requirements=tuple(lines), pip_args=("--no-deps",),
                          work_root=tmp_path)  # fmt: skip
    verdict = verify_task_folder(folders[0], backend=backend, timeout_s=60)
    assert verdict.result.ok and verdict.stage_a.status == "failed" and verdict.stage_b.status == "passed"


def test_tasks_without_a_known_environment_are_refused(export_run, tmp_path):
    with pytest.raises(ConfigError, match="no environment is known"):
        export_task_folders(export_run.tasks, tmp_path, include_judged_inside=True)
    with pytest.raises(ConfigError, match="no environment is known"):
        export_task_folders(tasks_to_dataset(export_run.tasks, include_judged_inside=True), tmp_path,
                            include_judged_inside=True)
    folders = export_task_folders(export_run, tmp_path, include_judged_inside=True)
    with pytest.raises(ConfigError, match="exists"):
        export_task_folders(export_run, tmp_path, include_judged_inside=True)
    assert export_task_folders(export_run, tmp_path, overwrite=True, include_judged_inside=True) == folders


def test_harbor_lint_reports_no_finding_on_any_exported_folder(folders, harbor_cli):
    from evolvecoder_datasets.code_instruct.harbor import harbor_lint

    assert harbor_lint(folders, harbor=harbor_cli) == []


def test_harbor_lint_sees_what_an_old_style_folder_lacked(folders, harbor_cli, tmp_path):
    """The check is live: the layout of the previous export (no environment/, our own fields, a shared verifier)
    draws the findings the issue reported."""
    from evolvecoder_datasets.code_instruct.harbor import harbor_lint

    old = tmp_path / "old"
    shutil.copytree(folders[0], old)
    shutil.rmtree(old / "environment")
    toml = (old / "task.toml").read_text().replace('environment_mode = "separate"', 'command = "bash tests/test.sh"')
    (old / "task.toml").write_text(toml)
    rules = sorted(f["rule"] for f in harbor_lint([old], harbor=harbor_cli))
    assert rules == ["invalid-task-files", "shared-verifier", "unknown-config-field"]
