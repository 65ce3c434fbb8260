"""The Hub path of `rounds`, end to end against the in-process Hub stand-in.

The real `Dataset.push_to_hub`, `HfApi.create_branch`, `create_tag`, `list_repo_refs`, `create_commit`,
`hf_hub_download` and `load_dataset(repo, revision="round1")` run unchanged; only the HTTP client is replaced
(through `huggingface_hub.set_client_factory`) by `evolvecoder_datasets.testing.HubStandIn`.

Not covered by the stand-in (so not proven here): Xet storage (disabled while it is installed), multipart LFS
uploads, pull requests, authentication and private-repo permissions, `.gitattributes`-driven LFS rules, tree
pagination, CDN redirects, the parquet-conversion bot, rate limits and concurrent writers on the real Hub.
"""

from __future__ import annotations

import pytest
from datasets import Dataset, load_dataset
from huggingface_hub import HfApi

from evolvecoder_datasets.errors import RevisionNotFoundError
from evolvecoder_datasets.rounds import list_rounds, load_round, push_final, push_round, rerender_card
from evolvecoder_datasets.testing import HubStandIn

REPO = "ecd-user/evolve-run"


def problems(n: int, round_: int) -> Dataset:
    return Dataset.from_dict({
        "id": [f"LC_{i}" for i in range(n)],
        "source": ["LeetCode"] * n,
        "question": [f"def g{i}(x): ..." for i in range(n)],
        "tests": [[f"assert g{i}({t})" for t in range(round_ + 1)] for i in range(n)],
    })


@pytest.fixture
def hub():
    with HubStandIn() as standin:
        yield standin


@pytest.fixture
def pushed(hub, tmp_path):
    figure = tmp_path / "pass_at_k.png"
    figure.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    pool = Dataset.from_dict({"id": ["LC_0"], "pass_matrix": [[[True, False]]]})
    r0 = push_round(problems(3, 0), REPO, 0, solutions=pool, stats={"num_problems": 3}, figures=[figure],
                    config={"rounds": 2})
    r1 = push_round(problems(2, 1), REPO, 1, stats={"num_problems": 2, "changes": ["harder tests"]})
    return r0, r1


def test_round_branch_is_created_from_the_previous_rounds_commit(hub, pushed):
    r0, r1 = pushed
    assert ("POST", f"/api/datasets/{REPO}/branch/round1") in hub.requests
    history = hub.ancestry(REPO, "round1")
    assert history[0] == r1.commit and r0.commit in history
    assert hub.refs(REPO)["branches"]["main"] not in history[: history.index(r0.commit)]
    refs = HfApi().list_repo_refs(REPO, repo_type="dataset")
    assert {b.name for b in refs.branches} == {"main", "round0", "round1"}
    assert {t.name: t.target_commit for t in refs.tags} == {"round0-v1": r0.commit, "round1-v1": r1.commit}


def test_load_dataset_with_a_round_revision_reads_that_round(pushed):
    assert load_dataset(REPO, revision="round0", split="train").num_rows == 3
    assert load_dataset(REPO, revision="round1", split="train").num_rows == 2
    assert load_round(REPO, 0, "solutions").column_names == ["id", "pass_matrix"]
    assert load_round(REPO, 1)["tests"][1] == ["assert g1(0)", "assert g1(1)"]


def test_round_files_card_and_stale_configs(hub, pushed):
    round0 = hub.files(REPO, "round0")
    assert {"README.md", "stats.json", "recipe.yaml", "figures/pass_at_k.png",
            "solutions/train-00000-of-00001.parquet"} <= set(round0)
    assert b"![pass at k](figures/pass_at_k.png)" in round0["README.md"]
    round1 = hub.files(REPO, "round1")
    assert not any(p.startswith(("solutions/", "figures/")) for p in round1) and "recipe.yaml" not in round1
    readme = round1["README.md"].decode()
    assert "config_name: solutions" not in readme and "harder tests" in readme
    assert "license: unknown" in readme  # statistics naming no source: no licence is claimed for the rows


def test_main_gets_only_the_published_columns(pushed):
    push_final(problems(2, 1), REPO, round=1)
    assert load_dataset(REPO, split="train").column_names == ["id", "question", "tests"]
    assert [i.revision for i in list_rounds(REPO)] == ["round0", "round1", "main"]


def test_rerendered_card_is_committed_once(hub, pushed):
    card = rerender_card(REPO, 1, push=True)
    assert "harder tests" in card.content and card.data.configs
    before = hub.ancestry(REPO, "round1")
    rerender_card(REPO, 1, push=True)
    assert hub.ancestry(REPO, "round1") == before


def test_missing_revision_is_a_typed_error(pushed):
    with pytest.raises(RevisionNotFoundError, match="round4"):
        load_round(REPO, 4)
    with pytest.raises(RevisionNotFoundError):
        load_round("ecd-user/absent", 0)


def test_standin_answers_a_missing_tree_path_with_entry_not_found(hub, pushed):
    import httpx2
    from huggingface_hub.utils import get_session

    response = get_session().get(f"{hub.endpoint}/api/datasets/{REPO}/tree/round0/nothing-here")
    assert response.status_code == 404 and response.headers["X-Error-Code"] == "EntryNotFound"
    with pytest.raises(httpx2.ConnectError):
        get_session().get("https://example.org/")


def test_standin_restores_the_client_factory_and_offline_mode():
    import huggingface_hub.constants as constants
    import huggingface_hub.utils._http as hub_http

    factory, offline = hub_http._GLOBAL_CLIENT_FACTORY, constants.HF_HUB_OFFLINE
    with HubStandIn():
        assert constants.HF_HUB_OFFLINE is False and constants.HF_HUB_DISABLE_XET is True
    assert hub_http._GLOBAL_CLIENT_FACTORY is factory and constants.HF_HUB_OFFLINE == offline
