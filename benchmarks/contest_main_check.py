"""Re-judge what a stdin/stdout recipe run published: every case of ``main`` against the problem's reference (as the
problem judges: checker, tolerance, the reference's language), every input through the package's own validator where
the problem ships one, and each round's case count and fidelity from its ``stats.json``.

Run (after ``evolvecoder-datasets run recipes/configs/contest_packages.yaml`` or any stdin run):

    .venv/bin/python benchmarks/contest_main_check.py RUN_DIR
"""

from __future__ import annotations

import argparse
from pathlib import Path

from datasets import load_from_disk

from evolvecoder_datasets.execution import Sandbox
from evolvecoder_datasets.rounds import load_round, load_round_stats
from evolvecoder_datasets.search.stdio_writer import shipped_validator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    args = parser.parse_args()
    info = next((args.run_dir / "stages" / "01_references").rglob("dataset_info.json"))
    references = {row["id"]: row for row in load_from_disk(str(info.parent))}
    store = str(args.run_dir / "store")
    main_rows = load_round(store)
    cases = failed = refused = checked = 0
    with Sandbox(workers=2) as sb:
        for row in main_rows:
            ref = references[row["id"]]
            language = ref.get("reference_language") or ref.get("language") or "python"
            report = sb.run_stdio(ref["reference_solutions"][0], row["inputs"], row["outputs"], language=language,
                                  checker=row["checker"], float_tol=row["float_tol"])
            cases += len(row["inputs"])
            failed += sum(not ok for ok in report.passed)
            validator = shipped_validator(ref["validator"]) if ref.get("validator") else None
            if validator is not None:
                verdict = sb.run_stdio(validator[0], row["inputs"], [""] * len(row["inputs"]), language=validator[1])
                refused += sum(status != "pass" for status in verdict.statuses)
                checked += len(row["inputs"])
    print(f"main: {len(main_rows)} problems, {cases} cases; the reference fails {failed}; "
          f"a shipped validator refuses {refused} of the {checked} it checks")
    rounds = int(load_round_stats(store).get("round", 0) or 0)
    for r in range(rounds + 1):
        stats = load_round_stats(store, r)
        suite = (stats.get("fidelity") or {}).get("suite") or {}
        added = {m: v["retained"] for m, v in stats["tests_by_method"].items()}
        print(f"round {r}: {stats['num_tests']} cases {added}; TPR {suite.get('tpr')} over {suite.get('right')}, "
              f"TNR {suite.get('tnr')} over {suite.get('wrong')}")


if __name__ == "__main__":
    main()
