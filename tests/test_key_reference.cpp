// SPDX-License-Identifier: GPL-3.0-or-later
// The key reference (`mor keys`, docs/keys.md) against the reader: every key an experiment
// stores in its effective configuration is documented, under its table and variant; every
// documented key is accepted by the reader with its documented default; the registries'
// model kinds, methods and signal types each have their variant in the reference. That
// docs/keys.md is the current `mor keys --markdown` is the test docs_keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <toml++/toml.h>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/experiment_keys.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "src/core/errors.hpp"
#include "support/source_dir.hpp"
#include "support/temp_dir.hpp"

namespace mor::experiments {
namespace {

namespace fs = std::filesystem;
using KeyReference = testing::TempDirTest;

using testing::source_dir;

bool documented(const std::vector<KeyDoc>& rows, const std::string& table, const std::string& key,
                const std::string& variant) {
  return std::any_of(rows.begin(), rows.end(), [&](const KeyDoc& r) {
    return r.table == table && r.name == key && (r.variant.empty() || r.variant == variant);
  });
}

/// The variant a stored table is in: type = "..." or method = "...", "" for none.
std::string variant_of(const toml::table& t) {
  for (const char* selector : {"type", "method"})
    if (const auto v = t[selector].value<std::string>())
      return std::string(selector) + " = \"" + *v + "\"";
  return "";
}

TEST_F(KeyReference, EveryStoredKeyOfTheExampleExperimentsIsDocumented) {
  ASSERT_FALSE(source_dir().empty()) << "MOR_SOURCE_DIR unset";
  const auto rows = experiment_key_reference();
  int files = 0;
  for (const char* name :
       {"default", "chain_simulation", "bt_chain", "bt_chain_light", "sobt_chain", "pod_deim_chain",
        "empirical_bt_chain", "rail_bt", "cdplayer_bt"}) {
    const fs::path file = source_dir() / "experiments" / (std::string(name) + ".toml");
    if (!fs::exists(file)) continue;
    const ExperimentConfig c = load_experiment(file);
    const toml::table stored = toml::parse(c.toml);
    for (const auto& [table_key, node] : stored) {
      const std::string table(table_key.str());
      const auto check = [&](const toml::table& t) {
        const std::string variant = variant_of(t);
        for (const auto& [key, value] : t)
          EXPECT_TRUE(documented(rows, table, std::string(key.str()), variant))
              << name << ".toml stores " << table << "." << key.str() << " (" << variant
              << ") but `mor keys` does not document it";
      };
      if (const auto* t = node.as_table()) check(*t);
      if (const auto* a = node.as_array())
        for (const auto& e : *a)
          if (const auto* t = e.as_table()) check(*t);
    }
    ++files;
  }
  EXPECT_GE(files, 5);
}

// Each documented key, set to its documented default on a small valid experiment (its variant
// selected), is read: never "unknown key". Tables without variants must also stay valid.
TEST_F(KeyReference, EveryDocumentedKeyIsReadWithItsDefault) {
  const auto rows = experiment_key_reference();
  std::ofstream(dir_ / "u.csv") << "0, 0\n1, 1\n";
  const std::string base = "[simulation]\nt_end = 1\n[output]\nplots = false\n";
  int checked = 0;
  for (const auto& r : rows) {
    if (r.table == "training") continue;  // the keys of [input], checked below to be the same
    // A parametric experiment's tables need [parameters], [[training]] and pod: their keys are
    // read in test_parametric_experiment (EveryDocumentedParametricKeyIsRead).
    if (r.table == "parameters" || r.table == "validation") continue;
    std::vector<std::string> overrides;
    const std::string selector = r.variant.substr(0, r.variant.find(' '));
    const std::string chosen =
        r.variant.empty() ? "" : r.variant.substr(r.variant.find('"'));  // "\"sine\""
    // A variant selected in another table (model.type = "pendulum", "bricard", ...): its first.
    const bool other_table = selector.find('.') != std::string::npos;
    if (other_table)
      overrides.push_back(selector + "=" + chosen.substr(0, chosen.find('"', 1) + 1));
    else if (!r.variant.empty())
      overrides.push_back(r.table + "." + selector + "=" + chosen);
    if (!other_table && (r.table != "model" || r.variant == "type = \"mass_spring_chain\""))
      for (const char* chain : {"model.N=6", "model.k_n=0"}) overrides.push_back(chain);
    if (r.table == "reduction" && r.name != "order" && r.name != "method" &&
        r.variant != "method = \"none\"")
      overrides.push_back("reduction.order=2");
    if (r.table == "input" && r.variant == "type = \"table\"" && r.name != "file")
      overrides.push_back("input.file=\"u.csv\"");
    if (!(r.table == "model" && r.name == "type") &&
        !(r.table == "reduction" && r.name == "method") &&
        !(r.table == "input" && r.name == "type"))
      overrides.push_back(r.table + "." + r.name + "=" + r.default_value);
    try {
      parse_experiment(base, "keys.toml", dir_, overrides);
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find("unknown key"), std::string::npos)
          << r.table << "." << r.name << " (" << r.variant
          << ") is documented but not read: " << what;
      // Without a variant, or in the chain's and the input's variants, the default must be
      // valid on this base; other kinds and methods may need more (a file, training runs).
      // A path whose default is empty is a required key (e.g. input.file of a table).
      const bool required = r.type == "path" && r.default_value == "''";
      const bool must_parse = !required && (r.variant.empty() || r.table == "input" ||
                                            r.variant == "type = \"mass_spring_chain\"");
      EXPECT_FALSE(must_parse) << r.table << "." << r.name << " = " << r.default_value << " ("
                               << r.variant << "): " << what;
    }
    ++checked;
  }
  EXPECT_GT(checked, 60);
}

TEST_F(KeyReference, EveryRegisteredKindMethodAndSignalHasItsVariant) {
  const auto rows = experiment_key_reference();
  std::set<std::string> variants;
  for (const auto& r : rows) variants.insert(r.table + ": " + r.variant);
  // A kind with [model] keys has them under type = "<kind>"; a kind without any (the multibody
  // benchmarks) has its own keys of other tables under model.type = "...", "<kind>", ...
  for (const auto& k : model_kinds()) {
    const std::string quoted = "\"" + std::string(k.name) + "\"";
    const bool own_model_keys = variants.count("model: type = " + quoted) > 0;
    const bool own_other_keys = std::any_of(rows.begin(), rows.end(), [&](const KeyDoc& r) {
      return r.variant.rfind("model.type = ", 0) == 0 &&
             r.variant.find(quoted) != std::string::npos;
    });
    EXPECT_TRUE(own_model_keys || own_other_keys) << "model kind " << k.name;
  }
  for (const auto& m : reduction_methods()) {
    if (m.name == "none") continue;
    EXPECT_TRUE(variants.count("reduction: method = \"" + std::string(m.name) + "\""))
        << "method " << m.name;
  }
  for (const auto& t : kSignalTypes) {
    if (t.name == "zero") continue;
    for (const char* table : {"input", "training"})
      EXPECT_TRUE(variants.count(std::string(table) + ": type = \"" + std::string(t.name) + "\""))
          << table << " type " << t.name;
  }
}

}  // namespace
}  // namespace mor::experiments
