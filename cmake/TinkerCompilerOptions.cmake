# Warning and sanitizer flags shared by every target of the project.

include_guard(GLOBAL)

add_library(tinker_compile_options INTERFACE)
target_compile_options(tinker_compile_options INTERFACE -Wall -Wextra -Wpedantic)
if(TINKER_WARNINGS_AS_ERRORS)
  target_compile_options(tinker_compile_options INTERFACE -Werror)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # Known GCC 12 false positive in coroutine frames at -O2 (doc/architecture.md#toolchain-rules).
  target_compile_options(tinker_compile_options INTERFACE -Wno-mismatched-new-delete)
  if(CMAKE_UNITY_BUILD)
    # A unity build compiles each source as an include of a generated file, so GCC sees every type of
    # an anonymous namespace as "declared in a header" and warns when a coroutine frame holds one
    # (-Wsubobject-linkage); in a unity build that is the build's doing, not a fault in the code.
    target_compile_options(tinker_compile_options INTERFACE -Wno-subobject-linkage)
  endif()
endif()

if(TINKER_SANITIZE)
  set(_tinker_san -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # Clang 14 cannot compile coroutines with -fsanitize=function (llvm #49689).
    list(APPEND _tinker_san -fno-sanitize=function)
  endif()
  add_compile_options(${_tinker_san})
  add_link_options(-fsanitize=address,undefined)
endif()

if(TINKER_SANITIZE_THREAD)
  if(TINKER_SANITIZE)
    message(FATAL_ERROR "TINKER_SANITIZE_THREAD and TINKER_SANITIZE cannot be combined (ThreadSanitizer excludes ASan)")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

if(TINKER_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TINKER_FUZZ needs Clang (libFuzzer); configure with -DCMAKE_CXX_COMPILER=clang++ or the asan preset")
  endif()
  if(NOT TINKER_SANITIZE)
    # The sanitizer runtime defines the coverage hooks for the programs that are not fuzzers.
    message(FATAL_ERROR "TINKER_FUZZ needs TINKER_SANITIZE=ON (the asan preset sets both)")
  endif()
  # Coverage hooks in every object (libFuzzer's runtime is linked only into the fuzz targets; in the other
  # programs the sanitizer runtime's default hooks do nothing), so the fuzzers see the SDK's branches.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
