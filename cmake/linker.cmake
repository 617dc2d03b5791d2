# LLVM's lld where the compiler can use it: a build links about 60 programs, and ld.bfd took 28 s
# for the sanitizer build's bin/allot where lld took 5.6 s (2 cores, 2026-12-04). The programs
# are the same; only the link is faster.
include(CheckLinkerFlag)
check_linker_flag(CXX -fuse-ld=lld ALLOT_HAVE_LLD)
if(ALLOT_HAVE_LLD)
  add_link_options(-fuse-ld=lld)
endif()
