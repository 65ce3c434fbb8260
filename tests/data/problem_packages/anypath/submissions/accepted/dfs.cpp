#include <cstdio>
#include <vector>

// Iterative depth-first search that tries the most recently listed road first.
int main() {
    int n, m;
    if (std::scanf("%d %d", &n, &m) != 2) return 0;
    std::vector<std::vector<int>> roads(n + 1);
    for (int i = 0; i < m; ++i) {
        int u, v;
        std::scanf("%d %d", &u, &v);
        roads[u].push_back(v);
        roads[v].push_back(u);
    }
    std::vector<int> parent(n + 1, 0), stack{1};
    parent[1] = -1;
    while (!stack.empty()) {
        int u = stack.back();
        stack.pop_back();
        for (int v : roads[u]) {
            if (parent[v] == 0) {
                parent[v] = u;
                stack.push_back(v);
            }
        }
    }
    if (parent[n] == 0) {
        std::printf("-1\n");
        return 0;
    }
    std::vector<int> route{n};
    while (route.back() != 1) route.push_back(parent[route.back()]);
    for (int i = (int)route.size() - 1; i >= 0; --i) std::printf("%d%c", route[i], i ? ' ' : '\n');
}
