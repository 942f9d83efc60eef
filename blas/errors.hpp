// BLAS error reporting as the reference defines it: xerbla_ (Fortran) and cblas_xerbla (CBLAS),
// each with a weak default here that a program's own definition replaces.
#pragma once

#include <cstddef>

extern "C" {
extern int RowMajorStrg;
extern int CBLAS_CallFromC;

// The reference's XERBLA: prints " ** On entry to <name> parameter number <info> had an illegal
// value" on standard output, then stops the program as Fortran's STOP does (exit status 0).
void xerbla_(const char* srname, const int* info, std::size_t srname_len);

// The reference CBLAS's: in a row-major call, gemm, symm/hemm, trmm/trsm, gemv, gbmv, ger and
// her2/hpr2 positions of swapped arguments are swapped back; prints "Parameter <info> to routine
// <rout> was incorrect" and the formatted message on standard error, then exit(-1).
void cblas_xerbla(int info, const char* rout, const char* form, ...);
}

namespace tilekit::blas {
// xerbla_(name, &info) through the dynamic linker: the program's xerbla_ when it has one.
void call_xerbla(const char* name6, int info);
}  // namespace tilekit::blas
