#include <algorithm>
#include <cstdio>
#include <vector>

// For every i, sorts a copy of the suffix after i and counts k - a[i] in it: O(n^2 log n).
int main() {
    int n;
    long long k;
    if (std::scanf("%d %lld", &n, &k) != 2) return 0;
    std::vector<long long> a(n);
    for (auto &x : a) std::scanf("%lld", &x);
    long long pairs = 0;
    for (int i = 0; i < n; ++i) {
        std::vector<long long> rest(a.begin() + i + 1, a.end());
        std::sort(rest.begin(), rest.end());
        auto range = std::equal_range(rest.begin(), rest.end(), k - a[i]);
        pairs += range.second - range.first;
    }
    std::printf("%lld\n", pairs);
}
