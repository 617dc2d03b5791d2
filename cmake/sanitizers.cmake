set(ALLOT_SANITIZE "" CACHE STRING "Value for -fsanitize= (address,undefined | thread)")
if(ALLOT_SANITIZE)
  add_compile_options(-fsanitize=${ALLOT_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${ALLOT_SANITIZE})
  # GCC warns that ThreadSanitizer does not model std::atomic_thread_fence, which Boost.Asio uses;
  # with warnings as errors the tsan preset did not build. The warning says nothing of our code.
  if(ALLOT_SANITIZE MATCHES "thread" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-tsan)
  endif()
endif()
