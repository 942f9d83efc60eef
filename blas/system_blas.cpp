// Forwarding to the system BLAS. The entry points of every routine tilekit does not implement are
// generated from forward.list (forward_x86_64.S): each jumps through a table entry, filled on its
// first call by tilekit_blas_forward_resolve below, so that a program linked against
// libtilekit_blas alone (no -lblas) finds every BLAS routine in it, while its arguments, whatever
// they are, reach the system's routine untouched.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "system_blas.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "settings.hpp"

#ifndef TILEKIT_BLAS_SYSTEM_CANDIDATES
#define TILEKIT_BLAS_SYSTEM_CANDIDATES "libopenblas.so.0", "libblas.so.3"
#endif

namespace tilekit::blas {
namespace {

// The base address of libtilekit_blas, to recognise its own symbols (dlopen("libblas.so.3")
// returns this library when it is installed as the libblas.so.3 alternative).
void* self_base() {
  static void* base = [] {
    Dl_info di{};
    return dladdr(reinterpret_cast<void*>(&self_base), &di) ? di.dli_fbase : nullptr;
  }();
  return base;
}

bool is_self(void* p) {
  Dl_info di{};
  return p && dladdr(p, &di) && di.dli_fbase == self_base();
}

std::string searched;  // for the message when a routine is found nowhere

void* system_library() {
  static std::once_flag once;
  static void* handle = nullptr;
  std::call_once(once, [] {
    const Settings& s = settings();
    if (!s.system.empty()) {
      handle = dlopen(s.system.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        const char* e = dlerror();
        std::fprintf(stderr, "tilekit-blas: TILEKIT_BLAS_SYSTEM='%s' cannot be loaded: %s\n", s.system.c_str(),
                     e ? e : "dlopen failed");
        std::exit(2);
      }
      searched = s.system;
      return;
    }
    for (const char* name : {TILEKIT_BLAS_SYSTEM_CANDIDATES}) {
      searched += (searched.empty() ? "" : ", ") + std::string(name);
      void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (!h) continue;
      if (is_self(dlsym(h, "sgemm_"))) {  // ourselves, under the alternative's name
        dlclose(h);
        continue;
      }
      handle = h;
      return;
    }
  });
  return handle;
}

}  // namespace

void* system_symbol(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (p && !is_self(p)) return p;
  if (void* h = system_library()) {
    p = dlsym(h, name);
    if (p && !is_self(p)) return p;
  }
  return nullptr;
}

void* system_symbol_or_die(const char* name) {
  if (void* p = system_symbol(name)) return p;
  std::fprintf(stderr,
               "tilekit-blas: %s is not implemented by tilekit and no BLAS library provides it (searched: the "
               "libraries loaded after libtilekit_blas, %s); set TILEKIT_BLAS_SYSTEM to a BLAS library\n",
               name, searched.empty() ? "nothing else" : searched.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace tilekit::blas

#if defined(TILEKIT_BLAS_FORWARD_STUBS)
// The names and the jump table of the generated entry points (forward_x86_64.S reads the table).
namespace {
const char* const kForwardNames[] = {
#include "forward_names.inc"
};
}  // namespace
extern "C" {
__attribute__((visibility("hidden"))) void* tilekit_blas_forward_table[sizeof kForwardNames / sizeof *kForwardNames];

// Called by an entry point whose table entry is still empty, with the entry's index; returns the
// routine to jump to. Two threads may both resolve an entry: they store the same address.
__attribute__((visibility("hidden"))) void* tilekit_blas_forward_resolve(unsigned index) {
  void* p = tilekit::blas::system_symbol_or_die(kForwardNames[index]);
  __atomic_store_n(&tilekit_blas_forward_table[index], p, __ATOMIC_RELEASE);
  return p;
}
}
#endif
