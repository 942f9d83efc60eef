// Atomics and block collectives of tile kernels (docs/tile-kernels.md, "Atomics and collectives"),
// the same on every executor: the GPU's atomics, warp shuffles and shared memory on cuda and hip
// (as CUB's block primitives), Kokkos' atomics, a loop over the lanes on CPUs. Included by tile.hpp.
//
//   Atomics, inside phases: several lanes may update one element in one phase.
//     tile::atomic_add(t, s, r, c, v)   element (r, c) of scratch array s; returns the old value
//     tile::atomic_add(t, p, v)         *p in the backend's memory (any tile may update it)
//     atomic_min / atomic_max           the same, integers only
//   add takes int, unsigned, long long, unsigned long long, float and double; min and max the
//   integer types. On CPUs an update of scratch is a plain read-modify-write (one thread runs the
//   tile), of memory a real atomic when several threads run tiles (openmp).
//
//   Collectives, between phases (tile-uniform: every lane takes part, as at a barrier, and a
//   collective is a barrier for scratch): over one value per lane, held in lane state.
//     T r = tile::reduce(t, x [, op])              op over every lane's x[l], in every lane
//     tile::reduce(t, x, op, [&](T r) {...})       ... handed to lane 0 alone (one phase of lane 0)
//     T total = tile::inclusive_scan(t, x, y [, op])   y[l] = x[0] op ... op x[l]
//     T total = tile::exclusive_scan(t, x, y [, op])   y[l] = x[0] op ... op x[l - 1]; y[0] = identity
//   op: tile::Sum{} (the default), tile::Max{}, tile::Min{}; x and y may be the same lane state.
//   Values of 4 or 8 bytes (int, unsigned, float, double, ...).
//
//   tile::histogram(t, bins, items, key, global): PMPP's privatized histogram of one tile.
#pragma once

#include "tilekit/tile/core.hpp"

namespace tilekit::tile {
inline namespace TILEKIT_TILE_ABI {

template <class Tile, class View>
TILEKIT_TILE_FN typename View::value_type atomic_add(Tile& t, const View& s, int r, int c,
                                                     typename View::value_type v) {
  return t.template scratch_atomic<AtomicOp::add>(s, r, c, v);
}
template <class Tile, class View>
TILEKIT_TILE_FN typename View::value_type atomic_min(Tile& t, const View& s, int r, int c,
                                                     typename View::value_type v) {
  return t.template scratch_atomic<AtomicOp::min>(s, r, c, v);
}
template <class Tile, class View>
TILEKIT_TILE_FN typename View::value_type atomic_max(Tile& t, const View& s, int r, int c,
                                                     typename View::value_type v) {
  return t.template scratch_atomic<AtomicOp::max>(s, r, c, v);
}
template <class Tile, class T>
TILEKIT_TILE_FN T atomic_add(Tile& t, T* p, typename detail::TypeIdentity<T>::type v) {
  return t.template global_atomic<AtomicOp::add>(p, v);
}
template <class Tile, class T>
TILEKIT_TILE_FN T atomic_min(Tile& t, T* p, typename detail::TypeIdentity<T>::type v) {
  return t.template global_atomic<AtomicOp::min>(p, v);
}
template <class Tile, class T>
TILEKIT_TILE_FN T atomic_max(Tile& t, T* p, typename detail::TypeIdentity<T>::type v) {
  return t.template global_atomic<AtomicOp::max>(p, v);
}

template <class Tile, class State, class Op = Sum>
TILEKIT_TILE_FN typename State::value_type reduce(Tile& t, State& x, Op op = {}) {
  return t.reduce(x, op);
}
template <class Tile, class State, class Op, class F>
TILEKIT_TILE_FN void reduce(Tile& t, State& x, Op op, const F& to_lane0) {
  t.reduce_to_lane0(x, op, to_lane0);
}
template <class Tile, class In, class Out, class Op = Sum>
TILEKIT_TILE_FN typename In::value_type inclusive_scan(Tile& t, In& x, Out& y, Op op = {}) {
  return t.template scan<true>(x, y, op);
}
template <class Tile, class In, class Out, class Op = Sum>
TILEKIT_TILE_FN typename In::value_type exclusive_scan(Tile& t, In& x, Out& y, Op op = {}) {
  return t.template scan<false>(x, y, op);
}

// PMPP's privatized histogram (ch. 9) of `items` items of one tile: bins (a 1 x nbins scratch
// array of counts) zeroed, then every item counted into its bin key(i) with an atomic update of
// scratch (a key outside [0, nbins) skips the item), then each bin that counted something added
// to global[bin] (nbins counters in the backend's memory) with one atomic update. Tile-uniform,
// like a collective: call it between phases; it ends with a barrier, so bins may be reused.
template <class Tile, class View, class Key, class Count>
TILEKIT_TILE_FN void histogram(Tile& t, const View& bins, int items, const Key& key, Count* global) {
  using C = typename View::value_type;
  const int nbins = bins.cols;
  t.for_each(nbins, [&](int b) { bins(0, b) = C(0); });
  t.barrier();
  t.for_each(items, [&](int i) {
    const int b = key(i);
    if (b >= 0 && b < nbins) t.template scratch_atomic<AtomicOp::add>(bins, 0, b, C(1));
  });
  t.barrier();
  t.for_each(nbins, [&](int b) {
    const C c = bins(0, b);
    if (c != C(0)) t.template global_atomic<AtomicOp::add>(global + b, Count(c));
  });
  t.barrier();
}

}  // namespace TILEKIT_TILE_ABI
}  // namespace tilekit::tile
