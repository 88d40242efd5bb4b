# The API reference (option TINKER_BUILD_DOCS, off by default): target `tinker_docs` runs Doxygen
# on the public headers (include/tinker/ and the generated <tinker/version.hpp>) and fails on any
# warning, so undocumented public API breaks the build. It compiles nothing:
#
#   cmake -S . -B build/docs -DTINKER_BUILD_DOCS=ON -DTINKER_BUILD_TESTS=OFF \
#         -DTINKER_BUILD_SAMPLES=OFF -DTINKER_BUILD_BENCHMARKS=OFF
#   cmake --build build/docs --target tinker_docs      # -> build/docs/doc/api/html/index.html
#
# Needs Debian 12's `doxygen` package (1.9.4; .ci/install-deps installs it). Graphviz is not used.

option(TINKER_BUILD_DOCS "Add the tinker_docs target (Doxygen API reference, warnings are errors)" OFF)

if(TINKER_BUILD_DOCS)
  find_package(Doxygen 1.9.4 REQUIRED doxygen)

  set(TINKER_DOCS_OUTPUT_DIR "${PROJECT_BINARY_DIR}/doc/api")
  configure_file("${PROJECT_SOURCE_DIR}/doc/Doxyfile.in" "${PROJECT_BINARY_DIR}/doc/Doxyfile" @ONLY)

  # The inputs, so the target reruns when a header changes (and only then, with the stamp).
  file(GLOB_RECURSE tinker_docs_headers CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/include/tinker/*.hpp")
  set(tinker_docs_stamp "${TINKER_DOCS_OUTPUT_DIR}/html.stamp")
  add_custom_command(
    OUTPUT "${tinker_docs_stamp}"
    # Doxygen does not empty its output directory: start clean so no page of a removed entity stays.
    COMMAND "${CMAKE_COMMAND}" -E rm -rf "${TINKER_DOCS_OUTPUT_DIR}/html"
    COMMAND Doxygen::doxygen "${PROJECT_BINARY_DIR}/doc/Doxyfile"
    COMMAND "${CMAKE_COMMAND}" -E touch "${tinker_docs_stamp}"
    DEPENDS "${PROJECT_BINARY_DIR}/doc/Doxyfile" "${PROJECT_BINARY_DIR}/generated/tinker/version.hpp"
            ${tinker_docs_headers}
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    COMMENT "Doxygen: API reference of include/tinker (any warning fails) -> ${TINKER_DOCS_OUTPUT_DIR}/html"
    VERBATIM)
  add_custom_target(tinker_docs DEPENDS "${tinker_docs_stamp}")
endif()
