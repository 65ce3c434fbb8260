#include <algorithm>
#include <cstdio>
#include <vector>

int main() {
    int n;
    long long k;
    if (std::scanf("%d %lld", &n, &k) != 2) return 0;
    std::vector<long long> a(n);
    for (auto &x : a) std::scanf("%lld", &x);
    std::sort(a.begin(), a.end());
    long long pairs = 0;
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        long long s = a[lo] + a[hi];
        if (s < k) {
            ++lo;
        } else if (s > k) {
            --hi;
        } else if (a[lo] == a[hi]) {
            long long m = hi - lo + 1;
            pairs += m * (m - 1) / 2;
            break;
        } else {
            long long left = 1, right = 1;
            while (lo + 1 < hi && a[lo + 1] == a[lo]) ++lo, ++left;
            while (hi - 1 > lo && a[hi - 1] == a[hi]) --hi, ++right;
            pairs += left * right;
            ++lo;
            --hi;
        }
    }
    std::printf("%lld\n", pairs);
}
