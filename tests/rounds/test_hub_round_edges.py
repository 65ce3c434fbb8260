"""Edge cases of the Hub path of `rounds`, against the in-process Hub stand-in (real `datasets`/`huggingface_hub`).

Covered: a run without a solution pool (one config per round), a round whose filters kept no problem, the Hub
being unreachable, and how the CLI reports it.
"""

from __future__ import annotations

import pytest
from datasets import Dataset, load_dataset

from evolvecoder_datasets.cli import main
from evolvecoder_datasets.errors import RoundStoreError
from evolvecoder_datasets.rounds import list_rounds, load_round, push_round
from evolvecoder_datasets.testing import HubStandIn

REPO = "ecd-user/edge-run"


def problems(n: int) -> Dataset:
    return Dataset.from_dict({"id": [f"LC_{i}" for i in range(n)], "question": [f"q{i}" for i in range(n)],
                              "tests": [[f"assert g({i})"] for i in range(n)]})


@pytest.fixture
def hub():
    with HubStandIn() as standin:
        yield standin


def test_rounds_without_a_solution_pool_push_one_after_another(hub):
    # datasets writes a lone default config's `dataset_info` without `config_name`; a card that kept it as a
    # list made the next push_to_hub on the branch fail with KeyError('config_name').
    push_round(problems(3), REPO, 0, stats={"num_problems": 3})
    push_round(problems(2), REPO, 1, stats={"num_problems": 2})
    again = push_round(problems(2), REPO, 1, stats={"num_problems": 2, "changes": ["re-run"]})
    assert again.tag == "round1-v2"
    assert load_dataset(REPO, revision="round1", split="train")["id"] == ["LC_0", "LC_1"]
    assert [i.revision for i in list_rounds(REPO)] == ["round0", "round1", "main"]


def test_a_round_that_kept_no_problem_loads_back_empty(hub):
    push_round(problems(3), REPO, 0)
    push_round(problems(3).select([]), REPO, 1, stats={"num_problems": 0})
    empty = load_round(REPO, 1)
    assert len(empty) == 0 and empty.column_names == ["id", "question", "tests"]


def test_an_unreachable_hub_is_a_round_store_error_and_one_cli_line(capsys):
    # The stand-in serves only its own endpoint: requests to the default one fail to connect, as offline.
    with HubStandIn(endpoint="https://elsewhere.test"):
        with pytest.raises(RoundStoreError, match=f"'{REPO}'.*ConnectError"):
            list_rounds(REPO)
        with pytest.raises(RoundStoreError):
            push_round(problems(1), REPO, 0)
        assert main(["rounds", REPO]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: the Hub request for") and err.count("\n") == 1
