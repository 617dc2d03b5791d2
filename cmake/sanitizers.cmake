set(ALLOT_SANITIZE "" CACHE STRING "Value for -fsanitize= (address,undefined | thread)")
if(ALLOT_SANITIZE)
  add_compile_options(-fsanitize=${ALLOT_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${ALLOT_SANITIZE})
  # Line tables are all a sanitizer's report needs (file, line and function of each frame); full
  # debug information made the sanitizer build's compile 13 % slower (controller.cc: 26.5 s
  # against 23.1 s). It follows CMAKE_CXX_FLAGS_DEBUG's -g on the command line, so it wins.
  add_compile_options(-g1)
  # GCC warns that ThreadSanitizer does not model std::atomic_thread_fence, which Boost.Asio uses;
  # with warnings as errors the tsan preset did not build. The warning says nothing of our code.
  if(ALLOT_SANITIZE MATCHES "thread" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-tsan)
  endif()
endif()
