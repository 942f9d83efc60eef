# Programs written on the tile layer (include/tilekit/tile.hpp): which backends a translation unit
# can launch tile kernels on depends on how it is compiled, so one source becomes one executable
# per way of compiling it:
#   <name>         the host compiler, with OpenMP when the openmp backend is built: serial, openmp
#   <name>_kokkos  with Kokkos (TILEKIT_TILE_WITH_KOKKOS; nvcc_wrapper for a CUDA Kokkos): kokkos
#   <name>_cuda    nvcc: cuda
# tilekit_tile_executables(<name> <source> [LIBS <targets>...]) makes them and sets
# <name>_TARGETS in the caller's scope to the list made.
function(tilekit_tile_executables name source)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  get_filename_component(src "${source}" ABSOLUTE)
  get_property(backends GLOBAL PROPERTY TILEKIT_BACKENDS)
  add_executable(${name} ${src})
  target_link_libraries(${name} PRIVATE tilekit ${ARG_LIBS})
  if("openmp" IN_LIST backends)
    target_link_libraries(${name} PRIVATE OpenMP::OpenMP_CXX)
  endif()
  set(made ${name})
  # Not when the kokkos backend is a plugin: the plugin carries its own (static) Kokkos, and a
  # program linking Kokkos too would hold two runtimes (configure with TILEKIT_KOKKOS_PLUGIN=OFF).
  get_property(plugins GLOBAL PROPERTY TILEKIT_PLUGINS)
  if("kokkos" IN_LIST backends AND TARGET tilekit_tile_kokkos AND NOT "kokkos" IN_LIST plugins)
    add_executable(${name}_kokkos ${src})
    target_link_libraries(${name}_kokkos PRIVATE tilekit tilekit_tile_kokkos ${ARG_LIBS})
    get_property(kokkos_cuda GLOBAL PROPERTY TILEKIT_KOKKOS_CUDA)
    if(kokkos_cuda)
      # kokkos_compilation reads the package's variables, which live in backends/kokkos' scope.
      find_package(Kokkos CONFIG REQUIRED COMPONENTS separable_compilation)
      kokkos_compilation(TARGET ${name}_kokkos)
    endif()
    list(APPEND made ${name}_kokkos)
  endif()
  if("cuda" IN_LIST backends)
    set(cu ${CMAKE_CURRENT_BINARY_DIR}/${name}_cuda.cu)
    file(CONFIGURE OUTPUT ${cu} CONTENT "// Generated: ${src} compiled by nvcc.\n#include \"${src}\"\n")
    add_executable(${name}_cuda ${cu})
    target_include_directories(${name}_cuda PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${name}_cuda PRIVATE tilekit ${ARG_LIBS})
    # The shared CUDA runtime: the one the cuda plugin loads, so that the program's kernels and
    # the backend's stream and memory belong to one runtime.
    set_target_properties(${name}_cuda PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON CUDA_RUNTIME_LIBRARY Shared)
    target_compile_options(${name}_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
    list(APPEND made ${name}_cuda)
  endif()
  set(${name}_TARGETS ${made} PARENT_SCOPE)
endfunction()
