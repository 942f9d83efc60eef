# cmake -P bundle.cmake: joins the hip backend's objects into one relocatable object in which
# the shared GPU code's namespace, tilekit::gpu, is renamed tilekit::hip_gpu at the symbol level.
#
# Why: backends/gpu is compiled twice when both GPU backends are built (nvcc for cuda, hipcc
# for hip), and both copies define the same C++ names (tilekit::gpu::GpuBackend::allocate,
# the launchers, inline helpers, template instantiations), each calling its own vendor's
# runtime. Linked side by side, the linker keeps one definition of each name, so the hip
# backend would run CUDA code or the reverse. Renaming the HIP copy's symbols keeps the two
# apart without a line of change in the shared sources:
#   - rename, not localize: inline functions and template instantiations live in COMDAT groups
#     keyed by their symbol name, and the linker drops every group whose key it has already
#     seen, local binding or not. objcopy --redefine-sym renames the group keys too.
#   - the Itanium mangling spells the namespace as the length-prefixed "7tilekit3gpu" wherever
#     it appears (also inside template arguments); "7tilekit7hip_gpu" is the same mangling for
#     tilekit::hip_gpu, so debuggers and c++filt still read the names.
#   - kernels are registered with the HIP runtime by their device-side name (a string in the
#     object, untouched) and their host stub's address, so renaming the stub is harmless.
#
# Inputs (-D): OUT, OBJECTS (;-list), LINKER (ld), OBJCOPY, NM, KEEP (the mangled factory name).
foreach(v OUT OBJECTS LINKER OBJCOPY NM KEEP)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "bundle.cmake: -D${v}=... is required")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGV}")
    message(FATAL_ERROR "bundle.cmake: `${cmd}` failed:\n${out}")
  endif()
endfunction()

function(symbols file var)
  execute_process(COMMAND ${NM} -P ${file} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "bundle.cmake: ${NM} ${file} failed: ${err}")
  endif()
  string(REPLACE "\n" ";" out "${out}")
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

set(partial "${OUT}.partial.o")
set(renames "${OUT}.renames")
run(${LINKER} -r -o ${partial} ${OBJECTS})

symbols(${partial} lines)
set(map "")
foreach(line IN LISTS lines)
  # nm -P: "<name> <type> [<value> <size>]"
  if(line MATCHES "^([^ ]*7tilekit3gpu[^ ]*) ")
    set(old "${CMAKE_MATCH_1}")
    string(REPLACE "7tilekit3gpu" "7tilekit7hip_gpu" new "${old}")
    string(APPEND map "${old} ${new}\n")
  endif()
endforeach()
file(WRITE ${renames} "${map}")
run(${OBJCOPY} --redefine-syms=${renames} ${partial} ${OUT})
file(REMOVE ${partial} ${renames})

# Check the result: nothing of tilekit::gpu left to bind to the other vendor's copy, and the
# factory defined.
symbols(${OUT} lines)
set(bad "")
set(have_keep FALSE)
foreach(line IN LISTS lines)
  if(line MATCHES "7tilekit3gpu")
    list(APPEND bad "not renamed: ${line}")
  endif()
  if(line MATCHES "^${KEEP} T ")
    set(have_keep TRUE)
  endif()
endforeach()
if(NOT have_keep)
  list(APPEND bad "the factory ${KEEP} is not defined")
endif()
if(bad)
  file(REMOVE ${OUT})
  string(REPLACE ";" "\n  " bad "${bad}")
  message(FATAL_ERROR "bundle.cmake: ${OUT} is not self-contained:\n  ${bad}")
endif()
