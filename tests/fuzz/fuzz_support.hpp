// SPDX-License-Identifier: GPL-3.0-or-later
// Shared by the libFuzzer targets (scripts/run_fuzz.sh builds and runs them): a scratch folder
// of this process for the inputs that must be files, and the verdict on an exception. The
// program turns InvalidArgument and IoError into a one-line message and exit 2 (bad input), so
// those are the expected outcomes of a malformed file; any other exception would reach the user
// as exit 1 "anything else", so the targets let it escape, and libFuzzer reports it as a crash.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "src/core/errors.hpp"

namespace mor::fuzz {

/// A folder of this process, created once (under TMPDIR, else /dev/shm or /tmp) and removed at
/// exit. Never destroyed itself, so that the exit-time removal can still name it.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::filesystem::path base = tmp != nullptr ? tmp : "/dev/shm";
    if (!std::filesystem::is_directory(base)) base = "/tmp";
    auto* d = new std::filesystem::path(base / ("mor_fuzz_" + std::to_string(::getpid())));
    std::filesystem::create_directories(*d);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch(), ignored);
    });
    return d;
  }();
  return *dir;
}

/// Writes the input to scratch()/name and returns the path.
inline std::filesystem::path as_file(const std::uint8_t* data, std::size_t size,
                                     const std::string& name) {
  const auto file = scratch() / name;
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return file;
}

/// Runs f; the library's own errors for bad input are the expected outcome.
template <class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const InvalidArgument&) {
  } catch (const IoError&) {
  }
}

}  // namespace mor::fuzz
