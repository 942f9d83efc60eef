// The host fast path's blocking and per-tile work (packed.hpp), around the dispatched kernels.
#include "common/host/packed.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include <tilekit/tunings.hpp>

namespace tilekit::host {

thread_local Workspace tls_a_pack, tls_b_panels;

TileConfig gemm_packed_tile(const DeviceInfo& info, DType t) {
  const simd::MicroTile mt = simd::gemm_micro_tile(t);
  const std::size_t e = size_of(t), mr = mt.mr, nr = mt.nr;
  // kc: the A micro-panel (mr x kc) takes about half the L1, leaving the other half for the B
  // micro-panels streaming through and the C lines. At least 64 steps, so a micro-kernel call
  // amortizes its C load/store; a multiple of 16 keeps packed panels line-aligned.
  // At most 384: the narrow panels of 16-register ISAs (mr = 6) would allow 672 on a 32 KiB L1,
  // which measured ~3% slower than 256-384 with the AVX2 kernel on Zen 4 (the B micro-panels
  // streaming through L1 grow with kc too).
  std::size_t kc = std::min<std::size_t>(info.l1_bytes / 2 / (mr * e) / 16 * 16, 384);
  kc = std::max<std::size_t>(kc, 64);
  // nc: the B block (kc x nc) takes half the L2; mc: the A block takes most of the rest.
  std::size_t nc = std::max(nr, info.l2_bytes / 2 / (kc * e) / nr * nr);
  std::size_t mc = std::max(mr, (info.l2_bytes * 7 / 8 - kc * nc * e) / (kc * e) / mr * mr);
  return {int(mc), int(nc), int(kc)};
}

TileConfig transpose_packed_tile(const DeviceInfo& info, DType t) {
  // Every input line is consumed by one register square and every output line written by one,
  // so the block does not need to fit a cache for reuse; its shape sets how many lines each
  // visit to a page (a TLB entry, a DRAM row) covers: rows * e bytes of each output row and
  // cols * e of each input row, and how many pages a group of rows (one square tall) writes
  // into: one line into each of `cols` output rows.
  const int lanes = int(simd::transpose_lanes(t));
  if (cpu_is_amd_family_26()) {
    // Zen 5 (2 cores, 8192^2 floats, streaming; docs/design/openmp-transpose-blocks.md):
    // 512 x 64 30-38 GB/s against 256 x 256 20-24: 64 output rows per group stay inside the L1
    // DTLB, 256 do not. (The 16-core Xeon host measured the opposite: 512 x 64 55-62 GB/s,
    // 256 x 256 75-86; the Zen 4 machine ran 256 x 256 at 109% of its copy.)
    return {std::max(lanes, 512 / lanes * lanes), std::max(lanes, 64 / lanes * lanes), 0};
  }
  // Elsewhere a square of a quarter of the L2 (256 x 256 floats on a 1 MiB L2): on a Zen 4, 128 x
  // 128 blocks ran ~10% slower and larger ones gained nothing. A whole number of cache lines: a
  // block edge inside a line leaves that line's streaming stores to two blocks (perhaps two
  // threads), written in parts: AVX2 floats in 360 x 360 blocks (whole vectors, not lines) streamed
  // 8192^2 at 1.5 GB/s, in 352 x 352 at 6.5-10 (memcpy 9-12).
  const index_t unit = std::max<index_t>(lanes, 64 / index_t(size_of(t)));
  index_t side = index_t(std::sqrt(double(info.l2_bytes) / 4.0 / double(size_of(t))));
  side = std::max(unit, side / unit * unit);
  return {int(side), int(side), 0};
}

// The largest last-level cache one core can fill: a core uses its own CCD's or tile's L3 (32-96
// MiB on current x86), while a virtual machine may report the whole socket's (this project's
// Zen 5 machine: 508 MiB). Outputs above this stream past the caches.
constexpr std::size_t kMaxL3Reach = std::size_t(96) << 20;

namespace {
// Intel's server L3 is the socket's mesh of slices, shared with every other core (and a VM's
// neighbours): on a 2-core Xeon VM reporting 300 MiB, the transpose through ordinary stores ran
// at a third to a fifth of its streaming speed with outputs of 4-64 MiB, all well inside that L3
// (docs/design/openmp-transpose-blocks.md). There only a core's own L2 keeps a transpose's output.
std::size_t streaming_reach() {
  static const std::size_t reach =
      cpuinfo_field("vendor_id") == "GenuineIntel" ? std::max<std::size_t>(detect_caches().l2, 1) : kMaxL3Reach;
  return reach;
}
}  // namespace

bool transpose_packed_streams(std::size_t out_bytes, std::size_t l3_bytes) {
  // Non-temporal stores pay off only when the output would not stay in the caches anyway.
  return out_bytes > std::min(l3_bytes, streaming_reach());
}

namespace {
bool conv2d_reads_in_place() { return tuning_choice<int>("host.conv2d.read", {{"in_place", 1}, {"copy", 0}}) == 1; }
bool conv2d_dynamic() { return tuning_choice<int>("host.conv2d.schedule", {{"dynamic", 1}, {"static", 0}}) == 1; }
}  // namespace

template <class T>
Conv2dCall conv2d_packed_call(const Conv2dArgs<T>& a) {
  static const std::size_t l3 = detect_caches().l3;
  const std::size_t out_bytes = std::size_t(a.h) * std::size_t(a.ld_out) * sizeof(T);
  const int stream = tuning_choice<int>("host.conv2d.stream", {{"auto", -1}, {"off", 0}, {"on", 1}});
  const bool read_in_place = conv2d_reads_in_place();
  Conv2dCall c;
  c.stream = stream < 0 ? transpose_packed_streams(out_bytes, l3) : stream == 1;
  c.in_place = (a.r == 3 || a.r == 5 || a.r == 7) && read_in_place;
  c.dynamic = conv2d_dynamic();
  return c;
}

TileConfig conv2d_packed_tile(const DeviceInfo& info, const Problem& p) {
  const std::size_t e = size_of(p.dtype), bc = simd::conv2d_block_cols(p.dtype, p.k);
  const std::size_t halo = std::size_t(std::max<index_t>(p.k - 1, 0));
  std::size_t cols;
  if (p.k == 3 || p.k == 5 || p.k == 7) {
    // The sliding strips need only a band's rows in the L1 and the tile in the L2: the whole
    // image width, so the tile's rows are whole image rows (one copy a row, no column halo
    // copied twice), as long as the L2 quarter still holds two bands of rows (8R + halo).
    const std::size_t w = (std::size_t(std::max<index_t>(p.n, 1)) + bc - 1) / bc * bc;
    cols = std::min(w, info.l2_bytes / 4 / ((8 * std::size_t(p.k) + halo) * e) / bc * bc);
  } else {
    // Width: one register block's input rows (4 outputs + halo) across the tile in half the L1,
    // so the input rows a block of output rows shares with the next are still there.
    cols = info.l1_bytes / 2 / ((4 + halo) * e) / bc * bc;
  }
  cols = std::max(cols, bc);
  // Height: the whole halo-padded tile in a quarter of the L2; tall tiles amortize the halo.
  const std::size_t tile_row = (cols + halo) * e;
  std::size_t rows = info.l2_bytes / 4 / tile_row;
  rows = rows > halo + 4 ? (rows - halo) / 4 * 4 : 4;
  if (p.k == 3 || p.k == 5 || p.k == 7) {
    // Whole-width tiles are row bands of the image: as many bands as a multiple of the threads, of
    // nearly equal heights (the strips take any height), so that a static split is even too.
    const std::size_t h = std::size_t(std::max<index_t>(p.m, 1)), threads = std::size_t(std::max(info.compute_units, 1));
    const std::size_t across = (std::size_t(std::max<index_t>(p.n, 1)) + cols - 1) / cols;
    std::size_t bands = (h + rows - 1) / rows;
    if (across == 1) bands = (bands + threads - 1) / threads * threads;
    rows = std::max<std::size_t>((h + bands - 1) / bands, 1);
  }
  return {int(rows), int(cols), 0};
}

namespace {
// The row stride of a tile buffer `cols` elements wide: whole cache lines, an odd number of them.
index_t conv2d_tile_ld(index_t cols, index_t e) {
  index_t lines = ceil_div(cols, 64 / e);
  lines += 1 - lines % 2;
  return lines * (64 / e);
}
}  // namespace

Conv2dBuffer conv2d_packed_buffer(DType dt, index_t r, const TileConfig& t) {
  // The tile plus halo, columns padded to whole register blocks, rows of a whole number of cache
  // lines so every row starts line-aligned, and an odd number of them: the sliding kernel walks
  // down the tile's columns, and rows a power-of-two number of lines apart (1008 floats + halo
  // padded to 1024: 4 KiB) would all fall into the same L1 sets and alias the loads with the
  // output's stores at 4 KiB.
  const index_t bc = index_t(simd::conv2d_block_cols(dt, r)), e = index_t(size_of(dt));
  const index_t ld = conv2d_tile_ld(ceil_div(t.cols, bc) * bc + r - 1, e);
  // Then the kernel's scratch (conv2d_tile's `state`): R rows of the padded width.
  const index_t state = ceil_div(t.cols, bc) * bc * r;
  return {ld, std::size_t((t.rows + r - 1) * ld + state) * std::size_t(e)};
}

namespace {
// Output rows [i_lo, i_hi) x columns [j_lo, j_hi) of the image from `src` (row 0 = input row
// i_lo - R/2, column 0 = input column j_lo - R/2, every row `ld` apart), with `next` the lines to
// prefetch meanwhile.
template <class T>
void conv2d_run(const Conv2dArgs<T>& a, const T* src, index_t ld, index_t i_lo, index_t i_hi, index_t j_lo,
                index_t j_hi, T* state, bool stream, const simd::Conv2dTileOptions& next) {
  simd::Conv2dTileOptions opt = next;
  opt.stream = stream;
  simd::conv2d_tile(a, src, ld, i_lo, j_lo, i_hi - i_lo, j_hi - j_lo, state, opt);
}

// The same from a copy in `buf`: whole rows of the image by memcpy, zeros for the halo outside it.
template <class T>
void conv2d_run_copied(const Conv2dArgs<T>& a, index_t bc, T* buf, index_t ld, index_t i_lo, index_t i_hi,
                       index_t j_lo, index_t j_hi, T* state, bool stream, const simd::Conv2dTileOptions& next) {
  if (i_hi <= i_lo || j_hi <= j_lo) return;
  const index_t half = a.r / 2;
  const index_t width = ceil_div(j_hi - j_lo, bc) * bc + a.r - 1;  // what the kernel will read
  // A narrow piece of the frame (a strip and its halo) gets rows as narrow as it is.
  ld = std::min(ld, conv2d_tile_ld(width, index_t(sizeof(T))));
  const index_t x_lo = std::max<index_t>(0, half - j_lo);                              // first column inside
  const index_t x_hi = std::max(x_lo, std::min<index_t>(width, a.w - j_lo + half));  // one past the last
  for (index_t y = 0; y < i_hi - i_lo + a.r - 1; ++y) {
    T* dst = buf + y * ld;
    const index_t gy = i_lo + y - half;
    if (gy < 0 || gy >= a.h) {
      std::fill(dst, dst + width, T(0));
      continue;
    }
    std::fill(dst, dst + x_lo, T(0));
    std::memcpy(dst + x_lo, a.in + gy * a.ld_in + (j_lo + x_lo - half), std::size_t(x_hi - x_lo) * sizeof(T));
    std::fill(dst + x_hi, dst + width, T(0));
  }
  conv2d_run(a, buf, ld, i_lo, i_hi, j_lo, j_hi, state, stream, next);
}
}  // namespace

template <class T>
void conv2d_packed_tile_run(const Conv2dArgs<T>& a, const TileConfig& t, index_t bi, index_t bj, T* tile, index_t ld,
                            const Conv2dCall& call) {
  const index_t half = a.r / 2, bc = index_t(simd::conv2d_block_cols(dtype_of<T>(), a.r));
  const index_t i0 = bi * t.rows, j0 = bj * t.cols;
  const index_t i1 = std::min<index_t>(i0 + t.rows, a.h), j1 = std::min<index_t>(j0 + t.cols, a.w);
  T* state = tile + (t.rows + a.r - 1) * ld;
  // Split statically, a thread computes consecutive tiles, row by row: the next one's image rows
  // are fetched into the L2 while this one is computed. Handed out one at a time, the next tile is
  // most likely another thread's.
  simd::Conv2dTileOptions next;
  const index_t tiles_c = ceil_div(a.w, index_t(t.cols)), nt = bi * tiles_c + bj + 1;
  if (!call.dynamic && nt < ceil_div(a.h, index_t(t.rows)) * tiles_c) {
    const index_t ni0 = nt / tiles_c * t.rows, nj0 = nt % tiles_c * t.cols;
    const index_t y_lo = std::max<index_t>(0, ni0 - half), y_hi = std::min<index_t>(a.h, ni0 + t.rows + half);
    const index_t x_lo_n = std::max<index_t>(0, nj0 - half), x_hi_n = std::min<index_t>(a.w, nj0 + t.cols + half);
    // From the line holding the first element, so that the last partial line is counted too.
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(a.in + y_lo * a.ld_in + x_lo_n);
    const std::size_t skew = first % 64;
    next.next = reinterpret_cast<const char*>(first - skew);
    next.next_ld_bytes = std::size_t(a.ld_in) * sizeof(T);
    next.next_row_bytes = std::size_t(x_hi_n - x_lo_n) * sizeof(T) + skew;
    next.next_rows = std::size_t(y_hi - y_lo);
  }
  // Read in place: the outputs whose whole window lies inside the image, in whole strips (rows
  // [ri_lo, ri_hi) x columns [ci_lo, ci_hi)); the frame around them is copied as before.
  const index_t ri_lo = std::max(i0, half), ri_hi = std::min(i1, a.h - half);
  const index_t ci_lo = j0 + ceil_div(std::max<index_t>(0, half - j0), bc) * bc;
  const index_t ci_hi = ci_lo + std::max<index_t>(0, std::min(j1, a.w - half) - ci_lo) / bc * bc;
  if (!call.in_place || ri_hi <= ri_lo || ci_hi <= ci_lo) {
    conv2d_run_copied(a, bc, tile, ld, i0, i1, j0, j1, state, call.stream, next);
  } else {
    const simd::Conv2dTileOptions none;
    conv2d_run(a, a.in + (ri_lo - half) * a.ld_in + (ci_lo - half), a.ld_in, ri_lo, ri_hi, ci_lo, ci_hi, state,
               call.stream, next);
    conv2d_run_copied(a, bc, tile, ld, i0, ri_lo, j0, j1, state, call.stream, none);     // top
    conv2d_run_copied(a, bc, tile, ld, ri_hi, i1, j0, j1, state, call.stream, none);     // bottom
    conv2d_run_copied(a, bc, tile, ld, ri_lo, ri_hi, j0, ci_lo, state, call.stream, none);  // left
    conv2d_run_copied(a, bc, tile, ld, ri_lo, ri_hi, ci_hi, j1, state, call.stream, none);  // right
  }
  if (call.stream) simd::stream_fence();
}

std::string gemm_packed_kernel(DType t) {
  const simd::MicroTile mt = simd::gemm_micro_tile(t);
  return fmt::format("{} micro-kernel {}x{}", simd::target_name(), mt.mr, mt.nr);
}
std::string transpose_packed_kernel(DType t) {
  const std::size_t lanes = simd::transpose_lanes(t);
  return fmt::format("{} in-register {}x{} transposes", simd::target_name(), lanes, lanes);
}
std::string conv2d_packed_kernel(DType t, index_t r) {
  if (r < 0)
    return fmt::format("{} strips sliding down the tile (R = 3, 5, 7), register blocks of 4 rows (other R); {}",
                       simd::target_name(), conv2d_dynamic() ? "tiles handed out one at a time" : "the next tile prefetched");
  const std::size_t bc = simd::conv2d_block_cols(t, r);
  if (r == 3 || r == 5 || r == 7)
    return fmt::format("{} strips of {} columns sliding down the tile in bands of {} rows, {} rows of accumulators, "
                       "{}; {}, outputs beyond the caches streamed where strips are whole lines",
                       simd::target_name(), bc, 4 * r, r,
                       conv2d_reads_in_place() ? "reading the image in place (the frame copied with its zero halo)"
                                               : "each tile copied with its halo",
                       conv2d_dynamic() ? "tiles handed out one at a time" : "the next tile prefetched");
  return fmt::format("{} register blocks of 4 rows x {} columns, each tile copied with its halo; {}", simd::target_name(),
                     bc, conv2d_dynamic() ? "tiles handed out one at a time" : "the next tile prefetched");
}

template Conv2dCall conv2d_packed_call<float>(const Conv2dArgs<float>&);
template Conv2dCall conv2d_packed_call<double>(const Conv2dArgs<double>&);
template void conv2d_packed_tile_run<float>(const Conv2dArgs<float>&, const TileConfig&, index_t, index_t, float*, index_t,
                                            const Conv2dCall&);
template void conv2d_packed_tile_run<double>(const Conv2dArgs<double>&, const TileConfig&, index_t, index_t, double*,
                                             index_t, const Conv2dCall&);

}  // namespace tilekit::host
