// A stand-in for the allot binary in the executor tests: `supervise_main __supervise ...` runs the
// supervisor as `allot __supervise ...` does, and `supervise_main __jobexec ...` the sandbox's exec
// step as `allot __jobexec ...` does.

#include <cstdio>
#include <cstring>

#include "exec/job_exec.h"
#include "exec/sagemaker_layout.h"
#include "exec/supervisor.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "__supervise") == 0) {
    return allot::exec::SuperviseMain(argc - 2, argv + 2);
  }
  if (argc >= 2 && std::strcmp(argv[1], "__jobexec") == 0) {
    return allot::exec::JobExecMain(argc - 2, argv + 2);
  }
  if (argc >= 2 && std::strcmp(argv[1], "__copyas") == 0) {
    return allot::exec::CopyAsMain(argc - 2, argv + 2);
  }
  std::fprintf(stderr, "usage: %s __supervise|__jobexec ...\n",
               argc > 0 ? argv[0] : "supervise_main");
  return 2;
}
