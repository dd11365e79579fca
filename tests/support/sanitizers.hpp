// SPDX-License-Identifier: GPL-3.0-or-later
// Whether this test binary (and the `mor` built with it) runs under AddressSanitizer, which
// reserves terabytes of address space for its shadow memory: a process under RLIMIT_AS
// (`ulimit -v`) cannot even start there, so tests of the address-space limit skip.
#pragma once

namespace mor::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace mor::testing
