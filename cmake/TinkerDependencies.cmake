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

pkg_check_modules(LIBARCHIVE QUIET IMPORTED_TARGET libarchive>=3.4)
tinker_require(LIBARCHIVE_FOUND "libarchive >= 3.4" "libarchive-dev")

# protobuf is linked statically, and src/wire/proto keeps its symbols out of executables' dynamic
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
endif()

if(TINKER_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG QUIET)
  tinker_require(benchmark_FOUND "Google Benchmark" "libbenchmark-dev")
endif()
