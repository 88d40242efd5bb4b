# `cmake --install`: headers, the static libraries of every layer, `tinker`, `tinker-local`,
# `tinker-bench` (doc/bench.md; the developer benchmarks of benchmarks/ are not installed), a CMake package (find_package(tinker 0.2) -> tinker::tinker,
# tinker::train, tinker::local), pkg-config files (tinker, tinker-local) and a Debian package made by CPack
# (`cpack -G DEB` in the build directory). Included at the end of the top-level CMakeLists.txt.

include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TINKER_SDK_LAYERS losses sync renderers client hub tokenizer weights image text api http asio core)  # link order: users first
set(_tinker_targets tinker tinker_headers tinker_local tinker_train)
foreach(layer IN LISTS TINKER_SDK_LAYERS)
  list(APPEND _tinker_targets tinker_${layer})
  set_target_properties(tinker_${layer} PROPERTIES EXPORT_NAME ${layer})
endforeach()
set_target_properties(tinker_headers PROPERTIES EXPORT_NAME headers)
set_target_properties(tinker_local PROPERTIES EXPORT_NAME local)
set_target_properties(tinker_train PROPERTIES EXPORT_NAME train)

install(TARGETS ${_tinker_targets} EXPORT tinkerTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT development)
install(TARGETS tinker-cli tinker-local tinker-bench RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT tools)
# Everything `cmake --install` copies, for builds that made only some targets so far
# (`cmake --build <dir> --target tinker_installable` before installing).
add_custom_target(tinker_installable)
add_dependencies(tinker_installable tinker-cli tinker-local tinker-bench tinker_local tinker_sync tinker_losses
                 tinker_renderers
                 tinker_train)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/tinker" "${PROJECT_BINARY_DIR}/generated/tinker"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" COMPONENT development FILES_MATCHING PATTERN "*.hpp")

set(_tinker_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/tinker")
install(EXPORT tinkerTargets NAMESPACE tinker:: DESTINATION "${_tinker_cmake_dir}" COMPONENT development)
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/package/tinkerConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/package/tinkerConfig.cmake"
                              INSTALL_DESTINATION "${_tinker_cmake_dir}")
# 0.x: a minor version may break the API, so 0.2 accepts 0.2.* only.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/package/tinkerConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/package/tinkerConfig.cmake" "${PROJECT_BINARY_DIR}/package/tinkerConfigVersion.cmake"
        DESTINATION "${_tinker_cmake_dir}" COMPONENT development)

# pkg-config: the SDK's libraries in link order, and static protobuf (see TinkerDependencies.cmake).
list(TRANSFORM TINKER_SDK_LAYERS PREPEND "-ltinker_" OUTPUT_VARIABLE _tinker_pc_libs)
list(JOIN _tinker_pc_libs " " TINKER_PC_SDK_LIBS)
set(TINKER_PC_DEFINITIONS
    "-DBOOST_ASIO_SEPARATE_COMPILATION -DBOOST_BEAST_SEPARATE_COMPILATION -DBOOST_ASIO_NO_DEPRECATED")
set(TINKER_PC_PROTOBUF "${Protobuf_LIBRARY} -lz -Wl,--exclude-libs,libprotobuf.a:libtinker_core.a")
file(RELATIVE_PATH TINKER_PC_PREFIX_FROM_PCFILEDIR "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" TINKER_PC_PREFIX_FROM_PCFILEDIR "${TINKER_PC_PREFIX_FROM_PCFILEDIR}")
foreach(pc IN ITEMS tinker tinker-local)
  configure_file("${PROJECT_SOURCE_DIR}/cmake/package/${pc}.pc.in" "${PROJECT_BINARY_DIR}/package/${pc}.pc" @ONLY)
  install(FILES "${PROJECT_BINARY_DIR}/package/${pc}.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
          COMPONENT development)
endforeach()

# Debian package: tinker-cpp_<version>_amd64.deb with everything above. The libraries are static,
# so the package depends on the -dev packages of what they link with (which bring the runtime
# libraries the programs need).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tinker-cpp)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "tinker-cpp developers <tinker-cpp@users.noreply.github.com>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libboost1.81-dev, libboost-json1.81-dev, libboost-url1.81-dev, libssl-dev, libsentencepiece-dev, libzstd-dev, \
libarchive-dev, libprotobuf-dev, libpcre2-dev, libutf8proc-dev, libpng-dev, libjpeg62-turbo-dev, libwebp-dev, pkg-config")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "C++20 SDK for the Tinker fine-tuning API, with tinker-local\n \
Static libraries and headers of the SDK (find_package(tinker), pkg-config tinker), the `tinker`\n \
command line, tinker-local, a Tinker-compatible server on loopback with a tiny LoRA model, and\n \
tinker-bench, which measures what a training or sampling workload costs before it is launched.")
set(CPACK_STRIP_FILES ON)
include(CPack)
