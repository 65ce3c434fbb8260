"""A raised exception's class is judged by what it is, not by what it says it is (attack: a program-made class that
claims to be a builtin one).

The judge's ``except`` clauses and ``pytest.raises`` match a probe's exception by its class and builtin bases, which
the solution's process reports. It read a class as builtin when its ``__module__`` said ``"builtins"``: a program
that raised ``type('ValueError', (Exception,), {'__module__': 'builtins'})`` (not a ``ValueError``: ``except
ValueError`` in Python does not catch it, and pytest fails the test) passed ``pytest.raises(ValueError)``, and so did
a class whose metaclass says every class is its base. Now only the builtin classes themselves, captured before the
program runs and compared by identity, count as builtin; a program may still raise the real class, which is right.
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.execution import Sandbox, run_tests
from evolvecoder_datasets.rewards import make_code_reward

TESTS = ["import pytest\nwith pytest.raises(ValueError):\n    parse('x')\nassert parse('7') == 7",
         "try:\n    parse('x')\nexcept ValueError:\n    pass\nelse:\n    assert False\nassert parse('7') == 7"]
RIGHT = "def parse(s):\n    if not s.isdigit():\n        raise ValueError(s)\n    return int(s)\n"
_RAISES = "def parse(s):\n    if not s.isdigit():\n        raise E(s)\n    return int(s)\n"
FORGED = {
    "module_says_builtins": "E = type('ValueError', (Exception,), {'__module__': 'builtins'})\n" + _RAISES,
    "qualname_and_module": ("class E(Exception):\n    pass\n\nE.__name__ = E.__qualname__ = 'ValueError'\n"
                            "E.__module__ = 'builtins'\n" + _RAISES),
    "metaclass_claims_every_base": ("class M(type):\n    def __subclasscheck__(cls, other):\n        return True\n"
                                    "    def __instancecheck__(cls, other):\n        return True\n\n"
                                    "class E(Exception, metaclass=M):\n    __module__ = 'builtins'\n\n"
                                    "E.__name__ = E.__qualname__ = 'ValueError'\n" + _RAISES),
    "builtins_rebound_first": ("import builtins\n\nclass E(Exception):\n    __module__ = 'builtins'\n\n"
                               "E.__name__ = E.__qualname__ = 'ValueError'\nbuiltins.ValueError = E\n" + _RAISES),
}


def _python_says(program: str, test: str) -> bool:
    """Whether the test passes when Python itself runs it beside the program (pytest's own verdict)."""
    namespace: dict = {}
    try:
        exec(compile(program + "\n" + test, "<t>", "exec"), namespace)  # noqa: S102 - our own fixed texts
    except BaseException:  # noqa: BLE001 - a failed test, whatever it raised
        return False
    return True


@pytest.mark.parametrize("mode", ["fast", "isolated"])
def test_a_class_that_claims_to_be_a_builtin_exception_is_not_one(mode):
    # Python fails them (pytest too), all but the one that rebinds ``builtins.ValueError`` in the process pytest
    # shares with it: the judge's process keeps the real class, as it keeps ``json``'s (docs/threat-model.md).
    assert not any(_python_says(FORGED[name], test) for name in FORGED for test in TESTS if "rebound" not in name)
    with Sandbox(workers=1, mode=mode, timeout_s=1.0, memory_mb=512) as sb:
        assert sb.run(RIGHT, TESTS).statuses == ["pass", "pass"]  # the honest control
        for name, program in FORGED.items():
            assert "pass" not in sb.run(program, TESTS).statuses, name
        reports = sb.run_many([(program, TESTS) for program in FORGED.values()])
        assert all("pass" not in r.statuses for r in reports)
    assert "pass" not in run_tests(FORGED["module_says_builtins"], TESTS, mode=mode, timeout_s=1.0).statuses
    reward = make_code_reward(mode=mode, timeout_s=1.0, workers=1, cache_size=0)
    completions = [f"```python\n{p}```" for p in (RIGHT, *FORGED.values())]
    assert reward(completions=completions, tests=[TESTS] * len(completions)) == [1.0] + [0.0] * len(FORGED)


def test_a_subclass_of_the_real_builtin_is_still_caught():
    """Control: a program's own subclass of ``ValueError`` is one (Python catches it), whatever it calls itself."""
    program = ("class BadInput(ValueError):\n    __module__ = 'builtins'\n\n"
               "def parse(s):\n    if not s.isdigit():\n        raise BadInput(s)\n    return int(s)\n")  # fmt: skip
    with Sandbox(workers=1, mode="fast", timeout_s=1.0, memory_mb=512) as sb:
        assert sb.run(program, TESTS).statuses == ["pass", "pass"]
