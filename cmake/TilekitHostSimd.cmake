# The host fast path (backends/common/host/packed.hpp, simd.hpp): the SIMD kernels compiled per
# instruction set by Highway (runtime dispatch) and the blocking around them, shared by the
# backends that compute on CPU threads (openmp; kokkos on a host execution space).
#
# tilekit_host_simd_found(<result_var>): finds Highway (its CMake package, or its header and
# library found directly, for prefixes that carry the files without the package's config);
# <result_var> is TRUE when it is there.
# tilekit_host_simd(<target>) makes the kernels available to <target> (an OBJECT library whose
# objects end up in libtilekit; Highway found): compiles them into the first target that asks
# (the objects then serve every backend of the library) and links Highway to <target>.
include_guard(GLOBAL)

set(TILEKIT_HOST_SIMD_SOURCES
  ${PROJECT_SOURCE_DIR}/backends/common/host/gemm_simd.cpp
  ${PROJECT_SOURCE_DIR}/backends/common/host/transpose_simd.cpp
  ${PROJECT_SOURCE_DIR}/backends/common/host/conv2d_simd.cpp
  ${PROJECT_SOURCE_DIR}/backends/common/host/ceilings_simd.cpp
  ${PROJECT_SOURCE_DIR}/backends/common/host/packed.cpp)

function(tilekit_host_simd_found result_var)
  if(NOT TARGET tilekit_host_hwy)
    find_package(hwy CONFIG QUIET)
    if(hwy_FOUND)
      add_library(tilekit_host_hwy INTERFACE IMPORTED GLOBAL)
      set_target_properties(tilekit_host_hwy PROPERTIES INTERFACE_LINK_LIBRARIES hwy::hwy)
      tilekit_backend_export(LINK hwy::hwy FIND "hwy CONFIG" PKGCONFIG -lhwy DEB libhwy-dev)
    else()
      find_path(TILEKIT_HWY_INCLUDE_DIR hwy/highway.h)
      find_library(TILEKIT_HWY_LIBRARY hwy)
      if(NOT TILEKIT_HWY_INCLUDE_DIR OR NOT TILEKIT_HWY_LIBRARY)
        set(${result_var} FALSE PARENT_SCOPE)
        return()
      endif()
      add_library(tilekit_host_hwy INTERFACE IMPORTED GLOBAL)
      set_target_properties(tilekit_host_hwy PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${TILEKIT_HWY_INCLUDE_DIR}"
                                                        INTERFACE_LINK_LIBRARIES "${TILEKIT_HWY_LIBRARY}")
      tilekit_backend_export(LINK ${TILEKIT_HWY_LIBRARY} PKGCONFIG ${TILEKIT_HWY_LIBRARY})
    endif()
  endif()
  set(${result_var} TRUE PARENT_SCOPE)
endfunction()

function(tilekit_host_simd target)
  get_property(owner GLOBAL PROPERTY TILEKIT_HOST_SIMD_OWNER)
  if(NOT owner)
    target_sources(${target} PRIVATE ${TILEKIT_HOST_SIMD_SOURCES})
    set_property(GLOBAL PROPERTY TILEKIT_HOST_SIMD_OWNER ${target})
  endif()
  target_link_libraries(${target} PRIVATE tilekit_host_hwy)
  # What the objects need at link time travels to tilekit's consumers.
  target_link_libraries(${target} INTERFACE $<LINK_ONLY:tilekit_host_hwy>)
endfunction()
