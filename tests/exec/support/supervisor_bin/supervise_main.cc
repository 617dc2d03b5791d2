// A stand-in for the allot binary in the executor tests: `supervise_main __supervise ...` runs the
// supervisor as `allot __supervise ...` does.

#include <cstdio>
#include <cstring>

#include "exec/supervisor.h"

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "__supervise") != 0) {
    std::fprintf(stderr, "usage: %s __supervise ...\n", argc > 0 ? argv[0] : "supervise_main");
    return 2;
  }
  return allot::exec::SuperviseMain(argc - 2, argv + 2);
}
