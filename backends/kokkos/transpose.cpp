// out = in^T in Kokkos.
//   naive:     one MDRange index per input element: reads along rows (coalesced), writes down
//              columns (a new cache line or memory segment for every element).
//   tiled:     one team per input tile, staged in team scratch: coalesced reads of tile rows,
//              a barrier, then coalesced writes of tile columns read back from scratch (in
//              shared memory that read-back walks a column: every access of a warp lands in the
//              same bank when the tile is 32 wide). Written once for every backend on the tile
//              layer: backends/portable/transpose_tiled.hpp.
//   optimized: the cuda backend's kernel (backends/gpu/transpose.cuh) on a Kokkos team: 256 team
//              threads (one CUDA thread each), a compiled TR x TC tile (64 x 64 automatic) in
//              scratch rows padded by one element (a column spreads over all banks), 16-byte
//              global loads and stores, all of a thread's loads issued before its first store.
//              The lanes kernel (team threads x vector lanes, element accesses) serves tiles
//              that are not compiled, and in sweep builds any tile (kokkos.transpose.kernel=lanes).
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kokkos.hpp"
#include "common/portable/transpose_tiled.hpp"
#include "host_packed.hpp"
#include "tilekit/ops.hpp"

namespace tilekit::kokkos {
namespace transpose_kernels {

template <class T>
struct TransposeView {
  const T* in;
  T* out;
  int rows, cols, ld_in, ld_out;
  explicit TransposeView(const TransposeArgs<T>& a)
      : in(a.in), out(a.out), rows(int(a.rows)), cols(int(a.cols)), ld_in(int(a.ld_in)), ld_out(int(a.ld_out)) {}
};

// `league`: the plan's team launch (sweep builds; 0: MDRange).
template <class T>
void transpose_naive(const TransposeArgs<T>& args, index_t league) {
  const TransposeView<T> a(args);
  naive_for<kSweeps>(
      "tilekit::kokkos::transpose_naive", a.cols, a.rows,
      KOKKOS_LAMBDA(const int j, const int i) { a.out[j * a.ld_out + i] = a.in[i * a.ld_in + j]; }, league);
}

// pad = 0: tiled; pad = 1: optimized's bank-conflict-free layout. Both share the same phases;
// the optimized launch adds vector lanes, which only change how the ranges are split.
template <class T>
struct TransposeTeam {
  static constexpr int kBatch = 8;  // loads in flight per thread (optimized)
  TransposeView<T> a;
  int tr, tc, pad, tiles_c;
  bool vector;  // rows over team threads, columns over vector lanes (optimized)

  static std::size_t scratch_bytes(int tr, int tc, int pad) {
    return kScratchAlign + align_up(sizeof(T) * std::size_t(tr) * std::size_t(tc + pad));
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const int i0 = team.league_rank() / tiles_c * tr, j0 = team.league_rank() % tiles_c * tc;
    const int ls = tc + pad;  // scratch row stride
    ScratchCarver scratch(team, kScratchAlign + align_up(sizeof(T) * std::size_t(tr) * std::size_t(ls)));
    T* s = scratch.take<T>(std::size_t(tr) * std::size_t(ls));
    const int h = a.rows - i0 < tr ? a.rows - i0 : tr, w = a.cols - j0 < tc ? a.cols - j0 : tc;  // this tile's extent

    if (vector) {
      // Vector lanes take columns (a warp reads one tile row, coalesced); each team thread takes
      // rows rank, rank + team_size, ... and issues kBatch loads before its first store, so that
      // several loads are in flight (the compiler cannot reorder them past stores to scratch,
      // which it cannot tell apart from the input).
      const int rank = team.team_rank(), size = team.team_size();
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, w), [&](const int c) {
        for (int r0 = rank; r0 < h; r0 += kBatch * size) {
          T v[kBatch];
          TILEKIT_UNROLL
          for (int b = 0; b < kBatch; ++b) {
            const int r = r0 + b * size;
            v[b] = r < h ? a.in[(i0 + r) * a.ld_in + j0 + c] : T(0);
          }
          TILEKIT_UNROLL
          for (int b = 0; b < kBatch; ++b) {
            const int r = r0 + b * size;
            if (r < h) s[r * ls + c] = v[b];
          }
        }
      });
      team.team_barrier();
      // Lanes now take tile rows (= output columns, coalesced writes), threads take tile columns;
      // the padded stride puts the lanes' scratch reads down a column in distinct banks.
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, h), [&](const int r) {
        for (int c0 = rank; c0 < w; c0 += kBatch * size) {
          T v[kBatch];
          TILEKIT_UNROLL
          for (int b = 0; b < kBatch; ++b) {
            const int c = c0 + b * size;
            v[b] = c < w ? s[r * ls + c] : T(0);
          }
          TILEKIT_UNROLL
          for (int b = 0; b < kBatch; ++b) {
            const int c = c0 + b * size;
            if (c < w) a.out[(j0 + c) * a.ld_out + i0 + r] = v[b];
          }
        }
      });
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, h * w), [&](const int e) {
        const int r = e / w, c = e - r * w;
        s[r * ls + c] = a.in[(i0 + r) * a.ld_in + j0 + c];
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, h * w), [&](const int e) {
        const int c = e / h, r = e - c * h;
        a.out[(j0 + c) * a.ld_out + i0 + r] = s[r * ls + c];
      });
    }
  }
};

// The optimized kernel: the cuda backend's transpose_optimized_kernel with Kokkos' vocabulary.
// A team of NT = 256 threads (GPU spaces: one CUDA thread per team rank; host spaces: the one team
// thread walks the 256 ranks, TeamThreadRange), a TR x TC tile in level-0 scratch sized at run
// time, rows padded to TC + 1 elements. kVec: pointers 16-byte aligned and rows, cols, ld_in,
// ld_out whole vectors, so that every 16-byte vector is wholly inside or outside the matrix;
// otherwise the same kernel moves single elements. kBar: the barrier instruction itself in GPU
// teams (block_barrier, kokkos.hpp).
template <class T, int TR, int TC, bool kVec, bool kBar>
struct TransposeBlock {
  static constexpr int NT = 256, W = Pack<T>::W, LD = TC + 1;
  static constexpr int LOADS = TR * (TC / W) / NT, STORES = TC * (TR / W) / NT;
  static_assert(LOADS * NT == TR * (TC / W) && STORES * NT == TC * (TR / W), "tile must split evenly");
  // <NT, 0>: `.maxntid 256` alone, as cuda's __launch_bounds__(256). Kokkos' <NT, 1> adds
  // `.minnctapersm 1`, and ptxas then took 40 (float) / 64 (double) registers instead of 32:
  // 6 / 4 resident teams per SM instead of 8.
  using Policy = Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<NT, 0>>;
  TransposeView<T> a;
  int tiles_c;

  KOKKOS_INLINE_FUNCTION static constexpr std::size_t scratch_bytes() { return kScratchAlign + align_up(sizeof(T) * TR * LD); }

  // f(tid) for every thread index tid of the cuda kernel's block. GPU teams are that block (NT
  // threads, as run_block launches them): each thread is its own index, with no range loop
  // around the phase, whose trip count the compiler could not know (TeamThreadRange's). Host
  // teams are one thread, which walks the NT indices.
  template <class F>
  KOKKOS_INLINE_FUNCTION static void for_threads(const typename Policy::member_type& team, const F& f) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)  // (Kokkos 3.4 has no KOKKOS_IF_ON_DEVICE)
    f(team.team_rank());
#else
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, NT), f);
#endif
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename Policy::member_type& team) const {
    const int i0 = team.league_rank() / tiles_c * TR, j0 = team.league_rank() % tiles_c * TC;
    ScratchCarver scratch(team, scratch_bytes());
    T* tile = scratch.take<T>(std::size_t(TR) * LD);
    // All of a thread's loads are issued before any is used: LOADS x 16 bytes in flight (the
    // compiler cannot move loads past the scratch stores, which it cannot tell apart from `in`).
    for_threads(team, [&](const int tid) {
      Pack<T> v[LOADS];
      TILEKIT_UNROLL
      for (int l = 0; l < LOADS; ++l) {
        const int q = tid + l * NT, r = q / (TC / W), c = (q % (TC / W)) * W, i = i0 + r, j = j0 + c;
        if (kVec) {
          if (i < a.rows && j < a.cols) v[l] = *reinterpret_cast<const Pack<T>*>(a.in + i * a.ld_in + j);
          else
            for (int e = 0; e < W; ++e) v[l].v[e] = T(0);
        } else {
          TILEKIT_UNROLL
          for (int e = 0; e < W; ++e) v[l].v[e] = (i < a.rows && j + e < a.cols) ? a.in[i * a.ld_in + j + e] : T(0);
        }
      }
      TILEKIT_UNROLL
      for (int l = 0; l < LOADS; ++l) {
        const int q = tid + l * NT, r = q / (TC / W), c = (q % (TC / W)) * W;
        TILEKIT_UNROLL
        for (int e = 0; e < W; ++e) tile[r * LD + c + e] = v[l].v[e];
      }
    });
    block_barrier<kBar>(team);
    // Output row r (input column j0 + r), W consecutive output columns from input rows c..c+W-1:
    // a warp's reads walk down scratch columns, one bank each thanks to the padding.
    for_threads(team, [&](const int tid) {
      TILEKIT_UNROLL
      for (int s = 0; s < STORES; ++s) {
        const int q = tid + s * NT, r = q / (TR / W), c = (q % (TR / W)) * W, j = j0 + r, i = i0 + c;
        Pack<T> o;
        TILEKIT_UNROLL
        for (int e = 0; e < W; ++e) o.v[e] = tile[(c + e) * LD + r];
        if (kVec) {
          if (j < a.cols && i < a.rows) store_pack_global(a.out + j * a.ld_out + i, o);
        } else {
          TILEKIT_UNROLL
          for (int e = 0; e < W; ++e)
            if (j < a.cols && i + e < a.rows) a.out[j * a.ld_out + i + e] = o.v[e];
        }
      }
    });
  }
};

// Which optimized kernel runs: `block` (the cuda backend's kernel) for the compiled tiles and
// `lanes` for the others, or lanes for every tile (the tuning kokkos.transpose.kernel=lanes, a
// sweep value).
enum class TransposeMode { block, lanes };
inline TransposeMode transpose_mode() {
  return tuning_choice<TransposeMode>("kokkos.transpose.kernel",
                                      {{"block", TransposeMode::block}, {"lanes", TransposeMode::lanes}});
}
// The plan's detail: the launch, and which kernel it is.
struct TransposePlan : OpPlan {
  bool block = false;          // optimized: TransposeBlock (else TransposeTeam)
  bool block_barrier = true;   // ... with the barrier instruction (kokkos.barrier)
  index_t naive_league = 0;    // naive: the team launch's league (0: MDRange)
};
inline bool compiled_block(const TileConfig& t) {
  return (t.rows == 32 || t.rows == 64) && (t.cols == 32 || t.cols == 64);
}
template <class T>
bool vectorizable(const TransposeArgs<T>& a) {
  constexpr index_t w = Pack<T>::W;
  auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return aligned(a.in) && aligned(a.out) && a.rows % w == 0 && a.cols % w == 0 && a.ld_in % w == 0 &&
         a.ld_out % w == 0;
}

template <class T, int TR, int TC>
void run_block(const TransposeArgs<T>& args, int tiles_c, int league, bool block_barrier) {
  auto go = [&](auto f) {
    using F = decltype(f);
    typename F::Policy p(league, exec_on_gpu() ? F::NT : 1);
    p.set_scratch_size(0, Kokkos::PerTeam(F::scratch_bytes()));
    Kokkos::parallel_for("tilekit::kokkos::transpose_optimized", p, f);
  };
  const TransposeView<T> a(args);
  auto pick = [](bool x, const auto& g) { x ? g(std::true_type{}) : g(std::false_type{}); };
  pick(vectorizable(args), [&](auto vec) {
    // team_barrier() (kokkos.barrier=team) is compiled in sweep builds only.
    if constexpr (kSweeps)
      pick(block_barrier, [&](auto bar) { go(TransposeBlock<T, TR, TC, decltype(vec)::value, decltype(bar)::value>{a, tiles_c}); });
    else
      go(TransposeBlock<T, TR, TC, decltype(vec)::value, true>{a, tiles_c});
  });
}

template <class T>
void run_block(const TransposeArgs<T>& args, const TileConfig& t, int tiles_c, int league, bool block_barrier) {
  if (t.rows == 64 && t.cols == 64) return run_block<T, 64, 64>(args, tiles_c, league, block_barrier);
  if (t.rows == 32 && t.cols == 64) return run_block<T, 32, 64>(args, tiles_c, league, block_barrier);
  if (t.rows == 64 && t.cols == 32) return run_block<T, 64, 32>(args, tiles_c, league, block_barrier);
  return run_block<T, 32, 32>(args, tiles_c, league, block_barrier);
}

template <class T>
std::size_t block_scratch(const TileConfig& t) {
  return kScratchAlign + align_up(sizeof(T) * std::size_t(t.rows) * std::size_t(t.cols + 1));
}

TeamPolicy policy_for(const Launch& l) {
  TeamPolicy p(l.league, l.team, l.vector);
  p.set_scratch_size(0, Kokkos::PerTeam(l.scratch));
  return p;
}

// Vector lanes of the optimized launch: a warp on GPUs; on hosts a team thread walks its rows
// itself (the lanes become a loop the compiler may vectorize).
int vector_lanes() { return exec_on_gpu() ? std::min(32, TeamPolicy::vector_length_max()) : 1; }

// Lanes of the portable tiled kernel: on GPUs a thread per column and about 256 per team, as the
// cuda backend's plan; on hosts (one team thread looping over lanes) a row of them.
tile::Dim2 tiled_lanes(const TileConfig& t) {
  if (!exec_on_gpu()) return {t.cols, 1};
  return {t.cols, std::max(1, std::min(t.rows, std::max(1, 256 / t.cols)))};
}

template <class T>
TransposePlan plan(Variant v, const Problem& p, const TileConfig& t) {
  TransposePlan pl;
  Launch& l = pl.launch;
  if (v == Variant::naive) {
    pl.naive_league = kSweeps ? naive_league(p.n, p.m, NaiveMode::mdrange) : 0;
    if (pl.naive_league > 0) {
      l.league = int(pl.naive_league);
      l.team = 256;
      l.kernel = "a 256-thread team per 32x8 piece of the input, reads along rows, writes down columns";
    } else {
      l.kernel = "MDRange over the input, reads along rows, writes down columns";
    }
    return pl;
  }
  const bool opt = v == Variant::optimized;
  const int pad = opt ? 1 : 0;
  l.league = tiles(p.m, t.rows) * tiles(p.n, t.cols);
  if (!opt) {
    const tile::Dim2 lanes = tiled_lanes(t);
    l.team = exec_on_gpu() ? lanes.count() : 1;
    l.scratch = tile::scratch_bytes<T>(t.rows, t.cols);
    l.kernel = "tile layer: the block loaded into unpadded scratch, written out in output row order";
    return pl;
  }
  if (transpose_mode() == TransposeMode::block && compiled_block(t)) {
    pl.block = true;
    pl.block_barrier = barrier_is_block();
    l.team = exec_on_gpu() ? 256 : 1;
    l.scratch = block_scratch<T>(t);
    l.kernel = "the cuda backend's kernel: 256 team threads, scratch rows padded by 1, 16-byte vectors "
               "(element accesses where the matrices do not allow them)" +
               std::string(exec_on_gpu() ? (pl.block_barrier ? ", __syncthreads()" : ", team_barrier()") : "");
    return pl;
  }
  l.scratch = TransposeTeam<T>::scratch_bytes(t.rows, t.cols, pad);
  l.vector = opt ? vector_lanes() : 1;
  const TransposeTeam<T> probe{TransposeView<T>(TransposeArgs<T>{}), t.rows, t.cols, pad, 1, opt};
  TeamPolicy policy(1, 1, l.vector);
  policy.set_scratch_size(0, Kokkos::PerTeam(l.scratch));
  const int recommended = policy.team_size_recommended(probe, Kokkos::ParallelForTag());
  if (opt) {
    // Several rows per thread, all of a thread's loads in one batch: rows / kBatch threads
    // (8 for a 64-row tile: 64 x 8 ... x 32 lanes), fewer when the space recommends fewer.
    l.team = std::max(1, std::min({recommended, std::max(1, t.rows / TransposeTeam<T>::kBatch), t.cols}));
    l.kernel = "rows over team threads, columns over vector lanes, scratch rows padded by 1";
  }
  return pl;
}

template <class T>
TileConfig auto_tile(Variant v) {
  // The largest square power-of-two tile (at most 64) of which two fit a team's scratch, so
  // that a GPU multiprocessor keeps several teams resident.
  const std::size_t budget = scratch_max() / 2;
  const int pad = v == Variant::optimized ? 1 : 0;
  int side = 64;
  while (side > 4 && TransposeTeam<T>::scratch_bytes(side, side, pad) > budget) side /= 2;
  return {side, side, 0};
}

}  // namespace transpose_kernels

using namespace transpose_kernels;

namespace transpose_kernels {
template <class T>
tilekit::Plan plan_call(Variant v, const Problem& p, const TileConfig& requested) {
  tilekit::Plan out;
  if (v == Variant::optimized && host_path::available()) {
    out.tile = host_path::tile(p, requested);
    TransposePlan pl;
    pl.host = true;
    pl.launch.kernel = host_path::transpose_kernel(p.dtype);
    out.detail = std::shared_ptr<const OpPlan>(std::make_shared<const TransposePlan>(std::move(pl)));
    return out;
  }
  if (requested.is_auto()) {
    out.tile = v == Variant::naive ? TileConfig{} : auto_tile<T>(v);
  } else {
    const int pad = v == Variant::optimized ? 1 : 0;
    const std::size_t reserved = TransposeTeam<T>::scratch_bytes(requested.rows, requested.cols, pad) -
                                 tile_scratch_bytes(p, requested);
    check_team_scratch(p, requested, reserved, pad ? "alignment and the padding column" : "alignment");
    if (v == Variant::tiled) check_tile_lanes(p, requested, tiled_lanes(requested).count(), "one per column, rows in steps");
    out.tile = v == Variant::naive ? TileConfig{} : TileConfig{requested.rows, requested.cols, 0};
  }
  out.detail = std::shared_ptr<const OpPlan>(std::make_shared<const TransposePlan>(plan<T>(v, p, out.tile)));
  return out;
}
}  // namespace transpose_kernels

Plan transpose_plan(Variant v, const Problem& p, const TileConfig& requested) {
  return p.dtype == DType::f32 ? plan_call<float>(v, p, requested) : plan_call<double>(v, p, requested);
}

template <class T>
void transpose(const Plan& plan, const TransposeArgs<T>& args) {
  const TransposePlan& pl = static_cast<const TransposePlan&>(*plan.get<OpPlan>());
  const TileConfig& t = plan.tile;
  if (plan.variant == Variant::naive) return transpose_naive(args, pl.naive_league);
  if (pl.host) return host_path::transpose(args, t);
  if (plan.variant == Variant::tiled)
    return portable::transpose_tiled(args, t, tiled_lanes(t),
                                     [](const tile::Shape& sh, const auto& k) { tile::run_kokkos(sh, k); });
  const Launch& l = pl.launch;
  if (pl.block) return run_block<T>(args, t, tiles(args.cols, t.cols), l.league, pl.block_barrier);
  const TransposeTeam<T> f{TransposeView<T>(args), t.rows, t.cols, 1, tiles(args.cols, t.cols), true};
  Kokkos::parallel_for("tilekit::kokkos::transpose_optimized", policy_for(l), f);
}

template void transpose<float>(const Plan&, const TransposeArgs<float>&);
template void transpose<double>(const Plan&, const TransposeArgs<double>&);

}  // namespace tilekit::kokkos
