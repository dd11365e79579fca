// SPDX-License-Identifier: GPL-3.0-or-later
// LTI models in interchange files: import of first-order (E, A, B, C, D) and second-order
// (M, D, K, B, Cp, Cv) systems from MATLAB .mat files (v4, v5, v7.3) or MatrixMarket files, with
// a structure report; export of systems and extra matrices (projection bases, Hankel singular
// values, ...) to the same formats. The file layer is src/io/matrix_files.hpp.
//
// Roles and the variable names looked up by default (MORwiki / Oberwolfach / M-M.E.S.S.):
//   first order   E x' = A x + B u,  y = C x + D u
//                 E (optional: identity), A, B, C, D (feed-through, optional: zero)
//   second order  M q'' + D q' + K q = B u,  y = Cp q + Cv q'
//                 M, D (damping, optional: zero; if there is no "D" but an "E", E is taken: the
//                 MORwiki second-order files name damping E), K, B, Cp (or "C"), Cv (optional:
//                 zero; Cp may be absent when Cv is given)
// A variable stored as an empty 0x0 array counts as absent.
//
// Errors: IoError for missing, unreadable, foreign or broken files; InvalidArgument for files
// whose content does not make a model (absent variables, wrong sizes, NaN/Inf, no inputs or
// outputs, n = 0). Each message is one line naming the file, the variable and the sizes/values.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "src/core/types.hpp"
#include "src/io/matrix_files.hpp"
#include "src/systems/lti.hpp"

namespace mor::io {

enum class ModelForm { automatic, first_order, second_order };
/// "automatic", "first_order", "second_order".
std::string_view to_string(ModelForm form);
/// Inverse of to_string; @throws InvalidArgument naming the value and the accepted names.
ModelForm parse_model_form(std::string_view name);

/// Where a model is and how to read it.
struct ModelFileSpec {
  /// A .mat file, or a MatrixMarket prefix P: matrix X is the first existing of P.X.mtx, P_X.mtx
  /// and P.X (the Oberwolfach naming, no extension). May be empty when files lists every matrix.
  std::filesystem::path path;
  /// MatrixMarket files given one by one: matrix name -> file (taking precedence over the prefix).
  std::map<std::string, std::filesystem::path> files;
  /// role -> name of the variable (MAT) or matrix (MatrixMarket) to read, overriding the
  /// default names; a role given here must exist.
  std::map<std::string, std::string> variables;
  /// automatic: second order if M and K exist and A does not; first order if A exists.
  ModelForm form = ModelForm::automatic;
};

enum class Verdict { yes, no, unknown };
std::string_view to_string(Verdict v);

/// What was found for one role.
struct MatrixReport {
  std::string role;                     ///< "E", "A", ... as in the table above
  bool present = false;                 ///< false: absent, filled by its default (identity or zero)
  std::string name;                     ///< variable (MAT) or matrix (MatrixMarket) name read
  std::filesystem::path source;         ///< the file it was read from
  Index rows = 0, cols = 0, nnz = 0;    ///< nnz: nonzero entries (stored entries of sparse ones)
  bool stored_sparse = false;           ///< a MAT sparse variable or a MatrixMarket coordinate file
  std::string stored_class;             ///< MAT class or MatrixMarket field (matrix_files.hpp)
  bool symmetric = false;               ///< square and A == A^T exactly
  bool symmetric_to_tolerance = false;  ///< square and max|A - A^T| <= 1e-14 max|A|
  /// E and M only: a Cholesky factorization (CHOLMOD) succeeded; unknown unless symmetric to
  /// tolerance (and for the other roles).
  Verdict positive_definite = Verdict::unknown;
};

struct ModelReport {
  std::string file;  ///< the .mat file or MatrixMarket prefix (or first listed file), for messages
  ModelForm form = ModelForm::automatic;  ///< first_order or second_order after import
  Index n = 0, m = 0, p = 0;              ///< states (coordinates), inputs, outputs
  std::vector<MatrixReport> matrices;     ///< one per role, in the order of the table above
  /// First order: E was absent (the identity was stored) or is exactly the identity.
  bool E_is_identity = false;
  std::vector<std::string> defaults;  ///< defaults and fallback names taken, one line each
  std::vector<std::string> warnings;  ///< e.g. damping taken from the variable E

  /// The report of role, or nullptr.
  const MatrixReport* find(std::string_view role) const;
};

struct ImportedModel {
  std::variant<DescriptorSystem, SecondOrderSystem> system;
  ModelReport report;
};

/// Reads, checks and reports a model (see the header comment for roles, defaults and errors).
/// Checks: square E/A/M/D/K; B rows = n, C (Cp, Cv) columns = n, D = p x m; no NaN/Inf (the
/// first bad entry is named, 1-based); at least one input and one output; n >= 1.
/// E (or M) is not checked for singularity here: see check_nonsingular.
ImportedModel import_model(const ModelFileSpec& spec);

/// An affine term of a model file: X(mu) = X + sum_name mu_name X_<name>, the role X read from
/// the variable (or MatrixMarket matrix) v, its term from v_<name> (e.g. K and K_k, damping D and
/// D_d; MatrixMarket P.K_k.mtx).
struct AffineTerm {
  std::string role;       ///< "K", "A", ... as the report names it
  std::string parameter;  ///< <name>
  std::string variable;   ///< v_<name>
  SparseMatrix value;     ///< read by read_affine_terms
};
/// The affine terms the file holds for the roles present in report, names only (nothing read):
/// every name v_<name> of the file, v a role's variable and <name> a letter followed by letters,
/// digits and underscores. Sorted by role, then parameter.
std::vector<AffineTerm> find_affine_terms(const ModelFileSpec& spec, const ModelReport& report);
/// Reads and checks the terms find_affine_terms listed: each the shape of its role's matrix,
/// every entry finite.
/// @throws IoError for an unreadable file; InvalidArgument naming the file, the variable, its
///         size and the role's size, or the first non-finite entry (1-based).
void read_affine_terms(const ModelFileSpec& spec, const ModelReport& report,
                       std::vector<AffineTerm>& terms);

/// A nonlinear second-order network (src/systems/nonlinear_network.hpp) in the same files:
/// the second-order roles (M, D, K, B, Cp, Cv, as import_model reads them) plus G (m x n, the
/// element quantities s = G q) and phi (m x 4 or 1 x 4: the coefficients of s^2, s^3, s^4, s^5
/// per element or for all). G and phi absent together: a linear network (m = 0).
struct ImportedNetwork {
  SecondOrderSystem system;
  SparseMatrix G;  ///< m x n (0 x n if absent)
  Matrix phi;      ///< m x 4 or 1 x 4 (0 x 4 if absent)
  ModelReport report;
};
/// @throws as import_model; InvalidArgument for G without phi or phi without G, G with another
///         column count than n, phi with other than 4 columns or other than 1 or m rows, or a
///         non-finite entry (named, 1-based), an empty row of G (an element acting on no
///         coordinate; named, or counted when G stores fewer entries than it has rows); IoError
///         when the elements G's header declares (its rows) need more memory to build than this
///         process may use (kNetworkBuildBytesPerElement each), before G is read.
ImportedNetwork import_network(const ModelFileSpec& spec);

/// Bytes per element (row of G) of building a network (its m x 4 coefficients, G^T's column
/// pointers, the reading) and of a run on it (the workspace's s = G q, phi and phi', the force
/// evaluations), besides G's entries. Measured peaks at m = 10^7 elements over n = 20: 41 and
/// 69 bytes per element (a run without reduction). For the checks before G is read and before a
/// run starts (experiments/runner/estimates.hpp).
inline constexpr double kNetworkBuildBytesPerElement = 48;
inline constexpr double kNetworkRunBytesPerElement = 80;

/// A few lines: form, sizes, and per role its source, size, storage, nnz and structure.
std::string describe(const ModelReport& report);

/// Sparse LU (KLU) of E, plus a condition estimate from one solve with a random +-1 right-hand
/// side. Only methods for ODE systems need this; the caller decides.
/// @throws InvalidArgument "<file>: E is singular (a differential-algebraic system, ...): methods
///         for ODE systems cannot use it (E is n x n; <reason>)" when a pivot is zero or the
///         estimate of cond_1(E) exceeds 1e14.
void check_nonsingular(const DescriptorSystem& sys, const std::string& file);
/// The same for the mass matrix M of a second-order system.
void check_nonsingular(const SecondOrderSystem& sys, const std::string& file);

enum class ModelFileFormat {
  mat_v5,         ///< one .mat file (MATLAB 5, compressed; scipy.io.loadmat reads it)
  mat_v73,        ///< one .mat file (MATLAB 7.3, HDF5)
  matrix_market,  ///< a prefix P: one file P.X.mtx per matrix X
};
/// "mat", "mat73", "mtx".
std::string_view to_string(ModelFileFormat format);
/// Inverse of to_string; @throws InvalidArgument naming the value and the accepted names.
ModelFileFormat parse_model_file_format(std::string_view name);

/// Writes sys as variables E, A, B, C, D (D = D_ff, dense) plus extras, into the .mat file out or
/// the MatrixMarket files out.E.mtx, out.A.mtx, ... . E and A are stored sparse; B and C dense
/// when at least half of their entries are nonzero, sparse otherwise. Files are replaced
/// atomically (matrix_files.hpp). import_model reads the result back exactly.
/// @throws InvalidArgument if sys is inconsistent (mor::validate) or an extra's name is invalid
///         or repeats a system variable; IoError if writing fails.
void export_model(const std::filesystem::path& out, const DescriptorSystem& sys,
                  ModelFileFormat format, const std::vector<NamedMatrix>& extras = {});
/// Writes sys as variables M, D (damping), K, B, Cp, Cv plus extras, as above (M, D, K sparse).
void export_model(const std::filesystem::path& out, const SecondOrderSystem& sys,
                  ModelFileFormat format, const std::vector<NamedMatrix>& extras = {});
/// Writes named matrices alone (e.g. V, W and the Hankel singular values of a reduction).
void export_matrices(const std::filesystem::path& out, const std::vector<NamedMatrix>& matrices,
                     ModelFileFormat format);

}  // namespace mor::io
