// SPDX-License-Identifier: GPL-3.0-or-later
// For the targets whose inputs HDF5 reads (fuzz_results, fuzz_mat): HDF5 keeps the blocks it frees
// on its own free lists, but only up to 64 kB per list of fixed-size blocks by default, and returns
// larger ones to malloc. The metadata cache of every opened file is such a block (about 0.5 MB
// in 1.10.8), and ASan's allocator maps each block above 128 kB afresh and unmaps it after its
// quarantine: every H5Fopen (matio opens a v7.3 file once per variable) cost a fresh mapping,
// zeroed page by page. Measured on fuzz_mat (1 200 executions of the same seeds and corpus, load
// 7): 57.9 s with the default limits, 30.8 s without limits (mean clean read 23.5 -> 11.6 ms in the
// worker, 14.0 -> 9.9 ms in process). Only HDF5's own reuse of its blocks changes; what our code
// allocates still goes through ASan.
#pragma once

#include <hdf5.h>

namespace mor::fuzz {

/// Raises HDF5's limit on its lists of fixed-size blocks (H5set_free_list_limits) to 1 MB per
/// list and 16 MB in all, so that the metadata cache's block stays on its list; the lists of
/// arrays are limited to 256 kB each and 4 MB in all, those of blocks to 1 MB and 16 MB. Without
/// any limit (-1, as first done) the lists kept every block of every size a damaged file had made
/// HDF5 allocate: the target's resident memory grew to 1.7 GB in 3.5 minutes of fuzz_results
/// (evening of 24 November), towards libFuzzer's -rss_limit_mb=2048.
inline void keep_hdf5_free_lists() {
  constexpr int MiB = 1 << 20;
  H5set_free_list_limits(16 * MiB, MiB, 4 * MiB, MiB / 4, 16 * MiB, MiB);
}

}  // namespace mor::fuzz
