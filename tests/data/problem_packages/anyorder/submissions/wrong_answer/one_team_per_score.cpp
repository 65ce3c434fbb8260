#include <functional>
#include <iostream>
#include <map>
#include <string>

int main() {
    int n;
    std::cin >> n;
    std::map<long long, std::string, std::greater<long long>> by_score;  // bug: tied teams overwrite each other
    for (int i = 0; i < n; ++i) {
        std::string name;
        long long score;
        std::cin >> name >> score;
        by_score[score] = name;
    }
    for (const auto &entry : by_score) std::cout << entry.second << '\n';
}
