// The operations. Each call validates everything first (shapes, ownership, variant, tile)
// and throws tilekit::Error before any output is touched; then the backend runs the kernel.
// Calls are asynchronous on GPU backends: synchronize() or download() to wait.
#pragma once

#include "tilekit/matrix.hpp"

namespace tilekit {

// C = alpha * A * B + beta * C, A: m x k, B: k x n, C: m x n. beta == 0 ignores C's contents
// (NaN included); k == 0 gives C = beta * C.
template <class T>
void gemm(Variant v, T alpha, const Matrix<T>& a, const Matrix<T>& b, T beta, Matrix<T>& c,
          const TileConfig& tile = {});

// out = in^T, out-of-place; out must be cols x rows of in.
template <class T>
void transpose(Variant v, const Matrix<T>& in, Matrix<T>& out, const TileConfig& tile = {});

// out = in (*) filter: H x W input, odd R x R filter (1 <= R <= kMaxFilter), zero padding,
// out the same size as in. Cross-correlation orientation (no filter flip), as in PMPP ch. 7.
inline constexpr int kMaxFilter = 31;
template <class T>
void conv2d(Variant v, const Matrix<T>& in, const Matrix<T>& filter, Matrix<T>& out,
            const TileConfig& tile = {});

// Checks a problem's shape before anything is allocated, with the same rules (and messages)
// the operations apply to matrices on `be`: non-negative sizes, no more elements per matrix than
// be->max_matrix_elements() (without a backend: fewer than 2^31, what every backend addresses),
// an odd conv2d filter from 1 to kMaxFilter. Throws tilekit::Error.
void validate_problem(const Problem& p, const Backend* be = nullptr);
// Bytes of the problem's operands (inputs and output, densely stored) on the backend, by
// checked arithmetic: what a call needs allocated before it can run.
std::size_t operand_bytes(const Problem& p);

// How a call of variant v on problem p would run on `be` (the request checked as the operations
// check it): its tile, and the launch Backend::describe_launch prints. Each operation above makes
// one per call; the overloads below run a plan made here, so that a program calling the same
// operation many times (a benchmark) plans it once and runs exactly what it reports.
Plan plan(Backend& be, Variant v, const Problem& p, const TileConfig& requested = {});
// The tile a call would use (after validation), for reports: plan(...).tile.
TileConfig resolve_tile(Backend& be, Variant v, const Problem& p, const TileConfig& requested);

// The operations on a plan from plan() for exactly their operands' problem (backend, variant,
// operation, element type, sizes; another plan is refused with an Error naming both).
template <class T>
void gemm(const Plan& plan, T alpha, const Matrix<T>& a, const Matrix<T>& b, T beta, Matrix<T>& c);
template <class T>
void transpose(const Plan& plan, const Matrix<T>& in, Matrix<T>& out);
template <class T>
void conv2d(const Plan& plan, const Matrix<T>& in, const Matrix<T>& filter, Matrix<T>& out);

// Useful FLOPs and compulsory bytes of a problem (inputs read once, output written once),
// the numbers every GFLOP/s and GB/s figure in tilekit is computed from.
double useful_flops(const Problem& p, bool beta_nonzero = false);
double compulsory_bytes(const Problem& p, bool beta_nonzero = false);

// The scratch bytes a tile needs for the textbook layout of each operation (used by tile
// validation in every backend so the numbers in error messages agree).
std::size_t tile_scratch_bytes(const Problem& p, const TileConfig& t);
// Throws "tile RxC[xD] needs N bytes of scratch, but <where> offers M bytes".
void check_tile_fits(const Problem& p, const TileConfig& t, std::size_t available,
                     const std::string& where);

}  // namespace tilekit
