# cmake -DFUZZER=<fuzz target> -DINPUT_DIRS=<dir>;<dir>... -P run_inputs.cmake
# Runs the fuzz target once on every file of the directories (libFuzzer given files, not directories,
# executes each and stops), failing on the first crash, leak, sanitizer report or timeout. The files are
# listed when the test runs, so a new regression input needs no reconfigure.
set(inputs "")
foreach(dir IN LISTS INPUT_DIRS)
  if(IS_DIRECTORY "${dir}")
    file(GLOB_RECURSE found LIST_DIRECTORIES false "${dir}/*")
    list(APPEND inputs ${found})
  endif()
endforeach()
list(FILTER inputs EXCLUDE REGEX "/(README[^/]*|\\.[^/]*)$")
list(SORT inputs)
list(LENGTH inputs count)
if(count EQUAL 0)
  message(FATAL_ERROR "no inputs in ${INPUT_DIRS}: a fuzz target's test needs at least its seed corpus")
endif()
message(STATUS "running ${FUZZER} on ${count} inputs")
# -timeout: an input that takes this long is a hang (libFuzzer reports it and fails).
execute_process(COMMAND "${FUZZER}" -timeout=30 ${inputs} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (exit ${status}) on one of the inputs above")
endif()
