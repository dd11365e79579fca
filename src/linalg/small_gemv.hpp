// SPDX-License-Identifier: GPL-3.0-or-later
// y = A z for the small dense matrices of a reduced model's time step (a few dozen rows and
// columns, the same matrix applied thousands of times), where Eigen's GEMV is latency-bound:
// it keeps one accumulator per packet of rows and chains it through every column, so a 20 x 58
// product waits on 58 dependent multiply-adds (measured 100 ns against 40-50 ns for the kernel
// below on the AVX-512 machines of this project; Eigen's GEMV, with its cache blocking, stays
// the right choice for large matrices).
//
// SmallMatrix stores A column-major with its row count padded to whole SIMD packets (zero rows),
// so that each column is whole packets, and splits the columns into up to four interleaved
// groups with their own accumulators (summed at the end): independent chains, as many as the
// registers hold, in blocks of at most kBlock packets of rows. Eigen's packet primitives
// (Eigen/src/Core/GenericPacketMath.h) keep it portable: 8 doubles a packet with AVX-512, 4 with
// AVX, 2 with SSE2, 1 without vectorization. The sum order differs from Eigen's product (by
// rounding only).
#pragma once

#include <algorithm>

#include "src/core/errors.hpp"
#include "src/core/types.hpp"

namespace mor {

class SmallMatrix {
 public:
  using Packet = Eigen::internal::packet_traits<double>::type;
  static constexpr Index kPacket = Eigen::internal::packet_traits<double>::size;
  /// Rows are processed in blocks of this many packets (at most 12 accumulators a block: the
  /// 16 registers of AVX hold them).
  static constexpr Index kBlock = 8;

  SmallMatrix() = default;
  explicit SmallMatrix(const Eigen::Ref<const Matrix>& A) { assign(A); }

  /// Copies A (any size) into the padded storage.
  void assign(const Eigen::Ref<const Matrix>& A) {
    rows_ = A.rows();
    data_.setZero(padded_rows(A.rows()), A.cols());
    data_.topRows(rows_) = A;
  }
  Index rows() const { return rows_; }
  Index cols() const { return data_.cols(); }
  /// rows() rounded up to whole packets: the length of the products' output.
  Index padded_rows() const { return data_.rows(); }
  static Index padded_rows(Index rows) { return (rows + kPacket - 1) / kPacket * kPacket; }

  /// y = A z, or y = y0 + A z if y0 is not null: z has cols() entries, y and y0
  /// padded_rows() (the padding rows of y receive 0, or those of y0).
  void multiply(const double* z, double* y, const double* y0 = nullptr) const {
    // Blocks of up to kBlock packets of rows, each over all columns.
    const Index packets = data_.rows() / kPacket;
    for (Index p0 = 0; p0 < packets; p0 += kBlock) {
      switch (std::min(packets - p0, kBlock)) {
        case 1:
          kernel<1, 4>(p0, z, y, y0);
          break;
        case 2:
          kernel<2, 4>(p0, z, y, y0);
          break;
        case 3:
          kernel<3, 4>(p0, z, y, y0);
          break;
        case 4:
          kernel<4, 3>(p0, z, y, y0);
          break;
        case 5:
          kernel<5, 2>(p0, z, y, y0);
          break;
        case 6:
          kernel<6, 2>(p0, z, y, y0);
          break;
        case 7:
          kernel<7, 1>(p0, z, y, y0);
          break;
        default:
          kernel<8, 1>(p0, z, y, y0);
      }
    }
  }
  /// y = A z for Eigen vectors (y resized to padded_rows()).
  void multiply(const Vector& z, Vector& y) const {
    require(z.size() == cols(), "SmallMatrix: z has size ", z.size(), ", expected ", cols());
    y.resize(padded_rows());
    multiply(z.data(), y.data());
  }

 private:
  /// Rows [p0, p0 + NP) in packets, G column groups: NP G accumulators.
  template <int NP, int G>
  void kernel(Index p0, const double* z, double* y, const double* y0) const {
    using namespace Eigen::internal;
    const Index ld = data_.rows();
    const double* a = data_.data() + p0 * kPacket;
    const Index n = data_.cols();
    Packet acc[G][NP];
    for (int g = 0; g < G; ++g)
      for (int p = 0; p < NP; ++p)
        acc[g][p] = g == 0 && y0 ? ploadu<Packet>(y0 + (p0 + p) * kPacket) : pset1<Packet>(0.0);
    Index j = 0;
    for (; j + G <= n; j += G)
      for (int g = 0; g < G; ++g) {
        const Packet b = pset1<Packet>(z[j + g]);
        const double* col = a + (j + g) * ld;
        for (int p = 0; p < NP; ++p)
          acc[g][p] = pmadd(ploadu<Packet>(col + p * kPacket), b, acc[g][p]);
      }
    for (; j < n; ++j) {
      const Packet b = pset1<Packet>(z[j]);
      const double* col = a + j * ld;
      for (int p = 0; p < NP; ++p)
        acc[0][p] = pmadd(ploadu<Packet>(col + p * kPacket), b, acc[0][p]);
    }
    double* out = y + p0 * kPacket;
    for (int p = 0; p < NP; ++p) {
      Packet s = acc[0][p];
      for (int g = 1; g < G; ++g) s = padd(s, acc[g][p]);
      pstoreu(out + p * kPacket, s);
    }
  }

  Matrix data_;  // padded_rows() x cols(), zero beyond rows()
  Index rows_ = 0;
};

}  // namespace mor
