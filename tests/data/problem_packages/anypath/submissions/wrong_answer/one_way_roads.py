import sys
from collections import deque

data = sys.stdin.read().split()
n, m = int(data[0]), int(data[1])
roads = [[] for _ in range(n + 1)]
for i in range(m):
    u, v = int(data[2 + 2 * i]), int(data[3 + 2 * i])
    roads[u].append(v)  # bug: roads are two-way, this only follows them from u to v
seen = {1: None}
queue = deque([1])
while queue:
    u = queue.popleft()
    for v in roads[u]:
        if v not in seen:
            seen[v] = u
            queue.append(v)
if n not in seen:
    print(-1)
else:
    route = [n]
    while route[-1] != 1:
        route.append(seen[route[-1]])
    print(*reversed(route))
