// SPDX-License-Identifier: GPL-3.0-or-later
// Running the `mor` program from a test: the binary ctest built (MOR_BINARY_DIR), commands run
// in the test's own folder, stdout and stderr captured together.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/temp_dir.hpp"

namespace mor::testing {

struct Outcome {
  int exit_code;
  std::string output;  // stdout and stderr
};

class MorCliTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    const char* bin = std::getenv("MOR_BINARY_DIR");
    ASSERT_NE(bin, nullptr) << "MOR_BINARY_DIR is set by ctest";
    mor_ = std::filesystem::path(bin) / "bin" / "mor";
    ASSERT_TRUE(std::filesystem::exists(mor_)) << mor_;
  }
  Outcome mor(const std::string& args) const { return shell("'" + mor_.string() + "' " + args); }

  /// Runs a shell command in the test folder; stdout and stderr together.
  Outcome shell(const std::string& command) const {
    const std::string cmd = "cd '" + dir_.string() + "' && " + command + " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string out;
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), buf.size(), pipe)) out += buf.data();
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  }

  std::filesystem::path mor_;
};

inline void expect_contains(const Outcome& o, const std::string& needle) {
  EXPECT_NE(o.output.find(needle), std::string::npos)
      << "expected '" << needle << "' in the output:\n"
      << o.output;
}

}  // namespace mor::testing
