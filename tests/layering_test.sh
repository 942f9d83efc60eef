#!/usr/bin/env bash
# Checks that include dependencies between the source folders point downward:
#   backends/<name>/   (serial, openmp, kokkos, cuda, hip, and gpu, the source cuda and hip both
#                      compile) includes its own folder, backends/common/, include/ and src/, never
#                      another backend's folder; cuda and hip may also include backends/gpu/.
#   backends/common/   includes only itself, include/ and src/: it is below every backend.
#   src/               includes no backend folder (backends/common/ only).
# and that no source file there or in tests/ includes through a parent path ("../"): the build's
# include directories (backends/, src/, include/) name every file from the top instead.
#
# A quoted include is resolved as the compiler does: next to the including file first, then in
# backends/, src/ and include/; what none of them holds is a generated or system header.
#
# Usage: tests/layering_test.sh [source root]   (ctest runs it as `layering`)
#        tests/layering_test.sh --self-test     (checks that the checker catches each kind of violation)
set -euo pipefail

check() {  # check <root>: prints each violation, returns 1 if there was any
  local root=$1 bad=0 f dir from inc target to
  cd "$root"
  while IFS= read -r -d '' f; do
    dir=$(dirname "$f")
    case $f in
      backends/*) from=${f#backends/}; from=${from%%/*} ;;
      src/*) from=src ;;
      *) from=tests ;;  # the tests may include any folder
    esac
    while IFS= read -r inc; do
      if [[ $inc == ../* || $inc == */../* ]]; then
        echo "layering: $f: #include \"$inc\": a parent path (name it from backends/, src/ or include/)"
        bad=1
        continue
      fi
      if [[ -e $dir/$inc ]]; then
        target=$dir/$inc
      elif [[ -e backends/$inc ]]; then
        target=backends/$inc
      else
        continue  # src/, include/, generated or system: no backend folder
      fi
      [[ $target == backends/* && $from != tests ]] || continue
      to=${target#backends/}
      to=${to%%/*}
      [[ $to == "$from" || $to == common ]] && [[ $from != common || $to == common ]] && continue
      [[ $to == gpu && ($from == cuda || $from == hip) ]] && continue
      if [[ $from == common ]]; then
        echo "layering: $f: #include \"$inc\": backends/common/ is below the backends and includes none of them"
      elif [[ $from == src ]]; then
        echo "layering: $f: #include \"$inc\": the core includes no backend folder"
      else
        echo "layering: $f: #include \"$inc\": backend '$from' includes backend '$to''s folder (shared code belongs in backends/common/)"
      fi
      bad=1
    done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/p' "$f")
  done < <(find backends src tests -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' \
             -o -name '*.cuh' -o -name '*.hip' -o -name '*.inc' \) -print0 | sort -z)
  return $bad
}

self_test() {
  local tmp status=0
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  # expect <case> <pass|fail> <file>=<its include>...: a small tree with these includes added
  expect() {
    local name=$1 want=$2 t=$tmp/$1 got=pass spec file inc
    shift 2
    mkdir -p "$t"/backends/{common/gpu,gpu,cuda,hip,kokkos,openmp} "$t"/src "$t"/tests "$t"/include/tilekit
    touch "$t"/backends/common/gpu/block.cuh "$t"/backends/gpu/gpu_backend.hpp "$t"/backends/cuda/cuda.hpp \
          "$t"/backends/openmp/openmp.hpp "$t"/src/plugin.hpp "$t"/include/tilekit/ops.hpp
    for spec in "$@"; do
      file=${spec%%=*}
      inc=${spec#*=}
      printf '#include <vector>\n#include "%s"  // a comment\n' "$inc" >>"$t/$file"
    done
    (check "$t") >"$t.log" || got=fail
    if [[ $got != "$want" ]]; then
      echo "layering self-test '$name': expected $want, got $got"
      cat "$t.log"
      status=1
    fi
  }
  expect allowed pass backends/kokkos/gemm.cpp=common/gpu/block.cuh backends/cuda/backend.cu=gpu/gpu_backend.hpp \
    backends/hip/backend.hip=gpu/gpu_backend.hpp backends/gpu/gemm.cu=common/gpu/block.cuh \
    backends/common/gpu/gemm.cuh=block.cuh backends/openmp/gemm.cpp=openmp.hpp backends/kokkos/plugin.cpp=plugin.hpp \
    src/ops.cpp=tilekit/ops.hpp backends/cuda/x.cu=tilekit/config.hpp tests/t.cpp=gpu/gpu_backend.hpp
  expect sideways_by_dir fail backends/kokkos/gemm.cpp=gpu/gpu_backend.hpp
  expect sideways_by_parent fail backends/kokkos/gemm.cpp=../gpu/gpu_backend.hpp
  expect parent_path_within fail backends/kokkos/gemm.cpp=../common/gpu/block.cuh
  expect cpu_to_cpu fail backends/kokkos/backend.cpp=openmp/openmp.hpp
  expect gpu_to_cuda fail backends/gpu/gpu_backend.cu=cuda/cuda.hpp
  expect common_upward fail backends/common/gpu/block2.cuh=gpu/gpu_backend.hpp
  expect core_to_backend fail src/backend.cpp=cuda/cuda.hpp
  expect test_parent_path fail tests/t.cpp=../src/plugin.hpp
  return $status
}

if [[ ${1:-} == --self-test ]]; then
  self_test && echo "layering self-test: every case as expected"
else
  check "${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}" && echo "layering: every include points downward"
fi
