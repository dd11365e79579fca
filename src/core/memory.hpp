// SPDX-License-Identifier: GPL-3.0-or-later
// The memory this process may use, read before a large allocation so that a run, an export or a
// file's claimed size is refused with both figures up front instead of ending in "out of memory"
// (or the OOM killer) half way. Linux only; every figure is 0 where it cannot be read.
#pragma once

#include <string>

namespace mor {

struct MemoryLimits {
  /// The smallest hard limit in MiB (0: none known): an allocation beyond it fails for certain.
  double hard_mib = 0;
  /// Which limit that is, for messages: "RLIMIT_AS (ulimit -v) less the N MiB mapped already",
  /// "cgroup memory.max", "90% of the physical memory".
  std::string hard_source;
  /// MemAvailable of /proc/meminfo in MiB (0: unknown): above it the machine would swap or
  /// reclaim, a warning rather than a refusal (other processes may free memory).
  double available_mib = 0;
};

/// Reads the limits now: 90% of the physical memory (sysconf), the address-space limit
/// (getrlimit(RLIMIT_AS), less the address space this process maps already, VmSize), the
/// memory cgroup's limit (v2 memory.max of the process's cgroup and its parents, or v1
/// memory.limit_in_bytes), and MemAvailable.
MemoryLimits memory_limits();

}  // namespace mor
