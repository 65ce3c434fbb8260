import sys
from collections import Counter


def main():
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    seen = Counter()
    pairs = 0
    for token in data[2:2 + n]:
        x = int(token)
        pairs += seen[k - x]  # partners among the earlier positions only
        seen[x] += 1
    print(pairs)


main()
