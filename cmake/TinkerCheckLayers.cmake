# Checks the include rule of the layers (cmake/TinkerLayers.cmake): every internal include
# ("<dir>/<file>.hpp", resolved next to the including file first, then from the source root) must
# name a header of the including file's own layer or of a layer it uses, directly or through
# others. Prints every violation and fails.
#
#   cmake -DTINKER_LAYER_TABLE=<file of tinker_layer() calls> -DTINKER_SOURCE_ROOT=<src dir> -P TinkerCheckLayers.cmake
#
# Includes that resolve to no file under the root (generated headers such as the protobuf code,
# or third-party headers) are not the layers' business and are skipped.

cmake_minimum_required(VERSION 3.25)
foreach(required IN ITEMS TINKER_LAYER_TABLE TINKER_SOURCE_ROOT)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "TinkerCheckLayers.cmake: -D${required}=... is required")
  endif()
endforeach()

include("${CMAKE_CURRENT_LIST_DIR}/TinkerLayers.cmake")
include("${TINKER_LAYER_TABLE}")
get_property(layers GLOBAL PROPERTY TINKER_LAYERS)
get_filename_component(root "${TINKER_SOURCE_ROOT}" ABSOLUTE)
get_filename_component(root_name "${root}" NAME)

# What each layer may include: itself and everything it uses, transitively.
foreach(layer IN LISTS layers)
  set(reachable ${layer})
  set(pending ${layer})
  while(pending)
    list(POP_FRONT pending current)
    get_property(uses GLOBAL PROPERTY TINKER_LAYER_USES_${current})
    foreach(used IN LISTS uses)
      if(NOT used IN_LIST reachable)
        list(APPEND reachable ${used})
        list(APPEND pending ${used})
      endif()
    endforeach()
  endwhile()
  set(allowed_${layer} ${reachable})
endforeach()

file(GLOB_RECURSE files RELATIVE "${root}" "${root}/*.cpp" "${root}/*.hpp")
list(SORT files)
set(violations "")
set(checked 0)
foreach(file IN LISTS files)
  tinker_layer_owner("${file}" owner)
  if(owner STREQUAL "")
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  get_filename_component(directory "${file}" DIRECTORY)
  file(STRINGS "${root}/${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]+\"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" header "${line}")
    if(directory AND EXISTS "${root}/${directory}/${header}")
      cmake_path(SET included NORMALIZE "${directory}/${header}")
    elseif(EXISTS "${root}/${header}")
      cmake_path(SET included NORMALIZE "${header}")
    else()
      continue()
    endif()
    tinker_layer_owner("${included}" included_owner)
    if(included_owner STREQUAL "" OR included_owner IN_LIST allowed_${owner})
      continue()
    endif()
    list(JOIN allowed_${owner} ", " allowed)
    list(APPEND violations
         "${root_name}/${file} (layer ${owner}) includes \"${header}\" of layer ${included_owner} (layer ${owner} may include only: ${allowed})")
  endforeach()
endforeach()

if(violations)
  list(LENGTH violations count)
  list(JOIN violations "\n  " listed)
  message(FATAL_ERROR "Layer rule broken (${count} include(s); the layers are declared in src/layers.cmake, "
                      "see doc/architecture.md#layers):\n  ${listed}")
endif()
message(STATUS "Layer rule: ${checked} files checked, every include respects the layers")
