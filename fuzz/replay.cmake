# Included by src/api/sigv4_CMakeLists.cmake once every target exists: each fuzz target, linked
# with replay_main.cc instead of libFuzzer, runs once over every seed in fuzz/corpus/<name>/
# (ctest fuzz_corpus_<name>), so the gcc builds of `make test` keep the seeds passing.
set(allot_fuzz_dir ${PROJECT_SOURCE_DIR}/fuzz)
foreach(name sigv4 wire_json payload decode)
  set(lib allot_sigv4)
  if(name STREQUAL "decode")
    set(lib allot_wire)
  elseif(name STREQUAL "payload")
    if(NOT TARGET allot_server)
      continue()
    endif()
    set(lib allot_server)
  endif()
  add_executable(fuzz_replay_${name} ${allot_fuzz_dir}/${name}_fuzz.cc
                 ${allot_fuzz_dir}/replay_main.cc ${allot_fuzz_dir}/fuzz_support.cc)
  target_include_directories(fuzz_replay_${name} PRIVATE ${allot_fuzz_dir})
  target_link_libraries(fuzz_replay_${name} PRIVATE ${lib})
  allot_set_warnings(fuzz_replay_${name})
  add_test(NAME fuzz_corpus_${name}
           COMMAND fuzz_replay_${name} ${allot_fuzz_dir}/corpus/${name})
endforeach()
