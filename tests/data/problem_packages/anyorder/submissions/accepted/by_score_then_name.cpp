#include <algorithm>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

int main() {
    std::ios::sync_with_stdio(false);
    int n;
    std::cin >> n;
    std::vector<std::pair<long long, std::string>> teams(n);
    for (auto &t : teams) std::cin >> t.second >> t.first;
    // Higher score first; ties broken by the name, last name first (a different order from the input's).
    std::sort(teams.begin(), teams.end(), [](const auto &a, const auto &b) {
        return a.first != b.first ? a.first > b.first : a.second > b.second;
    });
    for (const auto &t : teams) std::cout << t.second << '\n';
}
