// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/parameters.hpp"

#include <cmath>
#include <limits>
#include <ostream>

#include "src/core/errors.hpp"

namespace mor::experiments {

using detail::concat;

ParameterDomain read_parameters(const toml::table* table, const std::string& source) {
  if (table == nullptr) return {};
  std::vector<Parameter> params;
  for (const auto& [k, node] : *table) {
    const std::string name(k.str());
    const std::string key = "parameters." + name;
    const toml::table* sub = node.as_table();
    require(sub != nullptr, located(source, node), ": ", key,
            " must be a table { min = ..., max = ... } (optionally scale = \"log\")");
    TableReader r(sub, key, source);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    Parameter p;
    p.name = name;
    p.min = r.real("min", nan);
    p.max = r.real("max", nan);
    const std::string scale = r.text("scale", "linear");
    r.finish();
    require(r.given("min") && r.given("max"), located(source, node), ": ", key,
            " needs both min and max");
    require(scale == "linear" || scale == "log", r.where("scale"), ": ", key,
            ".scale must be \"linear\" or \"log\", got \"", scale, "\"");
    p.log = scale == "log";
    params.push_back(std::move(p));
  }
  try {
    return ParameterDomain(std::move(params));
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(concat(located(source, *table), ": ", e.what()));
  }
}

Matrix points_in_domain(const ParameterDomain& d, const std::vector<std::vector<double>>& points,
                        const std::string& where, const std::string& key) {
  const Index p = d.size();
  std::string names;
  for (const std::string& name : d.names()) names += (names.empty() ? "" : ", ") + name;
  Matrix X(static_cast<Index>(points.size()), p);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::vector<double>& row = points[i];
    require(static_cast<Index>(row.size()) == p, where, ": ", key, "[", i + 1, "] has ", row.size(),
            " values; [parameters] names ", p, " (", names, ", in this order)");
    const Vector mu = Eigen::Map<const Vector>(row.data(), p);
    try {
      d.check(mu, concat(key, "[", i + 1, "]"));
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(concat(where, ": ", e.what()));
    }
    X.row(static_cast<Index>(i)) = mu.transpose();
  }
  return X;
}

Matrix training_set(const ParameterDomain& d, const std::vector<std::vector<double>>& points,
                    Index samples, Index seed, const std::string& where, const std::string& key) {
  if (!points.empty()) return points_in_domain(d, points, where, key);
  return d.sample(samples, static_cast<std::uint64_t>(seed));
}

void write_parameters(std::ostream& os, const ParameterDomain& domain) {
  if (domain.empty()) return;
  os << "\n[parameters]\n";
  for (const Parameter& p : domain.parameters())
    os << p.name << " = { min = " << concat(p.min) << ", max = " << concat(p.max) << ", scale = \""
       << (p.log ? "log" : "linear") << "\" }\n";
}

void parameter_key_rows(std::vector<KeyDoc>& rows) {
  rows.push_back({"parameters", "<name>.min", "number", "", "",
                  "the lower bound of the parameter <name>, a [model] key the model's operators "
                  "are affine in (mass_spring_chain, lattice: m, k_l, k_n, and d or alpha and "
                  "beta)",
                  ""});
  rows.push_back({"parameters", "<name>.max", "number", "", "",
                  "the upper bound, above min; the key is then not given in [model]", ""});
  rows.push_back({"parameters", "<name>.scale", "string", "\"linear\"", "",
                  "linear, or log (sampled uniformly in log <name>; min > 0)", ""});
}

}  // namespace mor::experiments
