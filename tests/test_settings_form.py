"""One form of settings across the service (issue 39): every sandbox setting lives in ``limits.SandboxSettings``.

The configs that run a sandbox of their own (the search writer, the fidelity oracle) hold a ``SandboxSettings``
instead of copies of its fields; the default ``timeout_s`` is written once in the package; and a ``Sandbox`` has
no second name for a setting: callers read ``sandbox.settings.<name>`` (``worker_count``, ``wall_limit_s`` and
``load_limit_s`` for the resolved ones).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.execution._engine import LocalEngine
from evolvecoder_datasets.keys import config_digest
from evolvecoder_datasets.limits import SandboxSettings
from evolvecoder_datasets.search.oracle import FidelityConfig
from evolvecoder_datasets.search.problems import SearchConfig

PACKAGE = Path(__file__).resolve().parents[1] / "evolvecoder_datasets"

#: Modules whose ``timeout_s`` is another setting than the sandbox's CPU seconds per test, with its own default:
#: an HTTP request's or a repository container's limit, never a program's test.
OTHER_TIMEOUTS = {
    "code_instruct/archives.py": "a download",
    "code_instruct/backend.py": "a repository's test command in its environment",
    "code_instruct/containers.py": "a repository's test command in its container",
    "code_instruct/environment.py": "a repository's test command in its virtualenv",
    "code_instruct/harbor.py": "a Harbor task's verifier and agent",
    "code_instruct/verification.py": "a repository's test command",
    "integrations/client.py": "an HTTP request to the reward service",
    "llm/config.py": "an HTTP request to a model",
}


def _numeric(node: ast.AST | None) -> bool:
    return (isinstance(node, ast.Constant) and type(node.value) in (int, float)) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _numeric(node.operand))


def _timeout_defaults() -> list[tuple[str, str, float]]:
    """``(module, owner, value)`` of every numeric literal written as the default of a parameter or a class field
    named ``timeout_s`` in the package (``owner``: the class or function it belongs to)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for owner in ast.walk(tree):
            if isinstance(owner, ast.ClassDef):
                for item in owner.body:
                    if (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                            and item.target.id == "timeout_s" and _numeric(item.value)):
                        found.append((module, owner.name, ast.literal_eval(item.value)))
            elif isinstance(owner, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                args = owner.args
                positional = args.posonlyargs + args.args
                pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults),
                         *zip(args.kwonlyargs, args.kw_defaults)]
                for arg, default in pairs:
                    if arg.arg == "timeout_s" and _numeric(default):
                        found.append((module, getattr(owner, "name", "<lambda>"), ast.literal_eval(default)))
    return found


def test_the_search_and_the_oracle_hold_a_sandbox_settings_not_copies_of_its_fields():
    settings_fields = {f.name for f in dataclasses.fields(SandboxSettings)}
    for config in (SearchConfig, FidelityConfig):
        assert isinstance(config().sandbox, SandboxSettings), config
        assert not issubclass(config, SandboxSettings), config
        assert not {f.name for f in dataclasses.fields(config)} & settings_fields, config  # no copy beside it
    # the same effective defaults as before the settings were nested: fast mode, 1 CPU second per test
    assert SearchConfig().sandbox == FidelityConfig().sandbox == SandboxSettings(mode="fast")
    assert SearchConfig().sandbox.timeout_s == FidelityConfig().sandbox.timeout_s == SandboxSettings().timeout_s


def test_the_default_timeout_is_written_once_in_the_package():
    found = _timeout_defaults()
    assert [f for f in found if f[0] == "limits.py"] == [("limits.py", "SandboxSettings", SandboxSettings.timeout_s)]
    others = [f for f in found if f[0] != "limits.py" and f[0] not in OTHER_TIMEOUTS]
    assert others == [], f"a numeric default of timeout_s outside SandboxSettings: {others}; use SandboxSettings"
    # the other settings' defaults are other numbers: the sandbox's own appears once
    assert [f[2] for f in found].count(SandboxSettings.timeout_s) == 1, found


def _mirrors(cls: type) -> list[str]:
    """Properties of ``cls`` whose body only returns ``self.settings.<a name>`` (perhaps through ``float``/``int``)."""
    out = []
    for name, member in inspect.getmembers(cls, lambda m: isinstance(m, property)):
        getter = member.fget
        try:
            source = textwrap.dedent(inspect.getsource(getter))
        except (OSError, TypeError):
            continue
        tree = ast.parse(source)
        node = tree.body[0]
        if isinstance(node, ast.Assign | ast.Expr):  # ``name = property(lambda self: ...)``
            lambdas = [n for n in ast.walk(node) if isinstance(n, ast.Lambda)]
            body = lambdas[0].body if lambdas else None
        else:
            statements = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            body = statements[0].value if len(statements) == 1 and isinstance(statements[0], ast.Return) else None
        while isinstance(body, ast.Call) and isinstance(body.func, ast.Name) and body.func.id in ("float", "int"):
            body = body.args[0] if len(body.args) == 1 else None
        if (isinstance(body, ast.Attribute) and isinstance(body.value, ast.Attribute)
                and body.value.attr == "settings" and isinstance(body.value.value, ast.Name)
                and body.value.value.id == "self"):
            out.append(name)
    return out


def test_the_sandbox_has_no_second_name_for_a_setting():
    for cls in (Sandbox, LocalEngine):
        assert _mirrors(cls) == [], cls
        settings_names = {f.name for f in dataclasses.fields(SandboxSettings)} | {"worker_count", "wall_limit_s",
                                                                                    "load_limit_s", "workers"}
        assert not settings_names & set(vars(cls)), (cls, settings_names & set(vars(cls)))
    sb = Sandbox(workers=2, timeout_s=0.5, mode="fast")
    assert (sb.settings.worker_count, sb.settings.timeout_s, sb.settings.mode) == (2, 0.5, "fast")


def test_the_checker_of_mirrors_sees_one():
    class Mirrored:
        settings = SandboxSettings()

        @property
        def timeout_s(self) -> float:
            """Mirrors."""
            return float(self.settings.timeout_s)

        mode = property(lambda self: self.settings.mode)

        @property
        def computed(self) -> float:
            return 2 * self.settings.timeout_s

    assert _mirrors(Mirrored) == ["mode", "timeout_s"]


def test_the_digest_of_a_default_config_is_the_same_in_every_process():
    from evolvecoder_datasets.stages.evolve import EvolveConfig

    here = [config_digest(EvolveConfig(search=SearchConfig())), config_digest(FidelityConfig())]
    assert here == [config_digest(EvolveConfig(search=SearchConfig())), config_digest(FidelityConfig())]
    code = ("from evolvecoder_datasets.keys import config_digest\n"
            "from evolvecoder_datasets.search.oracle import FidelityConfig\n"
            "from evolvecoder_datasets.search.problems import SearchConfig\n"
            "from evolvecoder_datasets.stages.evolve import EvolveConfig\n"
            "print(config_digest(EvolveConfig(search=SearchConfig())), config_digest(FidelityConfig()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == here
