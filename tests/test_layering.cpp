// SPDX-License-Identifier: GPL-3.0-or-later
// The folders depend only downward: src <- models <- reduction <- experiments. Every project
// include names its folder ("src/...", "models/..."), so the rule is checked on the sources.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;

TEST(Layering, FoldersIncludeOnlyDownward) {
  const char* root_env = std::getenv("MOR_SOURCE_DIR");
  ASSERT_NE(root_env, nullptr) << "MOR_SOURCE_DIR is set by ctest";
  const fs::path root(root_env);
  const std::vector<std::string> order = {"src", "models", "reduction", "experiments"};
  const std::regex include_re(R"re(^\s*#\s*include\s+"([a-z_]+)/)re");
  int files = 0;
  for (std::size_t level = 0; level < order.size(); ++level) {
    if (!fs::exists(root / order[level])) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / order[level])) {
      const auto ext = entry.path().extension();
      if (ext != ".hpp" && ext != ".cpp" && ext != ".h") continue;
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      int lineno = 0;
      while (std::getline(in, line)) {
        ++lineno;
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        const auto it = std::find(order.begin(), order.end(), m[1].str());
        if (it == order.end()) continue;
        const auto target = static_cast<std::size_t>(it - order.begin());
        EXPECT_LE(target, level) << entry.path() << ":" << lineno << " includes upward: " << line;
      }
    }
  }
  EXPECT_GT(files, 0);
}
