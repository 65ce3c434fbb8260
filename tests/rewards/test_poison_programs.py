"""No program can turn its own reward into ``None`` (issue 23): a failure a program causes is its verdict.

``None`` leaves a completion out of a GRPO batch, so a wrong program that could make its reward ``None`` would escape
its penalty. Every poison program of ``tests/execution/server_poison.py`` (it owns its solution process and writes
forged lines, nests folders past any recursion, hands its work to hidden children, turns supervision off) goes
through ``code_reward``- and ``pass_rate_reward``-style functions in both modes, in one batch with a right and a
wrong completion, on a single worker so each completion meets what the one before it left. Each gets a number; the
poison and the wrong ones get the failing value; the right one gets the full reward (the check can fail).
"""

from __future__ import annotations

import pytest

from evolvecoder_datasets.rewards import CodeReward, RewardConfig
from tests.execution.server_poison import POISON, RIGHT, TESTS, WRONG

FENCE = "```python\n{}\n```"


# The pass-rate reward runs every test where the binary one stops at the first failure: it meets each poison on all
# its tests, ~12 s a mode, so it runs in CI (slow tests) and the binary reward in both modes by default.
_SLOW = pytest.mark.slow


@pytest.fixture(scope="module", params=[("isolated", "binary"), ("fast", "binary"),
                                        pytest.param(("isolated", "pass_rate"), marks=_SLOW),
                                        pytest.param(("fast", "pass_rate"), marks=_SLOW)],
                ids=lambda p: "-".join(p))  # fmt: skip
def reward(request):
    mode, kind = request.param
    fn = CodeReward(RewardConfig(kind=kind, mode=mode, timeout_s=0.5, wall_timeout_s=1.5, workers=1,
                                 memory_mb=512, cache_size=0), name=f"{kind}_{mode}")  # fmt: skip
    yield fn
    close = getattr(fn, "close", None)
    if close is not None:
        close()


def test_no_poison_program_gets_none_and_none_is_rewarded(reward):
    names = sorted(POISON)
    completions = []
    for name in names:  # each poison followed by a right and a wrong completion: nothing may leak between them
        completions += [FENCE.format(POISON[name]), FENCE.format(RIGHT), FENCE.format(WRONG)]
    rewards = reward(completions=completions, tests=[list(TESTS)] * len(completions))
    assert None not in rewards, list(zip([n for n in names for _ in range(3)], rewards))
    for i, name in enumerate(names):
        poison, right, wrong = rewards[3 * i : 3 * i + 3]
        assert poison == 0.0, (name, poison)
        assert right == 1.0, (name, right)
        assert wrong == 0.0, (name, wrong)
