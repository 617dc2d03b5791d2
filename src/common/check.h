#pragma once

// ALLOT_CHECK is for programmer errors: a broken invariant aborts with its location.
// Runtime failures (bad input, I/O) are Status values instead.

#include <cstdio>
#include <cstdlib>

#define ALLOT_CHECK(cond)                                                           \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                 \
    }                                                                               \
  } while (false)
