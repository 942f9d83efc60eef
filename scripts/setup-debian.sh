#!/usr/bin/env bash
# Installs, from Debian 12's packages, everything tilekit builds against. Run as root; a no-op
# when everything is already there. The CUDA toolkit is not a Debian package: when
# /usr/local/cuda exists the cuda backend is built too.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config ccache
      libfmt-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev
      libopenblas-dev libhwy-dev libtrilinos-kokkos-dev hipcc
      librsvg2-bin   # rsvg-convert: the tests render the roofline plot to check it
      python3        # bench/run.py and bench/report.py (ctest bench.*)
      libblas-test python3-numpy)  # libtilekit_blas' tests: netlib's testers, numpy
missing=()
# ScaLAPACK over OpenMPI, its PBLAS testers (docs/scalapack.md; MPICH comes along with the testers)
pkgs+=(openmpi-bin libopenmpi-dev libscalapack-openmpi-dev scalapack-mpi-test)
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
