#include <cstdio>
#include <unordered_map>
#include <vector>

int main() {
    int n;
    long long k;
    if (std::scanf("%d %lld", &n, &k) != 2) return 0;
    std::vector<long long> a(50000);  // bug: sized for n <= 5e4, not 2e5; at() throws, the program aborts
    for (int i = 0; i < n; ++i) std::scanf("%lld", &a.at(i));
    std::unordered_map<long long, long long> seen;
    long long pairs = 0;
    for (int i = 0; i < n; ++i) {
        auto it = seen.find(k - a.at(i));
        if (it != seen.end()) pairs += it->second;
        ++seen[a.at(i)];
    }
    std::printf("%lld\n", pairs);
}
