// testlib checker of anyorder: the output must list every team once, with scores that never increase.
#include "testlib.h"

#include <map>
#include <set>
#include <string>

int main(int argc, char *argv[]) {
    registerTestlibCmd(argc, argv);
    int n = inf.readInt();
    std::map<std::string, long long> score;
    for (int i = 0; i < n; ++i) {
        std::string name = inf.readWord();
        score[name] = inf.readLong();
    }
    std::set<std::string> printed;
    long long previous = 0;
    for (int i = 0; i < n; ++i) {
        if (ouf.seekEof()) quitf(_wa, "expected %d names, found only %d", n, i);
        std::string name = ouf.readWord();
        auto it = score.find(name);
        if (it == score.end()) quitf(_wa, "line %d: unknown team '%s'", i + 1, compress(name).c_str());
        if (!printed.insert(name).second) quitf(_wa, "line %d: team '%s' printed twice", i + 1, name.c_str());
        if (i > 0 && it->second > previous)
            quitf(_wa, "line %d: '%s' (%lld) ranked below a lower score (%lld)", i + 1, name.c_str(), it->second,
                  previous);
        previous = it->second;
    }
    if (!ouf.seekEof()) quitf(_wa, "more than %d names", n);
    quitf(_ok, "%d teams in a valid order", n);
}
