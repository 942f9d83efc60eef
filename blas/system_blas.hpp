// The system BLAS: where the routines tilekit does not implement come from, and where a call
// goes that tilekit cannot run.
#pragma once

namespace tilekit::blas {

// The address of BLAS routine `name` in the system BLAS: the next library in the search order
// after libtilekit_blas that defines it (dlsym(RTLD_NEXT): the program's own libblas.so.3 when
// libtilekit_blas is preloaded), else the library of the blas.system setting, else the first of
// the build's candidates (OpenBLAS, the reference BLAS) that loads. Never libtilekit_blas itself.
// nullptr when none has it.
void* system_symbol(const char* name);

// system_symbol, or the end of the process with a message naming the routine and what was
// searched (a routine the program calls must exist).
void* system_symbol_or_die(const char* name);

}  // namespace tilekit::blas
