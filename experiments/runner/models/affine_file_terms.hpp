// SPDX-License-Identifier: GPL-3.0-or-later
// What the file kinds (file.cpp, network.cpp) share of a file's affine terms X_<name>
// (src/io/model_files.hpp: find_affine_terms, read_affine_terms): the terms found when the file
// is read, their values read once when the model is first needed at a parameter, the parameters
// they name, and X(mu) = X + sum_name mu_name X_<name> as an AffineOperator.
#pragma once

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "src/core/errors.hpp"
#include "src/io/model_files.hpp"
#include "src/systems/parametric.hpp"

namespace mor::experiments {

/// The affine terms of a file, read once (by the first request, from any thread).
struct AffineTermCache {
  io::ModelFileSpec spec;
  io::ModelReport report;
  std::vector<io::AffineTerm> terms;  ///< names from find_affine_terms; values once read
  std::once_flag once;
  std::exception_ptr error;

  /// The terms with their values. @throws as io::read_affine_terms (every later call too).
  const std::vector<io::AffineTerm>& read() {
    std::call_once(once, [&] {
      try {
        io::read_affine_terms(spec, report, terms);
      } catch (...) {
        error = std::current_exception();
      }
    });
    if (error) std::rethrow_exception(error);
    return terms;
  }

  /// The parameters the terms name, sorted, each once.
  std::vector<std::string> parameters() const {
    std::set<std::string> names;
    for (const io::AffineTerm& t : terms) names.insert(t.parameter);
    return {names.begin(), names.end()};
  }
};

/// The terms found in a file read by `spec` (null if none).
inline std::shared_ptr<AffineTermCache> find_affine_term_cache(const io::ModelFileSpec& spec,
                                                               const io::ModelReport& report) {
  std::vector<io::AffineTerm> found = io::find_affine_terms(spec, report);
  if (found.empty()) return nullptr;
  auto cache = std::make_shared<AffineTermCache>();
  cache->spec = spec;
  cache->report = report;
  cache->terms = std::move(found);
  return cache;
}

/// "" if `name` is a parameter of the file `file` (its terms: null for none), else why not.
inline std::string file_parameter_refusal(const AffineTermCache* terms, const std::string& file,
                                          const std::string& name) {
  const std::vector<std::string> found = terms ? terms->parameters() : std::vector<std::string>{};
  if (std::find(found.begin(), found.end(), name) != found.end()) return "";
  if (found.empty())
    return detail::concat("the model file ", file, " has no affine terms (a matrix X_", name,
                          " beside X, e.g. K_", name, " for K(", name, ") = K + ", name, " K_",
                          name, ")");
  std::string list;
  for (const auto& n : found) list += (list.empty() ? "" : ", ") + n;
  return detail::concat("the model file ", file, " has no affine term X_", name,
                        "; its parameters are ", list);
}

/// base + sum over the terms of `role` whose parameter is in `domain`: mu_j X_<name_j>.
template <class X>
AffineOperator<X> with_terms(const X& base, const std::string& role,
                             const std::vector<io::AffineTerm>& terms,
                             const ParameterDomain& domain) {
  AffineOperator<X> op;
  op.terms.push_back({AffineCoefficient{}, base});
  for (const io::AffineTerm& t : terms) {
    const Index j = domain.index_of(t.parameter);
    if (t.role != role || j < 0) continue;
    X value;
    value = t.value;
    op.terms.push_back({AffineCoefficient{1.0, {j}}, std::move(value)});
  }
  return op;
}

/// /model's affine_terms attribute: "K_k (K, k), D_d (D, d)".
inline std::string describe_affine_terms(const AffineTermCache& terms) {
  std::string found;
  for (const io::AffineTerm& t : terms.terms)
    found +=
        detail::concat(found.empty() ? "" : ", ", t.variable, " (", t.role, ", ", t.parameter, ")");
  return found;
}

}  // namespace mor::experiments
