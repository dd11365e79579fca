// SPDX-License-Identifier: GPL-3.0-or-later
// The two error channels of the library (see README, "Errors"):
//  - bad arguments and bad input throw InvalidArgument (a std::invalid_argument) whose message
//    names the offending value;
//  - numerical failures that no argument check can foresee (a singular matrix, Newton not
//    converging, a diverging integration) throw NumericalError.
// Library code never prints and never exits; only main() turns these into messages.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace mor {

class InvalidArgument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class NumericalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A run stopped on request (e.g. SIGINT); nothing it was writing is kept.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Input/output failures: missing, unreadable or foreign files.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  os.precision(15);  // enough to tell values apart, short enough to read 0.1 as 0.1
  (os << ... << args);
  return os.str();
}
}  // namespace detail

/// Throws InvalidArgument with the streamed message unless cond holds.
template <class... Args>
void require(bool cond, const Args&... message) {
  if (!cond) throw InvalidArgument(detail::concat(message...));
}

}  // namespace mor
