# The SDK's layers as build targets, and the check that keeps their includes honest.
#
# A layer is a set of folders under src/ and the layers it may use (the table: src/layers.cmake).
# Every source file and header under src/ belongs to the layer whose folder matches it longest
# ("programs/local" would beat "programs"). The same declaration gives:
#   - the layer's sources (tinker_layer_sources), so moving a file between folders moves it between
#     libraries without editing a list;
#   - the include rule checked on every build (cmake/TinkerCheckLayers.cmake): a file may include
#     internal headers ("<folder>/<file>.hpp", relative to src/) of its own layer and of the layers it
#     uses, directly or through others, and nothing else. doc/architecture.md#layers draws the graph.

include_guard(GLOBAL)

set_property(GLOBAL PROPERTY TINKER_LAYERS "")

# tinker_layer(<name> PATHS <path>... [USES <layer>...])
function(tinker_layer name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "PATHS;USES")
  if(NOT arg_PATHS)
    message(FATAL_ERROR "tinker_layer(${name}): PATHS is required")
  endif()
  get_property(known GLOBAL PROPERTY TINKER_LAYERS)
  foreach(used IN LISTS arg_USES)
    if(NOT used IN_LIST known)
      message(FATAL_ERROR "tinker_layer(${name}): uses '${used}', which is not declared before it "
                          "(declare layers bottom up, so the graph cannot have a cycle)")
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY TINKER_LAYERS ${name})
  set_property(GLOBAL PROPERTY TINKER_LAYER_PATHS_${name} ${arg_PATHS})
  set_property(GLOBAL PROPERTY TINKER_LAYER_USES_${name} ${arg_USES})
endfunction()

# The layer owning `path` (relative to src/): the one with the longest matching path, or "".
function(tinker_layer_owner path out)
  get_property(layers GLOBAL PROPERTY TINKER_LAYERS)
  set(best "")
  set(best_length -1)
  foreach(layer IN LISTS layers)
    get_property(paths GLOBAL PROPERTY TINKER_LAYER_PATHS_${layer})
    foreach(candidate IN LISTS paths)
      string(LENGTH "${candidate}" length)
      if(length GREATER best_length AND (path STREQUAL candidate OR path MATCHES "^${candidate}/"))
        set(best "${layer}")
        set(best_length ${length})
      endif()
    endforeach()
  endforeach()
  set(${out} "${best}" PARENT_SCOPE)
endfunction()

# tinker_layer_sources(<layer> <out>): the absolute paths of the .cpp files the layer owns. A
# layer's paths are folders; anything else in the table is an error.
function(tinker_layer_sources layer out)
  get_property(paths GLOBAL PROPERTY TINKER_LAYER_PATHS_${layer})
  set(sources "")
  foreach(path IN LISTS paths)
    set(absolute "${PROJECT_SOURCE_DIR}/src/${path}")
    if(NOT IS_DIRECTORY "${absolute}")
      message(FATAL_ERROR "layer ${layer}: '${path}' is not a folder under src/ (src/layers.cmake names folders only)")
    endif()
    file(GLOB_RECURSE found CONFIGURE_DEPENDS RELATIVE "${PROJECT_SOURCE_DIR}/src" "${absolute}/*.cpp")
    foreach(file IN LISTS found)
      tinker_layer_owner("${file}" owner)
      if(owner STREQUAL layer)
        list(APPEND sources "${PROJECT_SOURCE_DIR}/src/${file}")
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES sources)
  set(${out} ${sources} PARENT_SCOPE)
endfunction()

# tinker_add_layer_check(<target>): writes the layer table for cmake/TinkerCheckLayers.cmake and
# adds a target that runs the check whenever a file of a layer changes. The layer libraries depend
# on it, so code that breaks the rules is not built.
function(tinker_add_layer_check target)
  get_property(layers GLOBAL PROPERTY TINKER_LAYERS)
  set(watched "")
  foreach(layer IN LISTS layers)
    get_property(paths GLOBAL PROPERTY TINKER_LAYER_PATHS_${layer})
    foreach(path IN LISTS paths)
      file(GLOB_RECURSE found CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/src/${path}/*.cpp"
           "${PROJECT_SOURCE_DIR}/src/${path}/*.hpp")
      list(APPEND watched ${found})
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES watched)
  set(table_file "${PROJECT_SOURCE_DIR}/src/layers.cmake")
  set(stamp "${PROJECT_BINARY_DIR}/tinker_layers.checked")
  add_custom_command(
    OUTPUT "${stamp}"
    COMMAND "${CMAKE_COMMAND}" "-DTINKER_LAYER_TABLE=${table_file}" "-DTINKER_SOURCE_ROOT=${PROJECT_SOURCE_DIR}/src"
            -P "${PROJECT_SOURCE_DIR}/cmake/TinkerCheckLayers.cmake"
    COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
    DEPENDS "${table_file}" "${PROJECT_SOURCE_DIR}/cmake/TinkerCheckLayers.cmake"
            "${PROJECT_SOURCE_DIR}/cmake/TinkerLayers.cmake" ${watched}
    COMMENT "Checking that every include in src/ respects the layers"
    VERBATIM)
  add_custom_target(${target} DEPENDS "${stamp}")
endfunction()
