# Warning flags are set per target, never globally, so third-party code keeps its own.
function(allot_set_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion -Wsign-conversion
    -Wimplicit-fallthrough -Wold-style-cast -Wcast-qual -Wformat=2 -Wmissing-declarations
    -Wno-missing-field-initializers)  # GCC 12 flags designated initializers that skip defaults
endfunction()

# One static library per src/ folder; the link graph is the layering.
function(allot_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  allot_set_warnings(${name})
endfunction()

# Every test file is registered through this one helper, so none is silently left out.
# LABELS slow marks the long suites that `make test-slow` runs.
function(allot_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  allot_set_warnings(${name})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${ARG_LABELS}")
endfunction()
