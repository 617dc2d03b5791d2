# allot_sigv4: AWS Signature Version 4 signing and verification, the shared-credentials file, and
# depth-capped parsing of JSON from the wire (wire_json, with Boost.JSON's parser). Included from
# src/api/CMakeLists.txt. credentials.cc writes its file through env/files.h (allot_env).
find_package(OpenSSL REQUIRED GLOBAL)  # GLOBAL: targets in other folders link allot_sigv4 too
find_package(nlohmann_json REQUIRED GLOBAL)
find_package(Boost 1.81 REQUIRED GLOBAL)  # Boost.JSON's parser reads the wire's JSON
allot_library(allot_sigv4
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sigv4.cc ${CMAKE_CURRENT_LIST_DIR}/credentials.cc
          ${CMAKE_CURRENT_LIST_DIR}/wire_json.cc ${CMAKE_CURRENT_LIST_DIR}/boost_json.cc
          ${CMAKE_CURRENT_LIST_DIR}/secret_box.cc
  DEPS allot_common allot_env OpenSSL::Crypto nlohmann_json::nlohmann_json Boost::headers)

# The tests. GoogleTest is found and tests/ is added only after src/, so the test targets are
# made at the end of the top-level CMakeLists.txt. When allot_api exists, tests/CMakeLists.txt
# has already made api_sigv4_test, api_credentials_test and api_wire_json_test (linked with
# allot_api); otherwise they are made here, linked with allot_sigv4 alone.
if(ALLOT_BUILD_TESTS)
  function(allot_sigv4_tests)
    foreach(name sigv4_test credentials_test wire_json_test secret_box_test)
      if(NOT TARGET api_${name})
        allot_test(api_${name} SOURCES ${PROJECT_SOURCE_DIR}/tests/api/${name}.cc
                   DEPS allot_sigv4)
        target_include_directories(api_${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
      endif()
    endforeach()
    # Verifies one request read from stdin; driven by botocore in tests/api/botocore_sigv4_test.py.
    add_executable(api_sigv4_verify_tool
      ${PROJECT_SOURCE_DIR}/tests/api/support/verify_tool/sigv4_verify_tool.cc)
    target_link_libraries(api_sigv4_verify_tool PRIVATE allot_sigv4)
    allot_set_warnings(api_sigv4_verify_tool)
    add_test(NAME botocore_sigv4
             COMMAND python3 ${PROJECT_SOURCE_DIR}/tests/api/botocore_sigv4_test.py
                     $<TARGET_FILE:api_sigv4_verify_tool>)
    # The fuzz targets of fuzz/ (SigV4, wire JSON, the payload decoder) over their seeds.
    include(${PROJECT_SOURCE_DIR}/fuzz/replay.cmake)
  endfunction()
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL allot_sigv4_tests)
endif()
