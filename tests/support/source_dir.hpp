// SPDX-License-Identifier: GPL-3.0-or-later
// The repository's root, for tests that read its data/ and experiments/: MOR_SOURCE_DIR (ctest
// sets it), else the root this header sits in.
#pragma once

#include <cstdlib>
#include <filesystem>

namespace mor::testing {

inline std::filesystem::path source_dir() {
  if (const char* root = std::getenv("MOR_SOURCE_DIR")) return root;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

}  // namespace mor::testing
