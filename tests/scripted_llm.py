"""A scripted test writer and solution pool for ten HumanEval problems, served by the loopback OpenAI server.

The answers in ``tests/data/scripted_llm/humaneval10.json`` were written for these problems with the defects real
models show: truncated JSON, wrong expected values, duplicate tests, a bare comparison, a ``<think>`` preamble,
prose instead of JSON, a solution that forgets ``from typing import List``, and near-miss programs that only the
later rounds' tests expose.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

DATA = Path(__file__).parent / "data" / "scripted_llm" / "humaneval10.json"

#: The HumanEval ids the script covers, in id order.
PROBLEM_IDS = ("HumanEval_0", "HumanEval_3", "HumanEval_7", "HumanEval_12", "HumanEval_13", "HumanEval_23",
               "HumanEval_35", "HumanEval_52", "HumanEval_55", "HumanEval_60")
POOL_MODELS = ("alpha", "beta")


def load_script() -> dict:
    """The scripted answers, keyed by the problem's entry point."""
    return json.loads(DATA.read_text())


class ScriptedResponder:
    """Answers refine, solve, adversarial and discriminative prompts from the script.

    The problem is recognised by its entry point in the prompt; the n-th distinct adversarial (or discriminative)
    prompt of a problem gets the n-th scripted answer (the last one repeats), so round r gets answer r. Share one
    responder between the servers of a crash-and-resume scenario so the rounds keep their answers.
    """

    def __init__(self, script: dict | None = None) -> None:
        self.script = script or load_script()
        self.names = sorted(self.script, key=len, reverse=True)
        self.calls: Counter = Counter()
        self.seen: dict[str, int] = {}

    def problem(self, content: str) -> str:
        name = next((n for n in self.names if n in content), None)
        if name is None:
            raise KeyError("no scripted problem in the prompt")
        return name

    def __call__(self, body: dict):
        content = body["messages"][-1]["content"]
        entry = self.script[self.problem(content)]
        if body.get("model") in POOL_MODELS:
            codes = entry["solutions"][body["model"]]
            return [f"Here is my solution:\n```python\n{code}```\n" for code in codes][: int(body.get("n", 1))]
        if "Seed problem:" in content:
            return entry["refine"]
        # the paper's whole-assert prompt, or the input-mode one (its scripted asserts are read as calls there)
        adversarial = "hardening the test suite" in content or "on which a wrong program would fail" in content
        method = "adversarial" if adversarial else "discriminative"
        key = (self.problem(content), method)
        if content not in self.seen:
            self.seen[content] = self.calls[key]
            self.calls[key] += 1
        answers = entry[method]
        return answers[min(self.seen[content], len(answers) - 1)]
