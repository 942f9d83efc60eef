// The entry points of tilekit-kokkos.so, for a kokkos backend built as a run-time plugin (a
// device build of Kokkos; TILEKIT_KOKKOS_PLUGIN in CMakeLists.txt).
#include <memory>

#include "plugin.hpp"

namespace tilekit::detail {
std::unique_ptr<Backend> make_kokkos_backend();
}

TILEKIT_PLUGIN_ENTRY(tilekit::detail::make_kokkos_backend)
