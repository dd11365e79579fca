// SPDX-License-Identifier: GPL-3.0-or-later
// The sparse operators of lti_operator.hpp: SparseLtiOperator (general sparse descriptor systems)
// and SecondOrderLtiOperator (structured first-order form of M q'' + D q' + K q = B u), with
// their multi-shift factorization caches.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

#include "reduction/lti_operator.hpp"
#include "src/core/errors.hpp"
#include "src/linalg/band_factor.hpp"
#include "src/linalg/cholmod.hpp"
#include "src/linalg/complex_sparse_lu.hpp"

namespace mor {

namespace {

// ---------------------------------------------------------------------------------------------
// Sparse helpers

/// A compressed view of a sparse matrix: the caller's matrix if it is compressed (no copy), else
/// a compressed copy. Value positions k = 0 .. nnz-1 then index valuePtr() directly.
class Compressed {
 public:
  explicit Compressed(const SparseMatrix& X) : ptr_(&X) {
    if (!X.isCompressed()) {
      copy_ = X;
      copy_.makeCompressed();
      ptr_ = &copy_;
    }
  }
  Compressed(const Compressed&) = delete;
  Compressed& operator=(const Compressed&) = delete;
  const SparseMatrix& operator*() const { return *ptr_; }
  const SparseMatrix* operator->() const { return ptr_; }

 private:
  SparseMatrix copy_;
  const SparseMatrix* ptr_;
};

/// The union of the patterns of several n x n compressed matrices, and for each matrix t the
/// position maps[t][k] in the union of its k-th stored entry. Shifted matrices are then
/// assembled in O(nnz) into fixed storage: values[maps[t][k]] += c_t * X_t.valuePtr()[k].
struct PatternUnion {
  SparseMatrix pattern;  // compressed, sorted row indices, values zero
  std::vector<std::vector<int>> maps;
};

PatternUnion union_pattern(const std::vector<const SparseMatrix*>& mats, Index n) {
  PatternUnion u;
  std::vector<int> outer(static_cast<std::size_t>(n) + 1, 0);
  std::vector<int> inner;
  std::size_t total = 0;
  for (const SparseMatrix* X : mats) total += static_cast<std::size_t>(X->nonZeros());
  inner.reserve(total);
  std::vector<int> rows;
  for (Index j = 0; j < n; ++j) {
    rows.clear();
    for (const SparseMatrix* X : mats) {
      const int* Xi = X->innerIndexPtr();
      for (int k = X->outerIndexPtr()[j]; k < X->outerIndexPtr()[j + 1]; ++k) rows.push_back(Xi[k]);
    }
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    inner.insert(inner.end(), rows.begin(), rows.end());
    outer[static_cast<std::size_t>(j) + 1] = static_cast<int>(inner.size());
  }
  u.pattern.resize(n, n);
  u.pattern.resizeNonZeros(static_cast<Index>(inner.size()));
  std::copy(outer.begin(), outer.end(), u.pattern.outerIndexPtr());
  std::copy(inner.begin(), inner.end(), u.pattern.innerIndexPtr());
  std::fill(u.pattern.valuePtr(), u.pattern.valuePtr() + inner.size(), 0.0);

  for (const SparseMatrix* X : mats) {
    std::vector<int> map(static_cast<std::size_t>(X->nonZeros()));
    for (Index j = 0; j < n; ++j) {
      const int* first = inner.data() + outer[static_cast<std::size_t>(j)];
      const int* last = inner.data() + outer[static_cast<std::size_t>(j) + 1];
      for (int k = X->outerIndexPtr()[j]; k < X->outerIndexPtr()[j + 1]; ++k) {
        const int* pos = std::lower_bound(first, last, X->innerIndexPtr()[k]);
        map[static_cast<std::size_t>(k)] = static_cast<int>(pos - inner.data());
      }
    }
    u.maps.push_back(std::move(map));
  }
  return u;
}

/// values[map[k]] += c * x[k] over the stored entries of one matrix.
template <class T>
void scatter_add(T* values, const std::vector<int>& map, const SparseMatrix& X, T c) {
  const double* x = X.valuePtr();
  for (std::size_t k = 0; k < map.size(); ++k) values[map[k]] += c * x[k];
}

bool is_identity(const SparseMatrix& E) {
  if (E.rows() != E.cols()) return false;
  Index diagonal_ones = 0;
  for (Index j = 0; j < E.outerSize(); ++j)
    for (SparseMatrix::InnerIterator it(E, j); it; ++it) {
      if (it.row() != it.col()) {
        if (it.value() != 0.0) return false;
      } else if (it.value() == 1.0) {
        ++diagonal_ones;
      } else {
        return false;
      }
    }
  return diagonal_ones == E.rows();
}

/// Exact symmetry of a square sparse matrix (pattern and values).
bool is_symmetric(const SparseMatrix& X) {
  if (X.rows() != X.cols()) return false;
  const SparseMatrix Xt = X.transpose();
  const SparseMatrix diff = X - Xt;
  for (Index k = 0; k < diff.nonZeros(); ++k)
    if (diff.valuePtr()[k] != 0.0) return false;
  return true;
}

/// "for p = ..." with a real or complex p, for the error messages of the shifted solves.
template <class P>
[[noreturn]] void throw_singular(P p, const std::exception& e) {
  throw NumericalError(
      detail::concat("shifted matrix A + p E is singular for p = ", p, ": ", e.what()));
}

// ---------------------------------------------------------------------------------------------
// Multi-shift factorization cache

/// LR-ADI cycles through a fixed set of shifts (Penzl, given) or meets shifts again across
/// projection rounds; refactorizing for every step would dominate the run time (M.E.S.S. keeps
/// a multi-shift LU cache for the same reason). The cache keeps factorizations keyed by
/// (shift, kind) and evicts the least recently used entry (of the same kind first) beyond its
/// capacity or beyond kCacheBudgetBytes in total. An evicted entry of the same kind is recycled:
/// its numeric storage is refactorized, which for KLU reuses the pivot order (about half the cost
/// of a fresh factorization) and for UMFPACK keeps the solver's symbolic analysis.
///
/// The capacity adapts (like the ghost lists of adaptive replacement caches): it starts at
/// kInitialCapacity and doubles, up to kMaxCachedFactors, whenever a shift is requested again
/// shortly after its factor was evicted. Cyclic shift sets (Penzl, given) thus end up fully
/// cached after a few cycles, while the ever-new shifts of the projection strategy keep the
/// cache small and recycle factors instead of allocating fresh ones.
constexpr std::size_t kInitialCapacity = 4;
constexpr std::size_t kMaxCachedFactors = 32;
/// 512 MiB: at N = 10^6 masses a complex tridiagonal KLU factor of S(p) takes 180 MB, so two
/// factors stay cached while the low-rank factor Z (2*10^6 rows, 16 MB per column) still
/// dominates the memory of an ADI run. (The chain's banded operator factorizes by zgttrf:
/// 68 MB per complex factor, so up to seven stay cached; the cache lives as long as the
/// operator, through BT's projection step, and is part of the 1.2 GiB of BM_bt/1000000's
/// 4.1 GiB peak that is not the factors.)
constexpr std::size_t kCacheBudgetBytes = std::size_t{512} << 20;

enum class FactorKind {
  real,             ///< LU of A + p E (KLU: both orientations; UMFPACK: A + p E)
  real_transposed,  ///< UMFPACK's LU of (A + p E)^T
  real_spd,         ///< Cholesky (CHOLMOD) of a symmetric positive definite shifted matrix
  complex,          ///< complex LU
};

struct CacheEntry {
  Complex p;
  FactorKind kind = FactorKind::real;
  std::unique_ptr<RealSparseLu> klu;       // real KLU, shared analysis
  std::unique_ptr<SparseSolver> solver;    // real UMFPACK (own analysis)
  std::unique_ptr<CholmodFactor> cholmod;  // real CHOLMOD, shared analysis
  std::unique_ptr<ComplexSparseLu> cplx;   // complex KLU, shared analysis
  std::unique_ptr<BandFactor> band;        // real banded (LAPACK), second order
  std::unique_ptr<BandLu<Complex>> cband;  // complex banded (LAPACK), second order
  std::size_t bytes = 0;
  std::uint64_t last_use = 0;
};

class FactorCache {
 public:
  CacheEntry* find(Complex p, FactorKind kind) {
    for (auto& e : entries_) {
      if (e->kind == kind && e->p == p) {
        e->last_use = ++clock_;
        return e.get();
      }
    }
    return nullptr;
  }

  /// A new entry for (p, kind), after evicting least recently used entries until one more of
  /// `estimate` bytes fits. The entry may carry the solver objects of an evicted entry of the
  /// same kind, to be refactorized.
  CacheEntry& insert(Complex p, FactorKind kind, std::size_t estimate) {
    const auto ghost = std::find_if(ghosts_.begin(), ghosts_.end(), [&](const auto& g) {
      return g.first == p && g.second == kind;
    });
    if (ghost != ghosts_.end()) {
      ghosts_.erase(ghost);
      capacity_ = std::min(kMaxCachedFactors, 2 * capacity_);
    }
    std::unique_ptr<CacheEntry> recycled;
    while (!entries_.empty() &&
           (entries_.size() >= capacity_ || bytes_ + estimate > kCacheBudgetBytes)) {
      // The least recently used entry, preferring one of the same kind while none has been
      // recycled yet: alternating real and complex shifts then still refactorize in place.
      auto victim = entries_.end();
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (!recycled && (*it)->kind != kind) continue;
        if (victim == entries_.end() || (*it)->last_use < (*victim)->last_use) victim = it;
      }
      if (victim == entries_.end()) {
        victim = std::min_element(
            entries_.begin(), entries_.end(),
            [](const auto& a, const auto& b) { return a->last_use < b->last_use; });
      }
      bytes_ -= (*victim)->bytes;
      ghosts_.emplace_back((*victim)->p, (*victim)->kind);
      if (ghosts_.size() > 2 * kMaxCachedFactors) ghosts_.erase(ghosts_.begin());
      if (!recycled && (*victim)->kind == kind) recycled = std::move(*victim);
      entries_.erase(victim);
    }
    auto entry = recycled ? std::move(recycled) : std::make_unique<CacheEntry>();
    entry->p = p;
    entry->kind = kind;
    entry->bytes = 0;
    entry->last_use = ++clock_;
    entries_.push_back(std::move(entry));
    return *entries_.back();
  }

  /// Records the size of a freshly factorized entry; evicts older entries beyond the budget.
  void set_bytes(CacheEntry& e, std::size_t bytes) {
    bytes_ = bytes_ - e.bytes + bytes;
    e.bytes = bytes;
    while (bytes_ > kCacheBudgetBytes && entries_.size() > 1) {
      auto victim = entries_.end();
      for (auto it = entries_.begin(); it != entries_.end(); ++it)
        if (it->get() != &e && (victim == entries_.end() || (*it)->last_use < (*victim)->last_use))
          victim = it;
      bytes_ -= (*victim)->bytes;
      entries_.erase(victim);
    }
  }

  /// Drops an entry whose factorization failed.
  void erase(CacheEntry& e) {
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [&](const auto& x) { return x.get() == &e; });
    if (it != entries_.end()) {
      bytes_ -= (*it)->bytes;
      entries_.erase(it);
    }
  }

 private:
  std::vector<std::unique_ptr<CacheEntry>> entries_;    // pointers: entries stay put
  std::vector<std::pair<Complex, FactorKind>> ghosts_;  // recently evicted keys, oldest first
  std::size_t capacity_ = kInitialCapacity;
  std::size_t bytes_ = 0;
  std::uint64_t clock_ = 0;
};

/// Runs make() to fill a new cache entry; on failure drops the entry and rethrows, naming p.
template <class P, class Make>
void fill_entry(FactorCache& cache, CacheEntry& e, P p, Make&& make) {
  try {
    make();
  } catch (const NumericalError& err) {
    cache.erase(e);
    throw_singular(p, err);
  } catch (...) {
    cache.erase(e);
    throw;
  }
}

/// One term c V_t^{(T)} x of a fused product over the pattern P: V_t given by its values on P,
/// x by its data (n_q x k, column stride ld).
template <class S>
struct Term {
  const double* values;
  S coef;
  const S* x;
  Index ld;
};

/// y(:, c) = base_coef * base(:, c) + sum_t coef_t V_t x_t(:, c) (or V_t^T if transpose) for the
/// k columns c, all matrices n_q x k with column strides; base may be null (zero). Columns are
/// processed in blocks of kBlock per pass over the pattern, and all terms share a pass: at
/// N = 10^6 the structured solves and products are bound by memory traffic, and separate Eigen
/// products with temporaries cost several passes each.
/// a * b for the kernels below: for complex numbers the textbook formula, without the C99
/// Annex G recovery of infinite and NaN parts that std::complex's operator* calls (__muldc3,
/// an out-of-line call per product: it took a third of a complex structured solve).
inline double times(double a, double b) {
  return a * b;
}
inline Complex times(Complex a, Complex b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

/// The gather form (V_t^T) of fused_multiply for the kb columns c0 .. c0 + kb - 1; KB > 0 fixes
/// kb = KB at compile time, so that the kb partial sums of a row stay in registers (for 8
/// columns one AVX-512 register; the run-time kb keeps them in memory).
template <Index KB, class S>
void gather_block(const SparseMatrix& P, std::initializer_list<Term<S>> terms, const S* bc,
                  Index ld_base, S base_coef, S* yc, Index ld_y, Index c0, Index kb_runtime) {
  constexpr Index kMax = KB > 0 ? KB : 8;
  const Index kb = KB > 0 ? KB : kb_runtime;
  const Index n = P.rows();
  const int* Pp = P.outerIndexPtr();
  const int* Pi = P.innerIndexPtr();
  for (Index j = 0; j < n; ++j) {
    S sum[kMax];
    for (Index b = 0; b < kb; ++b)
      sum[b] = bc != nullptr ? times(base_coef, bc[b * ld_base + j]) : S(0);
    for (const Term<S>& t : terms) {
      const S* x = t.x + c0 * t.ld;
      S part[kMax] = {};
      for (int q = Pp[j]; q < Pp[j + 1]; ++q) {
        const double v = t.values[q];
        const S* xi = x + Pi[q];
        for (Index b = 0; b < kb; ++b) part[b] += v * xi[b * t.ld];
      }
      for (Index b = 0; b < kb; ++b) sum[b] += times(t.coef, part[b]);
    }
    for (Index b = 0; b < kb; ++b) yc[b * ld_y + j] = sum[b];
  }
}

template <class S>
void fused_multiply(const SparseMatrix& P, std::initializer_list<Term<S>> terms, bool transpose,
                    const S* base, Index ld_base, S base_coef, S* y, Index ld_y, Index k) {
  constexpr Index kBlock = 8;
  const Index n = P.rows();
  const int* Pp = P.outerIndexPtr();
  const int* Pi = P.innerIndexPtr();
  if (k == 1 && transpose) {
    // One column (every shifted solve of IRKA and LR-ADI with one input): the same sums with
    // scalar accumulators, which the block loop below keeps in memory; 2 to 3 times faster.
    for (Index j = 0; j < n; ++j) {
      S sum = base != nullptr ? times(base_coef, base[j]) : S(0);
      for (const Term<S>& t : terms) {
        S part(0);
        for (int q = Pp[j]; q < Pp[j + 1]; ++q) part += t.values[q] * t.x[Pi[q]];
        sum += times(t.coef, part);
      }
      y[j] = sum;
    }
    return;
  }
  for (Index c0 = 0; c0 < k; c0 += kBlock) {
    const Index kb = std::min(kBlock, k - c0);
    S* yc = y + c0 * ld_y;
    const S* bc = base != nullptr ? base + c0 * ld_base : nullptr;
    if (transpose) {
      if (kb == kBlock)
        gather_block<kBlock>(P, terms, bc, ld_base, base_coef, yc, ld_y, c0, kb);
      else
        gather_block<0>(P, terms, bc, ld_base, base_coef, yc, ld_y, c0, kb);
    } else {
      for (Index b = 0; b < kb; ++b) {
        S* yb = yc + b * ld_y;
        if (bc != nullptr) {
          const S* bb = bc + b * ld_base;
          for (Index i = 0; i < n; ++i) yb[i] = times(base_coef, bb[i]);
        } else {
          std::fill(yb, yb + n, S(0));
        }
      }
      for (const Term<S>& t : terms) {
        const S* x = t.x + c0 * t.ld;
        for (Index j = 0; j < n; ++j) {
          S xj[kBlock];
          for (Index b = 0; b < kb; ++b) xj[b] = times(t.coef, x[b * t.ld + j]);
          for (int q = Pp[j]; q < Pp[j + 1]; ++q) {
            const double v = t.values[q];
            S* yi = yc + Pi[q];
            for (Index b = 0; b < kb; ++b) yi[b * ld_y] += v * xj[b];
          }
        }
      }
    }
  }
}

/// Bytes of a UMFPACK factorization, which SparseSolver does not report: half a complex factor
/// of the same pattern once one was measured (similar fill, half the value bytes), else
/// 12 bytes per entry for a fill of twice the pattern plus per-column bookkeeping.
std::size_t real_factor_estimate(std::size_t complex_bytes, Index nnz, Index n) {
  if (complex_bytes > 0) return complex_bytes / 2;
  return static_cast<std::size_t>(24 * nnz + 48 * n);
}

}  // namespace

// =============================================================================================
// SparseLtiOperator

struct SparseLtiOperator::Impl {
  Impl(const DescriptorSystem& s, SparseBackend b) : sys(s), backend(b), A(s.A), E(s.E) {}

  const DescriptorSystem& sys;
  SparseBackend backend;
  Compressed A, E;
  Matrix B, C, D;
  bool E_identity = false;
  bool symmetric = false;  // A and E exactly symmetric
  // Symmetric: for real p < 0, -(A + p E) is tried with CHOLMOD (SPD whenever E
  // is positive definite and A negative semidefinite, as for the rail and every symmetric
  // stable pencil with E > 0); the first factorization that is not positive definite turns
  // CHOLMOD off for this operator and the LU backend takes over.
  bool try_cholmod = false;
  std::unique_ptr<CholmodShared> cholmod;  // analysis of U's pattern, on first use
  Matrix cholmod_x;                        // solution scratch when X aliases R

  SparseMatrix U;  // pattern of A + E; its values are the scratch space of real shifts
  std::vector<int> map_A, map_E;
  std::shared_ptr<const KluPattern> klu_pattern;  // analysed on the first KLU factorization
  // UMFPACK only: the pattern of (A + E)^T for transposed real solves (SparseSolver has no
  // transposed solve), built on first use; to_Ut[k] is the position in Ut of U's k-th entry.
  SparseMatrix Ut;
  std::vector<int> to_Ut;
  std::vector<Complex> cvalues;
  std::size_t complex_bytes = 0;  // size of the last complex factor, for estimates
  FactorCache cache;

  const std::shared_ptr<const KluPattern>& pattern() {
    if (!klu_pattern) klu_pattern = std::make_shared<const KluPattern>(U);
    return klu_pattern;
  }

  void assemble_real(double p) {
    double* v = U.valuePtr();
    std::fill(v, v + U.nonZeros(), 0.0);
    scatter_add(v, map_A, *A, 1.0);
    scatter_add(v, map_E, *E, p);
  }

  void build_transpose() {
    // Transposing a matrix whose values are the positions 0 .. nnz-1 tells where each entry
    // lands (nnz < 2^31 is exact in a double).
    SparseMatrix positions = U;
    for (Index k = 0; k < positions.nonZeros(); ++k)
      positions.valuePtr()[k] = static_cast<double>(k);
    Ut = positions.transpose();
    Ut.makeCompressed();
    to_Ut.assign(static_cast<std::size_t>(U.nonZeros()), 0);
    for (Index k = 0; k < Ut.nonZeros(); ++k)
      to_Ut[static_cast<std::size_t>(Ut.valuePtr()[k])] = static_cast<int>(k);
  }

  /// Assembles -(A + p E) into U's values.
  void assemble_negated(double p) {
    double* v = U.valuePtr();
    std::fill(v, v + U.nonZeros(), 0.0);
    scatter_add(v, map_A, *A, -1.0);
    scatter_add(v, map_E, *E, -p);
  }

  /// The CHOLMOD entry of a real p < 0 of a symmetric pencil, or nullptr when CHOLMOD does not
  /// apply (then or from now on). A factorization failing for an indefinite -(A + p E) only
  /// switches CHOLMOD off; failures of the LU that follows name p.
  CacheEntry* cholmod_entry(double p) {
    if (!try_cholmod || !(p < 0.0)) return nullptr;
    if (CacheEntry* hit = cache.find(p, FactorKind::real_spd)) return hit;
    CacheEntry& e = cache.insert(p, FactorKind::real_spd, complex_bytes / 4);
    try {
      assemble_negated(p);
      if (!cholmod) cholmod = std::make_unique<CholmodShared>(U);
      if (!e.cholmod) e.cholmod = std::make_unique<CholmodFactor>(*cholmod);
      e.cholmod->factorize(U);
    } catch (const NumericalError&) {
      cache.erase(e);
      try_cholmod = false;
      return nullptr;
    } catch (...) {
      cache.erase(e);
      throw;
    }
    cache.set_bytes(e, e.cholmod->bytes());
    return &e;
  }

  void solve_real(double p, const Matrix& R, Matrix& X, bool transpose) {
    if (CacheEntry* e = cholmod_entry(p)) {
      // -(A + p E) is symmetric: one factor serves both orientations; X = -(N^{-1} R).
      Matrix& out = &X == &R ? cholmod_x : X;
      e->cholmod->solve(R, out);
      out *= -1.0;
      if (&out != &X) X.swap(out);
      return;
    }
    if (backend == SparseBackend::klu) {
      // KLU solves with the transpose itself: one factor per shift serves both orientations.
      CacheEntry* e = cache.find(p, FactorKind::real);
      if (e == nullptr) {
        const std::size_t estimate = complex_bytes / 2;
        e = &cache.insert(p, FactorKind::real, estimate);
        fill_entry(cache, *e, p, [&] {
          assemble_real(p);
          if (!e->klu) e->klu = std::make_unique<RealSparseLu>(pattern());
          e->klu->factorize(U.valuePtr());
        });
        cache.set_bytes(*e, e->klu->memory_bytes());
      }
      e->klu->solve(R, X, transpose);
      return;
    }
    const FactorKind kind = transpose ? FactorKind::real_transposed : FactorKind::real;
    CacheEntry* e = cache.find(p, kind);
    if (e == nullptr) {
      if (transpose && Ut.size() == 0) build_transpose();
      const std::size_t estimate = real_factor_estimate(complex_bytes, U.nonZeros(), U.rows());
      e = &cache.insert(p, kind, estimate);
      fill_entry(cache, *e, p, [&] {
        assemble_real(p);
        const SparseMatrix* S = &U;
        if (transpose) {
          const double* v = U.valuePtr();
          double* vt = Ut.valuePtr();
          for (std::size_t k = 0; k < to_Ut.size(); ++k) vt[to_Ut[k]] = v[k];
          S = &Ut;
        }
        if (!e->solver) {
          e->solver = make_sparse_solver(backend);
          e->solver->analyze_pattern(*S);
        }
        e->solver->factorize(*S);
      });
      cache.set_bytes(*e, estimate);
    }
    e->solver->solve(R, X);
  }

  ComplexSparseLu& complex_factor(Complex p) {
    if (CacheEntry* hit = cache.find(p, FactorKind::complex)) return *hit->cplx;
    CacheEntry& e = cache.insert(p, FactorKind::complex, complex_bytes);
    fill_entry(cache, e, p, [&] {
      cvalues.resize(static_cast<std::size_t>(U.nonZeros()));
      std::fill(cvalues.begin(), cvalues.end(), Complex(0.0));
      scatter_add(cvalues.data(), map_A, *A, Complex(1.0));
      scatter_add(cvalues.data(), map_E, *E, p);
      if (!e.cplx) e.cplx = std::make_unique<ComplexSparseLu>(pattern());
      e.cplx->factorize(cvalues.data());
    });
    complex_bytes = e.cplx->memory_bytes();
    cache.set_bytes(e, complex_bytes);
    return *e.cplx;
  }
};

SparseLtiOperator::SparseLtiOperator(const DescriptorSystem& sys, SparseBackend lu) {
  validate(sys);
  require(lu == SparseBackend::klu || lu == SparseBackend::umfpack,
          "SparseLtiOperator: the shifted matrices A + p E need an LU backend, klu or umfpack; "
          "got ",
          to_string(lu));
  impl_ = std::make_unique<Impl>(sys, lu);
  Impl& d = *impl_;
  d.B = Matrix(sys.B);
  d.C = Matrix(sys.C);
  d.D = sys.D_ff;
  d.E_identity = is_identity(*d.E);
  d.symmetric = is_symmetric(*d.A) && (d.E_identity || is_symmetric(*d.E));
  d.try_cholmod = d.symmetric;
  PatternUnion u = union_pattern({&*d.A, &*d.E}, sys.n());
  d.U = std::move(u.pattern);
  d.map_A = std::move(u.maps[0]);
  d.map_E = std::move(u.maps[1]);
}

SparseLtiOperator::~SparseLtiOperator() = default;

std::unique_ptr<LtiOperator> SparseLtiOperator::solver_copy() const {
  return std::make_unique<SparseLtiOperator>(impl_->sys, impl_->backend);
}

Index SparseLtiOperator::n() const {
  return impl_->sys.n();
}
const Matrix& SparseLtiOperator::B() const {
  return impl_->B;
}
const Matrix& SparseLtiOperator::C() const {
  return impl_->C;
}
const Matrix& SparseLtiOperator::D_ff() const {
  return impl_->D;
}
bool SparseLtiOperator::E_is_identity() const {
  return impl_->E_identity;
}
bool SparseLtiOperator::symmetric_pencil() const {
  return impl_->symmetric;
}

namespace {

/// Y = S X or S^T X for a compressed sparse S. S^T X, and S X for a symmetric S, run as one
/// gather pass over S per 8 columns of X (each column of S is a row of S^T): on the rail's E
/// (n = 20209) with 7 columns this took 0.46 ms against Eigen's 0.86 ms, which makes one
/// pass over S per column of X. One or two columns, and S X of an unsymmetric S, go to Eigen.
void sparse_times(const SparseMatrix& S, bool symmetric, const Matrix& X, Matrix& Y,
                  bool transpose) {
  Matrix local;
  Matrix& out = &X == &Y ? local : Y;
  const Index k = X.cols();
  if ((transpose || symmetric) && k >= 3) {
    out.resize(S.cols(), k);
    fused_multiply<double>(S, {{S.valuePtr(), 1.0, X.data(), X.rows()}}, true, nullptr, 0, 0.0,
                           out.data(), out.rows(), k);
  } else if (transpose) {
    out.noalias() = S.transpose() * X;
  } else {
    out.noalias() = S * X;
  }
  if (&X == &Y) Y = std::move(local);
}

}  // namespace

void SparseLtiOperator::apply_A(const Matrix& X, Matrix& Y, bool transpose) const {
  require(X.rows() == n(), "SparseLtiOperator::apply_A: X has ", X.rows(), " rows, expected ", n());
  sparse_times(*impl_->A, impl_->symmetric, X, Y, transpose);
}

void SparseLtiOperator::apply_E(const Matrix& X, Matrix& Y, bool transpose) const {
  require(X.rows() == n(), "SparseLtiOperator::apply_E: X has ", X.rows(), " rows, expected ", n());
  if (impl_->E_identity) {
    if (&X != &Y) Y = X;
    return;
  }
  sparse_times(*impl_->E, impl_->symmetric, X, Y, transpose);
}

void SparseLtiOperator::solve_shifted(double p, const Matrix& R, Matrix& X, bool transpose) {
  require(R.rows() == n(), "SparseLtiOperator: right-hand side has ", R.rows(), " rows, expected ",
          n());
  impl_->solve_real(p, R, X, transpose);
}

void SparseLtiOperator::solve_shifted(Complex p, const ComplexMatrix& R, ComplexMatrix& X,
                                      bool transpose) {
  require(R.rows() == n(), "SparseLtiOperator: right-hand side has ", R.rows(), " rows, expected ",
          n());
  impl_->complex_factor(p).solve(R, X, transpose);
}

bool SparseLtiOperator::shifted_residual_extended(Complex p, const ComplexMatrix& R,
                                                  const ComplexMatrix& X,
                                                  ComplexMatrix& Res) const {
  using LC = std::complex<long double>;
  const Index n = this->n();
  require(R.rows() == n && X.rows() == n && R.cols() == X.cols(),
          "SparseLtiOperator: residual of a ", R.rows(), "x", R.cols(), " right-hand side and a ",
          X.rows(), "x", X.cols(), " solution, expected ", n, " rows each");
  const LC pl(p.real(), p.imag());
  const SparseMatrix& A = *impl_->A;
  const SparseMatrix& E = *impl_->E;
  Res.resize(n, R.cols());
  std::vector<LC> acc(static_cast<std::size_t>(n));
  for (Index j = 0; j < R.cols(); ++j) {
    for (Index i = 0; i < n; ++i) acc[i] = LC(R(i, j).real(), R(i, j).imag());
    // Column k of A and E scaled by x_k (compressed column storage).
    for (Index k = 0; k < n; ++k) {
      const LC x(X(k, j).real(), X(k, j).imag());
      for (SparseMatrix::InnerIterator it(A, k); it; ++it)
        acc[it.row()] -= static_cast<long double>(it.value()) * x;
      const LC px = pl * x;
      if (impl_->E_identity) {
        acc[k] -= px;
      } else {
        for (SparseMatrix::InnerIterator it(E, k); it; ++it)
          acc[it.row()] -= static_cast<long double>(it.value()) * px;
      }
    }
    for (Index i = 0; i < n; ++i)
      Res(i, j) = Complex(static_cast<double>(acc[i].real()), static_cast<double>(acc[i].imag()));
  }
  return true;
}

// =============================================================================================
// SecondOrderLtiOperator

struct SecondOrderLtiOperator::Impl {
  explicit Impl(const SecondOrderSystem& s) : sys(s), M(s.M) {}

  const SecondOrderSystem& sys;
  Compressed M;  // on its own pattern for apply_E (a lumped M has n_q entries, P 3 n_q)
  Matrix B, C, D_ff;
  Index nq = 0;
  bool symmetric = true;  // M, D, K symmetric: S(p)^T = S(p), CHOLMOD applies for p <= 0

  // M, D, K stored on their common pattern P (3 nnz(P) doubles): every product and every
  // shifted matrix is then one streaming pass over P.
  SparseMatrix P;  // pattern of M + D + K; its values are the scratch space of real shifts
  std::vector<double> Mv, Dv, Kv;
  std::shared_ptr<const KluPattern> klu_pattern;  // analysed on the first KLU factorization
  std::unique_ptr<CholmodShared> cholmod;         // analysed on the first CHOLMOD one
  // Bandwidth of P when it is at most kMaxBandwidth (the chain: 1): S(p) is then factorized
  // by LAPACK's band routines (BandFactor) instead of CHOLMOD and KLU; -1 otherwise.
  Index band = -1;
  std::vector<Complex> cvalues;
  std::size_t complex_bytes = 0;
  FactorCache cache;
  Matrix real_r, real_x;  // scratch of the structured solves, kept between calls
  ComplexMatrix complex_r, complex_x;

  const std::shared_ptr<const KluPattern>& pattern() {
    if (!klu_pattern) klu_pattern = std::make_shared<const KluPattern>(P);
    return klu_pattern;
  }

  /// values of S(p) = p^2 M - p D + K on the pattern P.
  template <class T>
  void assemble_S(T p, T* values) const {
    const T p2 = p * p;
    for (std::size_t q = 0; q < Mv.size(); ++q) values[q] = p2 * Mv[q] - p * Dv[q] + Kv[q];
  }

  /// The real factorization of S(p): CHOLMOD for p <= 0 when M, D, K are symmetric (S(p) is
  /// then SPD for a passive system), KLU otherwise or when CHOLMOD finds S(p) not positive
  /// definite; for a banded P (band >= 0) BandFactor instead, SPD first under the same
  /// condition. Exactly one of entry.band / entry.cholmod / entry.klu is set afterwards.
  CacheEntry& real_factor(double p) {
    if (CacheEntry* hit = cache.find(p, FactorKind::real)) return *hit;
    CacheEntry& e = cache.insert(p, FactorKind::real, complex_bytes / 2);
    fill_entry(cache, e, p, [&] {
      assemble_S(p, P.valuePtr());
      if (band >= 0) {  // banded S(p): L D L^T / band Cholesky when SPD, else band LU
        if (!e.band) e.band = std::make_unique<BandFactor>();
        if (symmetric && p <= 0.0) {
          try {
            e.band->factorize(P, P.valuePtr(), band, true);
            return;
          } catch (const NumericalError&) {
            // indefinite: LU with pivoting below
          }
        }
        e.band->factorize(P, P.valuePtr(), band, false);
        return;
      }
      if (symmetric && p <= 0.0) {
        try {
          if (!cholmod) cholmod = std::make_unique<CholmodShared>(P);
          if (!e.cholmod) e.cholmod = std::make_unique<CholmodFactor>(*cholmod);
          e.cholmod->factorize(P);
          e.klu.reset();
          return;
        } catch (const NumericalError&) {
          e.cholmod.reset();  // indefinite: LU with pivoting below
        }
      }
      e.cholmod.reset();
      if (!e.klu) e.klu = std::make_unique<RealSparseLu>(pattern());
      e.klu->factorize(P.valuePtr());
    });
    cache.set_bytes(e, e.band      ? e.band->bytes()
                       : e.cholmod ? e.cholmod->bytes()
                                   : e.klu->memory_bytes());
    return e;
  }

  /// True if the real factor of this entry is a Cholesky-type one (S(p) found SPD).
  static bool spd_factor(const CacheEntry& e) { return e.cholmod || (e.band && e.band->spd()); }

  /// The complex factorization of S(p): for a banded P LAPACK's zgttrf / zgbtrf (BandLu),
  /// else KLU.
  CacheEntry& complex_factor(Complex p) {
    if (CacheEntry* hit = cache.find(p, FactorKind::complex)) return *hit;
    CacheEntry& e = cache.insert(p, FactorKind::complex, complex_bytes);
    fill_entry(cache, e, p, [&] {
      cvalues.resize(static_cast<std::size_t>(P.nonZeros()));
      assemble_S(p, cvalues.data());
      if (band >= 0) {
        if (!e.cband) e.cband = std::make_unique<BandLu<Complex>>();
        e.cband->factorize(P, cvalues.data(), band);
        return;
      }
      if (!e.cplx) e.cplx = std::make_unique<ComplexSparseLu>(pattern());
      e.cplx->factorize(cvalues.data());
    });
    complex_bytes = e.cband ? e.cband->bytes() : e.cplx->memory_bytes();
    cache.set_bytes(e, complex_bytes);
    return e;
  }

  /// The structured solve of (A + p E) X = R (or the transpose); solve_S(r, x) solves
  /// S(p) x = r (or S(p)^T x = r) and may overwrite r.
  ///   forward:   S x1 = (p M - D) b1 - b2,   x2 = b1 - p x1
  ///   transpose: S^T x2 = p b2 - b1,         x1 = b2 - (p M - D)^T x2
  /// X may alias R: each block of R is read before the block of X over it is written.
  template <class T, class Mat, class SolveS>
  void structured_solve(T p, const Mat& R, Mat& X, bool transpose, Mat& r, Mat& x,
                        SolveS&& solve_S) const {
    const Index k = R.cols(), ld = R.rows();
    const T* b1 = R.data();
    const T* b2 = R.data() + nq;
    r.resize(nq, k);
    if (!transpose) {
      if (R.topRows(nq).isZero(0.0)) {
        // b1 = 0, as for every input matrix B = [0; B] of the realisation: r = -b2.
        r = -R.bottomRows(nq);
      } else {
        // For symmetric M and D the product is the same as with the transposes, which runs as
        // a gather (a sum per row in registers) instead of a scatter into r: half the time.
        fused_multiply<T>(P, {{Mv.data(), p, b1, ld}, {Dv.data(), T(-1), b1, ld}}, symmetric, b2,
                          ld, T(-1), r.data(), nq, k);
      }
      solve_S(r, x);
      if (&X != &R) X.resize(2 * nq, k);
      X.bottomRows(nq) = R.topRows(nq) - p * x;
      X.topRows(nq) = x;
    } else {
      r = p * R.bottomRows(nq) - R.topRows(nq);
      solve_S(r, x);
      if (&X != &R) X.resize(2 * nq, k);
      // x1 = b2 - (p M - D)^T x2 straight into the top block (b1 is no longer needed).
      fused_multiply<T>(P, {{Mv.data(), -p, x.data(), nq}, {Dv.data(), T(1), x.data(), nq}}, true,
                        b2, ld, T(1), X.data(), X.rows(), k);
      X.bottomRows(nq) = x;
    }
  }
};

SecondOrderLtiOperator::SecondOrderLtiOperator(const SecondOrderSystem& sys) {
  validate(sys);
  impl_ = std::make_unique<Impl>(sys);
  Impl& d = *impl_;
  d.nq = sys.n();
  const Index nq = d.nq, m = sys.n_inputs(), p = sys.n_outputs();
  d.B = Matrix::Zero(2 * nq, m);
  d.B.bottomRows(nq) = Matrix(sys.B);
  d.C.resize(p, 2 * nq);
  d.C.leftCols(nq) = Matrix(sys.Cp);
  d.C.rightCols(nq) = Matrix(sys.Cv);
  d.D_ff = Matrix::Zero(p, m);
  d.symmetric = is_symmetric(sys.M) && is_symmetric(sys.D) && is_symmetric(sys.K);
  const Compressed D(sys.D), K(sys.K);
  const SparseMatrix& M = *d.M;
  PatternUnion u = union_pattern({&M, &*D, &*K}, nq);
  d.P = std::move(u.pattern);
  const std::size_t nnz = static_cast<std::size_t>(d.P.nonZeros());
  d.Mv.assign(nnz, 0.0);
  d.Dv.assign(nnz, 0.0);
  d.Kv.assign(nnz, 0.0);
  scatter_add(d.Mv.data(), u.maps[0], M, 1.0);
  scatter_add(d.Dv.data(), u.maps[1], *D, 1.0);
  scatter_add(d.Kv.data(), u.maps[2], *K, 1.0);
  // A band this narrow costs O(n_q w^2) per real factorization in the band routines, less than
  // the sparse factorizations' symbolic bookkeeping (see BandFactor); wider bands keep the
  // fill-reducing sparse factorizations.
  constexpr Index kMaxBandwidth = 8;
  const Index w = bandwidth(d.P);
  if (w <= kMaxBandwidth) d.band = w;
}

SecondOrderLtiOperator::~SecondOrderLtiOperator() = default;

std::unique_ptr<LtiOperator> SecondOrderLtiOperator::solver_copy() const {
  return std::make_unique<SecondOrderLtiOperator>(impl_->sys);
}

Index SecondOrderLtiOperator::n() const {
  return 2 * impl_->nq;
}
const Matrix& SecondOrderLtiOperator::B() const {
  return impl_->B;
}
const Matrix& SecondOrderLtiOperator::C() const {
  return impl_->C;
}
const Matrix& SecondOrderLtiOperator::D_ff() const {
  return impl_->D_ff;
}

void SecondOrderLtiOperator::apply_A(const Matrix& X, Matrix& Y, bool transpose) const {
  require(X.rows() == n(), "SecondOrderLtiOperator::apply_A: X has ", X.rows(), " rows, expected ",
          n());
  const Impl& d = *impl_;
  const Index nq = d.nq, k = X.cols(), ld = X.rows();
  Matrix local;
  Matrix& out = &X == &Y ? local : Y;
  out.resize(2 * nq, k);
  const double* x1 = X.data();
  const double* x2 = X.data() + nq;
  if (!transpose) {  // A = [0 I; -K -D]
    out.topRows(nq) = X.bottomRows(nq);
    fused_multiply<double>(d.P, {{d.Kv.data(), -1.0, x1, ld}, {d.Dv.data(), -1.0, x2, ld}},
                           d.symmetric, nullptr, 0, 0.0, out.data() + nq, 2 * nq, k);
  } else {  // A^T = [0 -K^T; I -D^T]
    fused_multiply<double>(d.P, {{d.Kv.data(), -1.0, x2, ld}}, true, nullptr, 0, 0.0, out.data(),
                           2 * nq, k);
    fused_multiply<double>(d.P, {{d.Dv.data(), -1.0, x2, ld}}, true, x1, ld, 1.0, out.data() + nq,
                           2 * nq, k);
  }
  if (&X == &Y) Y = std::move(local);
}

void SecondOrderLtiOperator::apply_E(const Matrix& X, Matrix& Y, bool transpose) const {
  require(X.rows() == n(), "SecondOrderLtiOperator::apply_E: X has ", X.rows(), " rows, expected ",
          n());
  const Impl& d = *impl_;
  const Index nq = d.nq, k = X.cols();
  Matrix local;
  Matrix& out = &X == &Y ? local : Y;
  out.resize(2 * nq, k);
  out.topRows(nq) = X.topRows(nq);
  fused_multiply<double>(*d.M, {{d.M->valuePtr(), 1.0, X.data() + nq, X.rows()}},
                         transpose || d.symmetric, nullptr, 0, 0.0, out.data() + nq, 2 * nq, k);
  if (&X == &Y) Y = std::move(local);
}

void SecondOrderLtiOperator::solve_shifted(double p, const Matrix& R, Matrix& X, bool transpose) {
  require(R.rows() == n(), "SecondOrderLtiOperator: right-hand side has ", R.rows(),
          " rows, expected ", n());
  Impl& d = *impl_;
  CacheEntry& e = d.real_factor(p);
  d.structured_solve(p, R, X, transpose, d.real_r, d.real_x, [&](Matrix& r, Matrix& x) {
    if (e.band) {
      e.band->solve_in_place(r, transpose);
      x.swap(r);
    } else if (e.cholmod) {
      e.cholmod->solve(r, x);  // S(p) symmetric: the transpose is the same solve
    } else {
      e.klu->solve_in_place(r, transpose);
      x.swap(r);
    }
  });
}

void SecondOrderLtiOperator::solve_shifted(Complex p, const ComplexMatrix& R, ComplexMatrix& X,
                                           bool transpose) {
  require(R.rows() == n(), "SecondOrderLtiOperator: right-hand side has ", R.rows(),
          " rows, expected ", n());
  Impl& d = *impl_;
  CacheEntry& e = d.complex_factor(p);
  d.structured_solve(p, R, X, transpose, d.complex_r, d.complex_x,
                     [&](ComplexMatrix& r, ComplexMatrix& x) {
                       if (e.cband)
                         e.cband->solve_in_place(r.data(), static_cast<int>(r.cols()), transpose);
                       else
                         e.cplx->solve_in_place(r, transpose);
                       x.swap(r);
                     });
}

bool SecondOrderLtiOperator::apply_energy_weight(const Matrix& X, Matrix& Y, bool transpose) {
  require(X.rows() == n(), "SecondOrderLtiOperator::apply_energy_weight: X has ", X.rows(),
          " rows, expected ", n());
  Impl& d = *impl_;
  if (!d.symmetric) return false;
  const Index nq = d.nq, k = X.cols();
  if (!transpose) {
    // K positive definite is checked once, by the same factorization the transposed case uses.
    try {
      if (!Impl::spd_factor(d.real_factor(0.0))) return false;
    } catch (const NumericalError&) {
      return false;  // K singular
    }
    Matrix out(2 * nq, k);
    fused_multiply<double>(d.P, {{d.Kv.data(), 1.0, X.data(), X.rows()}}, true, nullptr, 0, 0.0,
                           out.data(), 2 * nq, k);  // K symmetric: the gather form
    out.bottomRows(nq) = X.bottomRows(nq);
    Y = std::move(out);
    return true;
  }
  CacheEntry* e = nullptr;
  try {
    e = &d.real_factor(0.0);
  } catch (const NumericalError&) {
    return false;
  }
  if (!Impl::spd_factor(*e)) return false;  // S(0) = K not positive definite
  Matrix top = X.topRows(nq), x;
  if (e->band) {
    e->band->solve_in_place(top, false);
    x.swap(top);
  } else {
    e->cholmod->solve(top, x);
  }
  Matrix out(2 * nq, k);
  out.topRows(nq) = x;
  out.bottomRows(nq) = X.bottomRows(nq);
  Y = std::move(out);
  return true;
}

}  // namespace mor
