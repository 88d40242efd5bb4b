# tinker_thread_tests: the tests whose code crosses threads, for ThreadSanitizer (preset tsan). The
# blocking facade (sync/), futures waited on from other threads, the process-wide sampling back-off
# registry, tokenizer caches and encode_batch, the async join/complete helpers, the safetensors writer's
# concurrent writes, the merge's threaded arithmetic and shard pipeline, and tinker-local's model
# workers and ordering under concurrent clients. Each file also runs in its usual binary.
set(TINKER_THREAD_TEST_FILES
  integration/client/future_test.cpp
  integration/download/download_sync_test.cpp
  integration/sampling/sampling_backoff_test.cpp
  integration/sync/sync_errors_test.cpp
  integration/sync/sync_io_thread_test.cpp
  integration/sync/sync_lifetime_test.cpp
  integration/sync/sync_threads_test.cpp
  integration/sync/sync_training_test.cpp
  unit/client/async/complete_test.cpp
  unit/client/async/join_test.cpp
  unit/client/futures/core_test.cpp
  unit/text/tokenizer_api_test.cpp
  unit/tokenizer/tokenizer_cache_test.cpp
  unit/weights/safetensors_writer_test.cpp
  unit/weights/merge_apply_test.cpp
  unit/weights/merge_engine_test.cpp
  unit/weights/merge_quantized_test.cpp
  unit/programs/local/http_api/ordering_test.cpp
  unit/programs/local/model/sampler_test.cpp)
file(GLOB TINKER_THREAD_TEST_SUPPORT CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/integration/support/*.cpp"
     "${CMAKE_CURRENT_SOURCE_DIR}/unit/programs/local/support/*.cpp")
list(APPEND TINKER_THREAD_TEST_SUPPORT "${CMAKE_CURRENT_SOURCE_DIR}/integration/sampling/sampling_support.cpp"
     "${CMAKE_CURRENT_SOURCE_DIR}/support/tokenizer_test_support.cpp")
list(TRANSFORM TINKER_THREAD_TEST_FILES PREPEND "${CMAKE_CURRENT_SOURCE_DIR}/")
add_executable(tinker_thread_tests ${TINKER_THREAD_TEST_FILES} ${TINKER_THREAD_TEST_SUPPORT}
               "${CMAKE_CURRENT_SOURCE_DIR}/support/tokenizer_reference.cpp")
target_include_directories(tinker_thread_tests PRIVATE "${PROJECT_SOURCE_DIR}/src" "${CMAKE_CURRENT_SOURCE_DIR}")
target_include_directories(tinker_thread_tests SYSTEM PRIVATE ${SENTENCEPIECE_INCLUDE_DIRS})
target_link_libraries(tinker_thread_tests PRIVATE tinker::tinker tinker::local tinker_compile_options tinker_proto_headers
                      Boost::json Boost::url OpenSSL::SSL OpenSSL::Crypto PkgConfig::ZSTD GTest::gtest
                      GTest::gtest_main GTest::gmock)
target_compile_definitions(tinker_thread_tests PRIVATE
  TINKER_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data"
  TINKER_GOLDEN_DIR="${CMAKE_CURRENT_BINARY_DIR}/golden"
  ${TINKER_TOKENIZER_REFERENCE_DEFINITIONS})
tinker_test_pch(tinker_thread_tests <tinker/tinker.hpp>)
gtest_discover_tests(tinker_thread_tests DISCOVERY_TIMEOUT 120)
