import sys
from collections import Counter

data = sys.stdin.read().split()
n, k = int(data[0]), int(data[1])
a = [int(t) for t in data[2:2 + n]]
seen = Counter()


def count_from(i):
    # One call per element: deeper than Python's recursion limit (1000) on large inputs.
    if i == n:
        return 0
    found = seen[k - a[i]]
    seen[a[i]] += 1
    return found + count_from(i + 1)


print(count_from(0))
