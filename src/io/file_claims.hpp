// SPDX-License-Identifier: GPL-3.0-or-later
// Plausibility of a size that a file's header claims, checked before anything is allocated for
// it: readers of damaged files (matio, HDF5) allocate what a header says before they read a
// byte (found by fuzz_mat and fuzz_results, docs/hardening.md).
#pragma once

#include <filesystem>
#include <optional>
#include <system_error>

namespace mor::io {

/// zlib's deflate (MAT v5 variables, HDF5 chunks) expands data at most 1032:1.
inline constexpr long double kMaxDeflateExpansion = 1032;

/// The size of `file` in bytes if `claimed_bytes` of data cannot have come from it, that is if
/// claimed_bytes > expansion * size + slack (expansion: kMaxDeflateExpansion for data that may be
/// compressed, 1 for data stored as is; slack: the headers' allowance); nullopt if they can, or if
/// the size cannot be read (the read itself then says what is wrong).
inline std::optional<long long> implausible_claim(const std::filesystem::path& file,
                                                  long double claimed_bytes, long double expansion,
                                                  long double slack) {
  std::error_code error;
  const auto size = std::filesystem::file_size(file, error);
  if (error || claimed_bytes <= expansion * static_cast<long double>(size) + slack)
    return std::nullopt;
  return static_cast<long long>(size);
}

}  // namespace mor::io
