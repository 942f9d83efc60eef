#!/usr/bin/env bash
# scripts/scalapack.sh with a BLAS that spoils its products (wrong_blas.cpp) preloaded: it must
# fail, and for the right reasons: the example's verification and both PBLAS testers' P?GEMM
# checks must each have caught it.
#   expect_failure.sh SCALAPACK_SH BUILD_DIR WRONG_BLAS
set -uo pipefail
out=$(bash "$1" "$2" "$3" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 1 ] || { echo "expect_failure: scalapack.sh exited $rc, not 1 (a failed check)"; exit 1; }
missing=0
for want in 'FAIL: example --n 301 .*"verified": false' 'FAIL: example --n 256 .*"verified": false' \
            'FAIL: dpb3tst: .*failed [1-9]' 'FAIL: spb3tst: .*failed [1-9]'; do
  grep -qE -e "$want" <<<"$out" || { echo "expect_failure: no line matching '$want'"; missing=1; }
done
[ $missing -eq 0 ] && echo "expect_failure: the spoiled BLAS was caught by the example and both testers"
exit $missing
