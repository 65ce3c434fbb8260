"""Input validator of Any Path (Kattis contract: exit 42 when the input is valid, 43 when not)."""
import sys

lines = sys.stdin.read().split("\n")
try:
    n, m = map(int, lines[0].split())
    assert 1 <= n <= 100000 and 0 <= m <= 200000
    roads = [tuple(map(int, line.split())) for line in lines[1:1 + m]]
    assert len(roads) == m
    assert all(len(r) == 2 and 1 <= min(r) and max(r) <= n and r[0] != r[1] for r in roads)
    assert all(not line.strip() for line in lines[1 + m:])
except (ValueError, AssertionError, IndexError):
    sys.exit(43)
sys.exit(42)
