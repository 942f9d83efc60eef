# How the hip backend is compiled: hipcc driven by add_custom_command, linked by the C++ compiler.
#
# Why not CMake's HIP language (enable_language(HIP), CMAKE_HIP_ARCHITECTURES)? CMake 3.25 looks
# for the HIP runtime package at <rocm root>/lib/cmake/hip-lang/hip-lang-config.cmake only, and
# refuses hipcc as CMAKE_HIP_COMPILER. Debian's ROCm 5.2 (hipcc 5.2.3, clang 15) has its root at
# /usr and installs the package multiarch, at /usr/lib/x86_64-linux-gnu/cmake/hip-lang, so
# enable_language(HIP) stops with "does not contain the HIP runtime CMake package" (and with
# no plain `clang++` on PATH it does not even find a compiler). hipcc itself works: it is the
# documented driver on every ROCm installation (Debian's, /opt/rocm, Spack), so the objects are
# built by hipcc and the program is linked by the ordinary C++ compiler against libamdhip64.
# Every HIP object is a normal x86-64 object with the AMD code objects for each target embedded
# (clang's offload bundle) and registered with the runtime by a static constructor.
#
# Provides:
#   tilekit_find_hip(<found_var> <reason_var>)  finds hipcc, the headers and libamdhip64, and
#       proves with a trivial kernel that hipcc compiles for TILEKIT_HIP_ARCHITECTURES and that
#       the result links with the C++ compiler; sets TILEKIT_HIPCC, TILEKIT_HIP_INCLUDE_DIR,
#       TILEKIT_AMDHIP64_LIBRARY in the cache.
#   tilekit_hip_objects(<out_var> SOURCES <files...> INCLUDES <dirs...> DEFINES <defs...>)
#       one add_custom_command per source (with a depfile, so header edits rebuild), returning
#       the object paths to add to a target as sources.

set(TILEKIT_HIP_ARCHITECTURES "gfx90a;gfx940" CACHE STRING
    "AMD GPU targets the hip backend is compiled for (hipcc --offload-arch); gfx90a = MI200, gfx940/941/942 = MI300")
set(TILEKIT_HIP_FLAGS "" CACHE STRING "Extra flags for hipcc (the backend's device and host code)")

function(tilekit_find_hip found_var reason_var)
  set(${found_var} FALSE PARENT_SCOPE)
  # ROCM_PATH/HIP_PATH first (an /opt/rocm installation on an AMD machine), then the system.
  set(hints)
  foreach(v ROCM_PATH HIP_PATH)
    if(DEFINED ENV{${v}})
      list(APPEND hints $ENV{${v}})
    endif()
  endforeach()
  list(APPEND hints /opt/rocm)
  find_program(TILEKIT_HIPCC hipcc HINTS ${hints} PATH_SUFFIXES bin DOC "hipcc, the HIP compiler driver")
  find_path(TILEKIT_HIP_INCLUDE_DIR hip/hip_runtime.h HINTS ${hints} PATH_SUFFIXES include
            DOC "directory holding hip/hip_runtime.h")
  find_library(TILEKIT_AMDHIP64_LIBRARY amdhip64 HINTS ${hints} PATH_SUFFIXES lib lib64
               DOC "the HIP runtime for AMD GPUs (libamdhip64)")
  if(NOT TILEKIT_HIPCC)
    set(${reason_var} "hipcc not found (set ROCM_PATH or TILEKIT_HIPCC)" PARENT_SCOPE)
    return()
  endif()
  if(NOT TILEKIT_HIP_INCLUDE_DIR)
    set(${reason_var} "HIP headers (hip/hip_runtime.h) not found" PARENT_SCOPE)
    return()
  endif()
  if(NOT TILEKIT_AMDHIP64_LIBRARY)
    set(${reason_var} "the HIP runtime library libamdhip64 not found" PARENT_SCOPE)
    return()
  endif()
  if(NOT TILEKIT_HIP_ARCHITECTURES)
    set(${reason_var} "TILEKIT_HIP_ARCHITECTURES is empty" PARENT_SCOPE)
    return()
  endif()

  # The probe: a kernel compiled for every target, linked into a program by the C++ compiler.
  # A success is remembered in the cache per (hipcc, targets, C++ compiler, runtime, flags); a
  # failure is probed again at the next configure, so installing what was missing suffices.
  set(key "${TILEKIT_HIPCC}|${TILEKIT_HIP_ARCHITECTURES}|${CMAKE_CXX_COMPILER}|${TILEKIT_AMDHIP64_LIBRARY}|${TILEKIT_HIP_FLAGS}")
  if(TILEKIT_HIP_PROBE_OK AND "${TILEKIT_HIP_PROBE_KEY}" STREQUAL key)
    set(${found_var} TRUE PARENT_SCOPE)
    return()
  endif()

  set(dir ${CMAKE_BINARY_DIR}/CMakeFiles/tilekit_hip_probe)
  file(MAKE_DIRECTORY ${dir})
  file(WRITE ${dir}/probe.hip [=[
#include <hip/hip_runtime.h>
// The wavefront size is a compile-time constant per target; a target compiled with the wrong
// assumption would fail here rather than at run time.
__global__ void __launch_bounds__(256) tilekit_probe_axpy(float a, const float* x, float* y, int n) {
  __shared__ float s[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] += a * s[threadIdx.x] + float(warpSize - warpSize);
}
int tilekit_probe_launch(float* x, float* y, int n) {
  hipLaunchKernelGGL(tilekit_probe_axpy, dim3((n + 255) / 256), dim3(256), 0, 0, 2.0f, x, y, n);
  return int(hipGetLastError());
}
]=])
  file(WRITE ${dir}/main.cpp [=[
int tilekit_probe_launch(float*, float*, int);
int main(int argc, char**) { return argc > 99 ? tilekit_probe_launch(nullptr, nullptr, 0) : 0; }
]=])
  set(arch_flags)
  foreach(a IN LISTS TILEKIT_HIP_ARCHITECTURES)
    list(APPEND arch_flags --offload-arch=${a})
  endforeach()
  separate_arguments(extra UNIX_COMMAND "${TILEKIT_HIP_FLAGS}")
  execute_process(
    COMMAND ${TILEKIT_HIPCC} ${arch_flags} -std=c++17 -O2 -fPIC ${extra} -c ${dir}/probe.hip -o ${dir}/probe.o
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  set(error "")
  if(NOT rc EQUAL 0)
    string(STRIP "${out}" out)
    if(out STREQUAL "")
      set(out "${rc}")  # the command did not run at all: rc holds the reason
    endif()
    set(error "${TILEKIT_HIPCC} cannot compile a trivial kernel for ${TILEKIT_HIP_ARCHITECTURES}: ${out}")
  else()
    execute_process(
      COMMAND ${CMAKE_CXX_COMPILER} ${dir}/main.cpp ${dir}/probe.o ${TILEKIT_AMDHIP64_LIBRARY} -o ${dir}/probe
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT rc EQUAL 0)
      string(STRIP "${out}" out)
      if(out STREQUAL "")
        set(out "${rc}")
      endif()
      set(error "a hipcc object does not link with ${CMAKE_CXX_COMPILER} and ${TILEKIT_AMDHIP64_LIBRARY}: ${out}")
    endif()
  endif()
  set(TILEKIT_HIP_PROBE_KEY "${key}" CACHE INTERNAL "")
  if(error)
    set(TILEKIT_HIP_PROBE_OK FALSE CACHE INTERNAL "")
    set(${reason_var} "${error}" PARENT_SCOPE)
    return()
  endif()
  set(TILEKIT_HIP_PROBE_OK TRUE CACHE INTERNAL "")
  message(STATUS "hipcc ${TILEKIT_HIPCC} compiles for ${TILEKIT_HIP_ARCHITECTURES}; runtime ${TILEKIT_AMDHIP64_LIBRARY}")
  set(${found_var} TRUE PARENT_SCOPE)
endfunction()

function(tilekit_hip_objects out_var)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;INCLUDES;DEFINES")
  set(arch_flags)
  foreach(a IN LISTS TILEKIT_HIP_ARCHITECTURES)
    list(APPEND arch_flags --offload-arch=${a})
  endforeach()
  set(flags -std=c++17 -fPIC -Wall -Wextra)
  # The build type's optimization flags, as the C++ compiler gets them (hipcc is clang underneath).
  if(CMAKE_BUILD_TYPE)
    string(TOUPPER "${CMAKE_BUILD_TYPE}" bt)
    separate_arguments(bt_flags UNIX_COMMAND "${CMAKE_CXX_FLAGS_${bt}}")
    list(APPEND flags ${bt_flags})
  endif()
  separate_arguments(extra UNIX_COMMAND "${TILEKIT_HIP_FLAGS}")
  list(APPEND flags ${extra})
  # Entries may be generator expressions naming lists (a target's include directories):
  # each element becomes its own -I/-D argument (COMMAND_EXPAND_LISTS below), none if empty.
  # The C++ compiler's implicit include directories (/usr/include, where Debian's fmt lives)
  # are left out, as CMake does on its own compile lines: an explicit -I/usr/include reorders
  # the system headers and breaks libstdc++'s #include_next.
  set(implicit "")
  foreach(dir IN LISTS CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
    string(REGEX REPLACE "([][+.*()^$?|\\])" "\\\\\\1" esc "${dir}")
    list(APPEND implicit "${esc}")
  endforeach()
  list(JOIN implicit "|" implicit)
  foreach(kind I D)
    set(entries ${arg_INCLUDES})
    if(kind STREQUAL "D")
      set(entries ${arg_DEFINES})
    endif()
    foreach(d IN LISTS entries)
      if(d MATCHES "\\$<")
        if(kind STREQUAL "I" AND implicit)
          set(d "$<FILTER:${d},EXCLUDE,^(${implicit})$>")
        endif()
        list(APPEND flags "$<$<BOOL:${d}>:-${kind}$<JOIN:${d},$<SEMICOLON>-${kind}>>")
      else()
        list(APPEND flags "-${kind}${d}")
      endif()
    endforeach()
  endforeach()

  set(objects)
  foreach(src IN LISTS arg_SOURCES)
    get_filename_component(abs ${src} ABSOLUTE)
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${abs})
    string(REGEX REPLACE "[/.]" "_" stem "${rel}")
    set(obj ${CMAKE_CURRENT_BINARY_DIR}/hip_objects/${stem}.o)
    file(RELATIVE_PATH obj_rel ${CMAKE_BINARY_DIR} ${obj})
    add_custom_command(
      OUTPUT ${obj}
      # -x hip: the shared kernels live in .cu/.cuh files named for the first vendor.
      COMMAND ${TILEKIT_HIPCC} ${arch_flags} ${flags} -MD -MF ${obj}.d -x hip -c ${abs} -o ${obj}
      DEPENDS ${abs}
      DEPFILE ${obj}.d
      COMMENT "Building HIP object ${obj_rel} for ${TILEKIT_HIP_ARCHITECTURES}"
      COMMAND_EXPAND_LISTS
      VERBATIM)
    set_source_files_properties(${obj} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    list(APPEND objects ${obj})
  endforeach()
  set(${out_var} ${objects} PARENT_SCOPE)
endfunction()
