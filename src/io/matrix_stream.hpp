// SPDX-License-Identifier: GPL-3.0-or-later
// Named matrices as a stream of bytes: how a child process that read them from a file HDF5 may
// crash on (io::read_contained) hands them to its parent, which writes them (`mor export` of a
// results file, docs/hardening.md). Both ends are the same program on the same machine, so
// numbers are in native byte order and values are copied bit for bit; every part is
// length-prefixed. The decoder trusts nothing: a stream cut short or bent by a child that
// crashed, or by a bug, is refused with a message naming the defect, before anything of the size
// it claims is allocated.
//
// Layout (integers little- or big-endian as the machine is; u64/i64/i32 are 8/8/4 bytes):
//   "mormats1"  u64 count
//   count times: u64 name length, the name (a MATLAB variable name: it becomes part of a file
//   name), u8 kind ('D' dense, 'S' sparse), i64 rows, i64 cols, then
//     'D': rows * cols doubles, column-major;
//     'S': i64 nonzeros, cols + 1 i32 column starts, nonzeros i32 row indices, nonzeros doubles
//          (compressed column storage, row indices increasing within a column).
#pragma once

#include <iosfwd>
#include <string_view>
#include <vector>

#include "src/io/matrix_files.hpp"

namespace mor::io {

/// Writes vars to out in the layout above.
/// @throws InvalidArgument for a name that is not a MATLAB variable name (it could not be
///         decoded) or a sparse matrix with more than 2^31 - 1 rows or columns.
void encode_matrices(std::ostream& out, const std::vector<NamedMatrix>& vars);

/// Reads back what encode_matrices wrote: the same names in the same order, the values bit for
/// bit (dense stays dense, sparse stays sparse, compressed).
/// @throws IoError naming the defect and where it is ("the stream ends at byte 40 of 'A' (dense,
///         3 x 4), which needs 96 bytes more", "row index 7 of 'B' (5 x 5) ...", "'A' holds nan
///         at (2, 3)", a name that is not a variable name or given twice, bytes after the last
///         matrix); nothing it claims is allocated unless the stream holds it. Values must be
///         finite: what is decoded is written by writers that cannot store NaN or Inf.
std::vector<NamedMatrix> decode_matrices(std::string_view stream);

}  // namespace mor::io
