import sys
from collections import deque

data = sys.stdin.read().split()
n, m = int(data[0]), int(data[1])
roads = [[] for _ in range(n + 1)]
for i in range(m):
    u, v = int(data[2 + 2 * i]), int(data[3 + 2 * i])
    roads[u].append(v)
    roads[v].append(u)
parent = [0] * (n + 1)
parent[1] = -1
queue = deque([1])
while queue:
    u = queue.popleft()
    for v in roads[u]:
        if parent[v] == 0:
            parent[v] = u
            queue.append(v)
if parent[n] == 0:
    print(-1)
else:
    route = [n]
    while route[-1] != 1:
        route.append(parent[route[-1]])
    print(*reversed(route))
