// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/parametric_store.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include <toml++/toml.h>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/parametric_linear.hpp"
#include "experiments/runner/parametric_run.hpp"
#include "experiments/runner/pipeline.hpp"
#include "experiments/runner/results_layout.hpp"
#include "reduction/parametric_lti.hpp"
#include "src/core/errors.hpp"
#include "src/core/timing.hpp"

namespace mor::experiments {

namespace fs = std::filesystem;
using detail::concat;

namespace {

/// The roles /reduction/affine may hold, in the order they are read and exported.
constexpr const char* kRoles[] = {"E", "A", "M", "D", "K", "B", "C", "Cp", "Cv", "Dff"};

/// IoError "results file '<file>' is damaged: <what>" unless ok.
template <class... A>
void require_file(bool ok, const io::ResultsReader& r, const A&... what) {
  if (!ok) throw IoError(concat("results file '", r.path().string(), "' is damaged: ", what...));
}

/// The root attribute of a stored parametric model: its offline configuration.
constexpr const char* kOfflineAttribute = "offline_configuration";

AffineCoefficient coefficient_of(const io::ResultsReader& r, const std::string& path,
                                 const std::string& scale_name, const std::string& factors_name,
                                 const ParameterDomain& d) {
  require_file(r.has_attribute(path, scale_name) && r.has_attribute(path, factors_name), r, path,
               " has no coefficient (attributes ", scale_name, ", ", factors_name, ")");
  AffineCoefficient theta;
  theta.scale = r.attribute_double(path, scale_name);
  require_file(std::isfinite(theta.scale), r, path, ": its ", scale_name, " is not finite");
  const std::string factors = r.attribute_string(path, factors_name);
  std::stringstream names(factors);
  for (std::string name; std::getline(names, name, '*');) {
    const Index j = d.index_of(name);
    require_file(j >= 0, r, path, ": its factor '", name, "' is not a parameter of /parameters");
    theta.factors.push_back(j);
  }
  return theta;
}

}  // namespace

RecordedParametric read_recorded_parametric(const io::ResultsReader& r) {
  const std::string& grp = layout::kReductionAffine;
  require(r.type(grp) == io::ObjectType::group, r.path().string(),
          " records no parametric reduced model (no ", grp,
          "): it is written by a run with [parameters]");
  require_file(r.exists(layout::kParametersNames), r, "no ", layout::kParametersNames, " beside ",
               grp);
  RecordedParametric p;
  const std::vector<std::string> names = r.read_strings(layout::kParametersNames);
  const Vector lo = r.read_finite_vector(layout::kParametersMin);
  const Vector hi = r.read_finite_vector(layout::kParametersMax);
  const Vector log = r.read_finite_vector(layout::kParametersLog);
  const auto n = static_cast<Index>(names.size());
  require_file(lo.size() == n && hi.size() == n && log.size() == n, r, "/parameters holds ", n,
               " names and ", lo.size(), ", ", hi.size(), ", ", log.size(), " bounds and scales");
  std::vector<Parameter> params;
  for (Index j = 0; j < n; ++j)
    params.push_back({names[static_cast<std::size_t>(j)], lo[j], hi[j], log[j] != 0.0});
  try {
    p.domain = ParameterDomain(std::move(params));
  } catch (const InvalidArgument& e) {
    require_file(false, r, "/parameters: ", e.what());
  }
  p.reference = r.exists(layout::kParametersReference)
                    ? r.read_finite_vector(layout::kParametersReference)
                    : p.domain.center();
  require_file(p.reference.size() == n, r, layout::kParametersReference, " has ",
               p.reference.size(), " entries, /parameters/names ", n);
  for (const char* role : kRoles) {
    AffineOperator<Matrix> op;
    for (std::size_t i = 0;; ++i) {
      const std::string path = concat(grp, "/", role, "_", i);
      if (!r.exists(path)) break;
      op.terms.push_back(
          {coefficient_of(r, path, "scale", "factors", p.domain), r.read_finite_matrix(path)});
    }
    if (!op.terms.empty()) p.terms.emplace_back(role, std::move(op));
  }
  require_file(!p.terms.empty(), r, grp, " holds no terms");
  if (r.has_attribute(grp, "force_scale"))
    p.force = coefficient_of(r, grp, "force_scale", "force_factors", p.domain);
  return p;
}

std::vector<io::NamedMatrix> recorded_parametric_export(const RecordedParametric& p) {
  const ParameterDomain& d = p.domain;
  std::vector<io::NamedMatrix> vars;
  const auto suffix = [&](const std::vector<Index>& factors) {
    std::string s;
    for (Index j : factors) s += (s.empty() ? "" : "__") + d.parameters()[std::size_t(j)].name;
    return s;
  };
  for (const auto& [role, op] : p.terms) {
    const std::string name = role == "Dff" ? "D" : role;
    // The constant part first (zero if every term has a parameter), then one sum per product.
    Matrix base = Matrix::Zero(op.terms[0].value.rows(), op.terms[0].value.cols());
    std::vector<std::pair<std::string, Matrix>> by_product;
    for (const auto& t : op.terms) {
      if (t.theta.factors.empty()) {
        base += t.theta.scale * t.value;
        continue;
      }
      const std::string key = suffix(t.theta.factors);
      auto it = std::find_if(by_product.begin(), by_product.end(),
                             [&](const auto& b) { return b.first == key; });
      if (it == by_product.end())
        by_product.emplace_back(key, t.theta.scale * t.value);
      else
        it->second += t.theta.scale * t.value;
    }
    vars.push_back({name, base});
    for (auto& [key, value] : by_product) vars.push_back({name + "_" + key, std::move(value)});
  }
  for (Index j = 0; j < d.size(); ++j) {
    const Parameter& q = d.parameters()[static_cast<std::size_t>(j)];
    Matrix row(1, 4);
    row << q.min, q.max, q.log ? 1.0 : 0.0, p.reference[j];
    vars.push_back({"parameter_" + q.name, row});
  }
  if (p.force) {
    const std::string key = suffix(p.force->factors);
    vars.push_back(
        {key.empty() ? "force" : "force_" + key, Matrix::Constant(1, 1, p.force->scale)});
  }
  return vars;
}

std::shared_ptr<const ParametricLtiModel> read_parametric_lti(const io::ResultsReader& r) {
  RecordedParametric p = read_recorded_parametric(r);
  require(!p.force, r.path().string(),
          " records a projected nonlinear model's parametric model (POD + hyper-reduction), "
          "which is not read back yet; only the linear methods' (bt, irka, sobt, pod of LTI "
          "models)");
  AffineOperator<Matrix> feedthrough;
  std::vector<std::pair<std::string, AffineOperator<Matrix>>> terms;
  for (auto& [role, op] : p.terms) {
    if (role == "Dff")
      feedthrough = std::move(op);
    else
      terms.emplace_back(role, std::move(op));
  }
  try {
    return std::make_shared<const ParametricLtiModel>(std::move(p.domain), std::move(terms),
                                                      std::move(feedthrough));
  } catch (const InvalidArgument& e) {
    throw IoError(concat("results file '", r.path().string(), "' is damaged: ", e.what()));
  }
}

std::string offline_configuration(const ExperimentConfig& c) {
  toml::table t = toml::parse(c.toml);
  for (const char* table : {"experiment", "input", "validation", "analysis"}) t.erase(table);
  std::ostringstream os;
  os << t;
  return os.str();
}

std::string configuration_hash(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (const unsigned char ch : text) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

StoredParametricModel stored_parametric_model(const ExperimentConfig& c, const fs::path& folder,
                                              const std::string& study, bool build, bool* built) {
  require(!c.parameters.empty() && reduction_family(c) == ReductionMethod::Family::linear &&
              c.reduction->parametric_for(*c.model),
          c.source,
          ": a parametric sweep study needs a linear method's parametric model "
          "(reduction.method = \"bt\", \"irka\", \"sobt\" or \"pod\" of an LTI model, with "
          "[parameters]); reduction.method = \"",
          c.reduction->name(), "\" of model.type = \"", c.model->kind(),
          "\" is not stored and reused yet");
  const std::string offline = offline_configuration(c);
  StoredParametricModel s;
  s.hash = configuration_hash(offline);
  s.file = folder / concat("parametric-", study, "-", s.hash, ".h5");
  if (built != nullptr) *built = false;
  const auto read_back = [&]() -> bool {
    std::error_code error;
    if (!fs::is_regular_file(s.file, error)) return false;
    try {
      const io::ResultsReader r(s.file);
      if (!r.has_attribute(layout::kRoot, kOfflineAttribute) ||
          r.attribute_string(layout::kRoot, kOfflineAttribute) != offline)
        return false;  // a collision of the hash or a foreign file: built again
      s.model = read_parametric_lti(r);
      s.offline_seconds = r.attribute_double(layout::kReduction, "seconds");
      return true;
    } catch (const IoError&) {
      return false;  // unreadable (a kill while it was renamed cannot leave one): built again
    }
  };
  if (read_back()) return s;
  require(build, "the stored parametric model ", s.file.string(),
          " is missing or does not match the study's offline configuration");
  {
    io::ResultsWriter out(s.file);
    record_provenance(out, concat(c.name, " (parametric model)"), c.description, c.source, c.toml,
                      "");
    out.set_attribute(layout::kRoot, "kind", std::string(kParametricModelKind));
    out.set_attribute(layout::kRoot, kOfflineAttribute, offline);
    ExperimentConfig offline_c = c;  // the model's own point is the center, as for mor run
    offline_c.run_point = Vector();
    offline_c.stored_parametric.reset();
    out.create_group(layout::kModel);  // the model at the center, as a run records it
    out.set_attribute(layout::kModel, "type", std::string(c.model->kind()));
    offline_c.run_model()->record(out);
    record_parameters(offline_c, out);
    const ReducedModel reduced = reduce_linear_parametric(offline_c, nullptr);
    write_reduction(out, reduced.summary);
    out.commit();
  }
  if (!read_back())
    throw IoError(
        concat("the parametric model just stored in '", s.file.string(), "' does not read back"));
  if (built != nullptr) *built = true;
  return s;
}

ReducedModel stored_model_at(const ExperimentConfig& c) {
  const StoredParametricModel& s = *c.stored_parametric;
  const auto t0 = Clock::now();
  ReducedModel m = reduced_model_at(*s.model, c.run_point);
  const double seconds = seconds_since(t0);
  const std::optional<double> abscissa = m.summary.spectral_abscissa;
  ReductionSummary& summary = m.summary = ReductionSummary(std::string(c.reduction->name()));
  summary.r = s.model->r();
  summary.spectral_abscissa = abscissa;
  summary.seconds = seconds;
  summary.stages = {{"evaluation_s", seconds}, {"parametric_model_s", s.offline_seconds}};
  const std::string& grp = layout::kReduction;
  summary.details.set_attribute(grp, "parametric_model", s.file.filename().string());
  summary.details.set_attribute(grp, "parametric_model_hash", s.hash);
  summary.details.set_attribute(grp, "evaluated_at", s.model->domain().describe(c.run_point));
  if (s.model->second_order())
    record_reduced_second_order(summary.details, m.second_order);
  else
    record_reduced_first_order(summary.details, m.first_order->E(), m.first_order->A(),
                               m.first_order->B(), m.first_order->C(), m.first_order->D_ff());
  return m;
}

}  // namespace mor::experiments
