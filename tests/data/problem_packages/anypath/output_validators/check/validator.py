"""Output validator of anypath (Kattis contract).

Usage: validator.py input_file answer_file feedback_dir < team_output
Exit 42: accepted. Exit 43: wrong answer (the reason goes to feedback_dir/judgemessage.txt).
"""

import os
import re
import sys

ACCEPTED, WRONG = 42, 43
SMALL_INT = re.compile(r"-?[0-9]{1,7}\Z")


def verdict(feedback_dir, code, message):
    with open(os.path.join(feedback_dir, "judgemessage.txt"), "a", encoding="utf-8") as fh:
        fh.write(message + "\n")
    sys.exit(code)


def main():
    input_file, answer_file, feedback_dir = sys.argv[1:4]
    with open(input_file, encoding="utf-8") as fh:
        numbers = [int(t) for t in fh.read().split()]
    n, m = numbers[0], numbers[1]
    roads = set()
    for i in range(m):
        u, v = numbers[2 + 2 * i], numbers[3 + 2 * i]
        roads.add((u, v))
        roads.add((v, u))
    with open(answer_file, encoding="utf-8") as fh:
        judge_has_route = fh.read().split() != ["-1"]

    tokens = sys.stdin.buffer.read().decode("utf-8", errors="replace").split()
    if not tokens:
        verdict(feedback_dir, WRONG, "empty output")
    if len(tokens) > n:
        verdict(feedback_dir, WRONG, f"{len(tokens)} tokens but there are only {n} towns")
    for token in tokens:
        if not SMALL_INT.match(token):
            verdict(feedback_dir, WRONG, f"not a town number: {token[:40]!r}")
    route = [int(t) for t in tokens]
    if route == [-1]:
        if judge_has_route:
            verdict(feedback_dir, WRONG, "printed -1 but a route exists")
        verdict(feedback_dir, ACCEPTED, "no route, as expected")
    if any(not 1 <= town <= n for town in route):
        verdict(feedback_dir, WRONG, "a town number is out of range")
    if route[0] != 1 or route[-1] != n:
        verdict(feedback_dir, WRONG, f"the route must go from 1 to {n}")
    if len(set(route)) != len(route):
        verdict(feedback_dir, WRONG, "the route visits a town twice")
    for i in range(1, len(route)):
        u, v = route[i - 1], route[i]
        if (u, v) not in roads:
            verdict(feedback_dir, WRONG, f"no road between {u} and {v}")
    if not judge_has_route:
        print("judge error: the team found a route the answer file says does not exist", file=sys.stderr)
        sys.exit(1)
    verdict(feedback_dir, ACCEPTED, f"valid route of {len(route)} towns")


if __name__ == "__main__":
    main()
