// SPDX-License-Identifier: GPL-3.0-or-later
// Not a fuzz target: a check of the containment in fuzz_support.hpp, which decides whether a
// crash or a loop in the worker is a third-party reader's (contained) or ours (a failure). Each
// ending is staged on purpose in the read, chosen by MOR_FUZZ_SELFTEST; scripts/run_fuzz.sh runs
// every mode on one input and checks the outcome before it fuzzes:
//   ours_crash          a null write in our code          -> failure, "in our code"
//   ours_use_after_free a read of freed memory in our code -> failure, "in our code"
//   ours_abort          abort() in our code               -> failure, "in our code"
//   ours_slow           1.5 s of CPU in our code, over the worker's 1 s  -> clean, "1 used the
//                       CPU-time limit" (read again in process; libFuzzer's -timeout judges hangs)
//   zlib_crash          a SEGV inside zlib                -> contained: "1 crashed it"
//   zlib_loop           endless work inside zlib          -> contained: "1 looped there"
//   zlib_crash_after_warnings  the same after 1 200 refused allocations, whose ASan warnings
//                       fill the 64 kB buffer ASan hands its report callback (fuzz_support.hpp)
//                                                         -> contained: "1 crashed it"
//   zlib_in_process     a SEGV inside zlib in the target's own read only (the worker's is clean)
//                                                         -> MOR_FUZZ_CONTAINED_IN_PROCESS
//   clean               nothing                           -> clean
// zlib stands for HDF5 and matio: it is one of the libraries the containment names, and its
// crc32 takes any pointer and length.
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_support.hpp"

namespace {

const pid_t target_pid = ::getpid();

const std::string& mode() {
  static const std::string m = [] {
    const char* e = std::getenv("MOR_FUZZ_SELFTEST");
    return std::string(e != nullptr ? e : "clean");
  }();
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mor::fuzz::contained("fuzz_selftest", data, size, std::chrono::seconds(1), [](std::ostream&) {
    const std::string& m = mode();
    if (m == "ours_crash") {
      volatile int* p = nullptr;
      *p = 1;
    } else if (m == "ours_use_after_free") {
      int* q = new int[4];
      delete[] q;
      volatile int y = q[1];
      (void)y;
    } else if (m == "ours_slow") {
      // CPU time, not wall time: on a loaded machine 1.5 s of wall time can be less than the
      // worker's 1 s of CPU, and the staged ending would not happen (seen with two campaigns
      // running beside the check).
      const auto cpu_now = [] {
        timespec t{};
        ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
      };
      const double until = cpu_now() + 1.5;
      volatile unsigned long spin = 0;
      while (cpu_now() < until) spin = spin + 1;
    } else if (m == "ours_abort") {
      std::abort();
    } else if (m == "zlib_crash_after_warnings") {
      for (int i = 0; i < 1200; ++i) {  // each: "WARNING: AddressSanitizer failed to allocate"
        void* volatile p = std::malloc(std::size_t{1} << 41);
        std::free(p);
      }
      volatile uLong c = crc32(0, reinterpret_cast<const Bytef*>(16), 64);
      (void)c;
    } else if (m == "zlib_crash" || (m == "zlib_in_process" && ::getpid() == target_pid)) {
      volatile uLong c = crc32(0, reinterpret_cast<const Bytef*>(16), 64);
      (void)c;
    } else if (m == "zlib_loop") {
      static std::vector<unsigned char> block(1 << 22);
      volatile uLong c = 0;
      for (;;) c = crc32(c, block.data(), static_cast<uInt>(block.size()));
    }
  });
  return 0;
}
