#include "testlib.h"

// The input of Sum Pairs exactly as the statement gives it: "n k", then n numbers on one line.
int main(int argc, char* argv[]) {
    registerValidation(argc, argv);
    int n = inf.readInt(1, 200000, "n");
    inf.readSpace();
    inf.readLong(-2000000000LL, 2000000000LL, "k");
    inf.readEoln();
    for (int i = 0; i < n; ++i) {
        if (i) inf.readSpace();
        inf.readInt(-1000000000, 1000000000, "a_i");
    }
    inf.readEoln();
    inf.readEof();
}
