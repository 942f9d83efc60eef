# The backends and their registration protocol. Adding a backend means two things:
#   1. one tilekit_declare_backend(<name> ...) line below, the only list of backends: the order
#      of the lines is the order `tilekit info` and `compare` list them in, and everything else
#      that names backends is generated from it (the TILEKIT_ENABLE_<NAME> option; the known
#      names with their options in tilekit_backends.inc, for src/backend.cpp; TILEKIT_HAS_<NAME>
#      and the tile layer's executor of each backend in tilekit/config.hpp);
#   2. a folder backends/<name>/ whose CMakeLists.txt defines the target tilekit_backend_<name>
#      and calls tilekit_register_backend(<name>) when it builds. Its sources include only their
#      own folder, backends/common/ (what several backends share: common/host, common/portable,
#      common/gpu), include/ and src/ (as "common/...", "tilekit/...", "plugin.hpp"), never another
#      backend's folder; cuda and hip, two builds of one source, also include backends/gpu/
#      (tests/layering_test.sh checks this).
#
# Two kinds of backend:
#   - built in: tilekit_backend_<name> is an OBJECT library defining
#     tilekit::detail::make_<name>_backend(); its objects go into libtilekit and what it links
#     (LINK_LIBRARIES) becomes a private dependency of libtilekit. A dependency that is an
#     imported target must be found again by tilekit's CMake package for static consumers:
#     the folder says how with tilekit_backend_export(FIND <find_dependency arguments> ...).
#   - plugin (tilekit_register_backend(<name> PLUGIN)): tilekit_backend_<name> is a MODULE
#     library (use tilekit_add_plugin) loaded at run time when it and its runtime load, defining
#     TILEKIT_PLUGIN_ENTRY (src/plugin.hpp). Its dependencies (CUDA, ROCm) stay out
#     of libtilekit and of every program that links it.

# tilekit_declare_backend(<name> TILE <executor> [ALWAYS]): a backend tilekit has a folder for.
#   TILE    how a program's own tile kernels (include/tilekit/tile.hpp) launch on it: host (the
#           calling thread), host_threads (OpenMP threads), kokkos, cuda or hip (one of tile.hpp's
#           executors; a backend that needs a new one adds it there).
#   ALWAYS  built in every build, with no TILEKIT_ENABLE_<NAME> option (serial, the reference).
# Appends <name> to TILEKIT_ALL_BACKENDS and declares the option TILEKIT_ENABLE_<NAME>.
set(TILEKIT_ALL_BACKENDS "")
macro(tilekit_declare_backend name)
  cmake_parse_arguments(_tk_decl "ALWAYS" "TILE" "" ${ARGN})
  if(NOT _tk_decl_TILE MATCHES "^(host|host_threads|kokkos|cuda|hip)$")
    message(FATAL_ERROR "tilekit_declare_backend(${name}): TILE must name one of tile.hpp's executors, not '${_tk_decl_TILE}'")
  endif()
  list(APPEND TILEKIT_ALL_BACKENDS ${name})
  string(TOUPPER ${name} _tk_decl_up)
  set(TILEKIT_TILE_EXECUTOR_${name} ${_tk_decl_TILE})
  if(_tk_decl_ALWAYS)
    set(TILEKIT_ENABLE_OPTION_${name} "(always built)")
  else()
    set(TILEKIT_ENABLE_OPTION_${name} TILEKIT_ENABLE_${_tk_decl_up})
    # Each backend is AUTO (built when its toolchain is found), ON (required) or OFF.
    set(TILEKIT_ENABLE_${_tk_decl_up} AUTO CACHE STRING "Build the ${name} backend (AUTO, ON, OFF)")
  endif()
endmacro()

tilekit_declare_backend(serial TILE host ALWAYS)
tilekit_declare_backend(openmp TILE host_threads)
tilekit_declare_backend(kokkos TILE kokkos)
tilekit_declare_backend(cuda TILE cuda)
tilekit_declare_backend(hip TILE hip)

# The plugin interface version: derived from the headers that define what crosses the plugin
# boundary (the Backend class, the argument types, the entry points), so that any change to them
# makes a plugin built before it be refused at load time instead of calling through a stale vtable.
set(_tk_abi_text "")
foreach(h include/tilekit/backend.hpp include/tilekit/types.hpp src/plugin.hpp)
  file(READ ${PROJECT_SOURCE_DIR}/${h} _tk_h)
  string(APPEND _tk_abi_text "${_tk_h}")
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${h})
endforeach()
string(SHA256 _tk_abi_hash "${_tk_abi_text}")
string(SUBSTRING "${_tk_abi_hash}" 0 7 _tk_abi_hash)
math(EXPR TILEKIT_PLUGIN_ABI "0x${_tk_abi_hash}")  # 7 hex digits: a positive int
unset(_tk_abi_text)
unset(_tk_abi_hash)
unset(_tk_h)

# Where plugins are installed, and that directory relative to the program's (for a static
# libtilekit, the program is what plugins are searched next to).
set(TILEKIT_PLUGIN_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/tilekit)
file(RELATIVE_PATH TILEKIT_PLUGIN_DIR_FROM_BIN ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR}/tilekit)

function(tilekit_register_backend name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "PLUGIN" "" "")
  set_property(GLOBAL APPEND PROPERTY TILEKIT_BACKENDS ${name})
  if(arg_PLUGIN)
    set_property(GLOBAL APPEND PROPERTY TILEKIT_PLUGINS ${name})
  endif()
endfunction()

# tilekit_backend_export([LINK <items...>] [FIND <find_dependency arguments>...] [PKGCONFIG <flags...>]
#                        [DEB <Debian packages...>]):
# what a built-in backend's dependencies become for the users of an installed static libtilekit
# (a shared one hides them): LINK items in tilekit::tilekit's link interface, each FIND string a
# find_dependency() call in tilekitConfig.cmake that defines LINK's imported targets, and the
# PKGCONFIG flags in tilekit.pc's Libs, DEB the Debian packages `cpack -G DEB` makes it depend on.
function(tilekit_backend_export)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "" "LINK;FIND;PKGCONFIG;DEB")
  set_property(GLOBAL APPEND PROPERTY TILEKIT_EXPORT_DEB ${arg_DEB})
  set_property(GLOBAL APPEND PROPERTY TILEKIT_EXPORT_LINK ${arg_LINK})
  set_property(GLOBAL APPEND PROPERTY TILEKIT_EXPORT_FIND ${arg_FIND})
  set_property(GLOBAL APPEND PROPERTY TILEKIT_EXPORT_PKGCONFIG ${arg_PKGCONFIG})
endfunction()

# tilekit_add_plugin(<name> [SOURCES...]): the MODULE library tilekit_backend_<name>, written as
# tilekit-<name>.so next to the program and libtilekit in the build tree. With a shared
# libtilekit it links it; with a static one it carries its own copy of the core's objects but
# the registry (src/backend.cpp, whose Backend class the loading program exports), so it never
# depends on which parts of libtilekit.a a program happened to link. -Bsymbolic: a plugin binds
# its own symbols first, so two plugins built from the same sources (cuda, hip) never mix.
function(tilekit_add_plugin name)
  add_library(tilekit_backend_${name} MODULE ${ARGN})
  set_target_properties(tilekit_backend_${name} PROPERTIES
    PREFIX "" OUTPUT_NAME tilekit-${name}
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}
    CXX_VISIBILITY_PRESET default)
  target_link_libraries(tilekit_backend_${name} PRIVATE tilekit_internal)
  if(BUILD_SHARED_LIBS)
    target_link_libraries(tilekit_backend_${name} PRIVATE tilekit)
  else()
    target_sources(tilekit_backend_${name} PRIVATE $<TARGET_OBJECTS:tilekit_core>)
  endif()
  target_link_options(tilekit_backend_${name} PRIVATE -Wl,-Bsymbolic)
endfunction()

# tilekit_backend_wanted(<name> <var>): reads TILEKIT_ENABLE_<NAME> into <var> as AUTO/ON/OFF.
function(tilekit_backend_wanted name var)
  string(TOUPPER ${name} up)
  set(v "${TILEKIT_ENABLE_${up}}")
  string(TOUPPER "${v}" v)
  if(v STREQUAL "TRUE" OR v STREQUAL "1" OR v STREQUAL "YES")
    set(v ON)
  elseif(v STREQUAL "FALSE" OR v STREQUAL "0" OR v STREQUAL "NO" OR v STREQUAL "")
    set(v OFF)
  endif()
  if(NOT v MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "TILEKIT_ENABLE_${up} must be AUTO, ON or OFF, not '${v}'")
  endif()
  set(${var} ${v} PARENT_SCOPE)
endfunction()

# tilekit_backend_missing(<name> <wanted> <reason>): a required backend that cannot be built is
# a configure error; an AUTO one is skipped with the reason printed.
macro(tilekit_backend_missing name wanted reason)
  if("${wanted}" STREQUAL "ON")
    message(FATAL_ERROR "tilekit backend '${name}' was requested (ON) but cannot be built: ${reason}")
  endif()
  message(STATUS "tilekit backend '${name}' skipped: ${reason}")
  return()
endmacro()

# tilekit_backends.inc (src/backend.cpp): every backend tilekit knows with the option that builds
# it, then the backends of this build, built in or loaded as plugins. A line whose macro the
# including code does not define expands to nothing.
function(tilekit_write_registry file backends plugins)
  set(content "// Generated by CMake (cmake/TilekitBackends.cmake): the backends tilekit knows, then those of this build.\n")
  string(APPEND content "#ifndef TILEKIT_KNOWN\n#define TILEKIT_KNOWN(name, option)\n#endif\n"
                        "#ifndef TILEKIT_BACKEND\n#define TILEKIT_BACKEND(name)\n#endif\n"
                        "#ifndef TILEKIT_PLUGIN\n#define TILEKIT_PLUGIN(name)\n#endif\n")
  foreach(b IN LISTS TILEKIT_ALL_BACKENDS)
    string(APPEND content "TILEKIT_KNOWN(${b}, \"${TILEKIT_ENABLE_OPTION_${b}}\")\n")
  endforeach()
  foreach(b IN LISTS backends)
    if(b IN_LIST plugins)
      string(APPEND content "TILEKIT_PLUGIN(${b})\n")
    else()
      string(APPEND content "TILEKIT_BACKEND(${b})\n")
    endif()
  endforeach()
  string(APPEND content "#undef TILEKIT_KNOWN\n#undef TILEKIT_BACKEND\n#undef TILEKIT_PLUGIN\n")
  file(CONFIGURE OUTPUT ${file} CONTENT "${content}")
endfunction()

# tilekit/config.hpp: what this build of tilekit has, for code that includes its headers.
function(tilekit_write_config_header file backends)
  set(TILEKIT_HAS_LINES "")
  set(TILEKIT_TILE_EXECUTORS "")
  foreach(b IN LISTS TILEKIT_ALL_BACKENDS)
    string(TOUPPER ${b} up)
    if(b IN_LIST backends)
      string(APPEND TILEKIT_HAS_LINES "#define TILEKIT_HAS_${up} 1\n")
    else()
      string(APPEND TILEKIT_HAS_LINES "/* #undef TILEKIT_HAS_${up} */\n")
    endif()
    string(APPEND TILEKIT_TILE_EXECUTORS " X(${b}, ${TILEKIT_TILE_EXECUTOR_${b}})")
  endforeach()
  string(REPLACE ";" "," TILEKIT_BACKENDS_CSV "${backends}")
  get_property(plugins GLOBAL PROPERTY TILEKIT_PLUGINS)
  string(REPLACE ";" "," TILEKIT_PLUGINS_CSV "${plugins}")
  get_property(TILEKIT_CUDA_ARCHITECTURES GLOBAL PROPERTY TILEKIT_CUDA_ARCHITECTURES)
  string(REPLACE ";" "," TILEKIT_CUDA_ARCHITECTURES "${TILEKIT_CUDA_ARCHITECTURES}")
  set(TILEKIT_HIP_ARCHITECTURES_CSV "")
  if("hip" IN_LIST backends)
    string(REPLACE ";" "," TILEKIT_HIP_ARCHITECTURES_CSV "${TILEKIT_HIP_ARCHITECTURES}")
  endif()
  if(TILEKIT_BUILD_SWEEPS)
    set(TILEKIT_SWEEPS_LINE "#define TILEKIT_HAS_SWEEPS 1")
  else()
    set(TILEKIT_SWEEPS_LINE "/* #undef TILEKIT_HAS_SWEEPS */")
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/config.hpp.in ${file} @ONLY)
endfunction()

# Built-in backends: their objects into libtilekit, with their link dependencies (resolved where
# the backend's folder found them) private to it in the build tree; for an installed static
# libtilekit, what the folders declared with tilekit_backend_export().
function(tilekit_link_builtin_backends target backends plugins)
  foreach(b IN LISTS backends)
    if(b IN_LIST plugins)
      add_dependencies(${target} tilekit_backend_${b})  # built with the library, loaded later
    else()
      target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:tilekit_backend_${b}>)
    endif()
  endforeach()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    get_property(items GLOBAL PROPERTY TILEKIT_EXPORT_LINK)
    foreach(i IN LISTS items)
      target_link_libraries(${target} INTERFACE "$<INSTALL_INTERFACE:$<LINK_ONLY:${i}>>")
    endforeach()
  endif()
endfunction()
