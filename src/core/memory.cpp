// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/core/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mor {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

/// The first number after `key` in /proc/<file> (kB), or -1.
double proc_kib(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, key.size(), key) == 0) {
      std::istringstream is(line.substr(key.size()));
      double kib = -1;
      is >> kib;
      return kib;
    }
  return -1;
}

/// A cgroup limit file's value in bytes; -1 for "max", absent or unreadable files and the
/// v1 "no limit" value (about 2^63).
double limit_bytes(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text == "max") return -1;
  try {
    const double v = std::stod(text);
    return v > 0 && v < 1e18 ? v : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

/// The smallest memory limit of the process's cgroup and its parents (v2 memory.max, or v1
/// memory.limit_in_bytes of the memory controller's hierarchy), in bytes; -1 if none.
double cgroup_limit_bytes() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  double limit = -1;
  const auto take = [&](const std::filesystem::path& root, std::string relative, const char* name) {
    while (!relative.empty() && relative.front() == '/') relative.erase(0, 1);
    for (std::filesystem::path dir = relative.empty() ? root : root / relative;;
         dir = dir.parent_path()) {
      const double v = limit_bytes(dir / name);
      if (v > 0 && (limit < 0 || v < limit)) limit = v;
      if (dir == root || dir.parent_path() == dir) break;
    }
  };
  while (std::getline(in, line)) {
    // "hierarchy-ID:controller-list:path"
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      const std::filesystem::path root = std::filesystem::exists("/sys/fs/cgroup/unified")
                                             ? "/sys/fs/cgroup/unified"
                                             : "/sys/fs/cgroup";
      take(root, path, "memory.max");
    } else if (controllers == "memory") {
      take("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes");
    }
  }
  return limit;
}

}  // namespace

MemoryLimits memory_limits() {
  MemoryLimits m;
  const auto consider = [&](double mib, std::string source) {
    if (mib > 0 && (m.hard_mib <= 0 || mib < m.hard_mib)) {
      m.hard_mib = mib;
      m.hard_source = std::move(source);
    }
  };
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0)
    consider(0.9 * static_cast<double>(pages) * static_cast<double>(page) / kMiB,
             "90% of the physical memory");
  if (const double cgroup = cgroup_limit_bytes(); cgroup > 0)
    consider(cgroup / kMiB, "the memory cgroup's limit (memory.max)");
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const double mapped = std::max(0.0, proc_kib("/proc/self/status", "VmSize:")) / 1024.0;
    const double limit = static_cast<double>(as.rlim_cur) / kMiB;
    consider(std::max(1.0, limit - mapped),
             "the address-space limit RLIMIT_AS (ulimit -v " +
                 std::to_string(static_cast<long long>(std::llround(limit * 1024))) +
                 " kB) less the " + std::to_string(std::llround(mapped)) +
                 " MiB this process maps already");
  }
  if (const double kib = proc_kib("/proc/meminfo", "MemAvailable:"); kib > 0)
    m.available_mib = kib / 1024.0;
  return m;
}

}  // namespace mor
