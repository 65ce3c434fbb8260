import sys

data = sys.stdin.read().split()
n, k = int(data[0]), int(data[1])
a = [int(t) for t in data[2:2 + n]]
pairs = 0
for i in range(n):
    for j in range(i + 1, n):
        if a[i] + a[j] == k:
            pairs += 1
print(pairs)
