// SPDX-License-Identifier: GPL-3.0-or-later
// Model files (src/io/model_files.hpp, src/io/matrix_files.hpp). The independent reference is
// SciPy/h5py run by /usr/bin/python3: it reads the published data files itself, writes the same
// models as MatrixMarket, MAT v4 and MAT v7.3 (h5py, in MATLAB's layout), and reads back what mor
// exported. Imports of one model through every format must agree bit for bit; exports must read
// back bit for bit; every broken file must give the documented exception naming file and variable.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/io/matrix_files.hpp"
#include "src/io/matrix_stream.hpp"
#include "src/io/model_files.hpp"
#include "support/sanitizers.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using mor::DescriptorSystem;
using mor::Index;
using mor::Matrix;
using mor::SecondOrderSystem;
using mor::SparseMatrix;
using mor::io::ImportedModel;
using mor::io::MatVersion;
using mor::io::ModelFileFormat;
using mor::io::ModelFileSpec;
using mor::io::ModelForm;
using mor::io::NamedMatrix;
using mor::io::Verdict;

namespace {

/// The repository root: MOR_SOURCE_DIR (set by ctest), else the folder above this file.
fs::path source_dir() {
  if (const char* s = std::getenv("MOR_SOURCE_DIR")) return s;
  return fs::path(__FILE__).parent_path().parent_path();
}
fs::path data(const std::string& name) {
  return source_dir() / "data" / name;
}

/// A Python string literal for a path.
std::string py(const fs::path& p) {
  std::string out = "r'";
  for (char c : p.string()) out += c == '\'' ? std::string("\\'") : std::string(1, c);
  return out + "'";
}

/// Exact equality of two sparse matrices (sizes, then every entry, compared densely).
::testing::AssertionResult identical(const SparseMatrix& a, const SparseMatrix& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    return ::testing::AssertionFailure()
           << "size " << a.rows() << "x" << a.cols() << " against " << b.rows() << "x" << b.cols();
  const Matrix da(a), db(b);
  for (Index j = 0; j < da.cols(); ++j)
    for (Index i = 0; i < da.rows(); ++i)
      if (da(i, j) != db(i, j)) {
        std::ostringstream os;
        os.precision(17);
        os << "entry (" << i << ", " << j << "): " << da(i, j) << " against " << db(i, j);
        return ::testing::AssertionFailure() << os.str();
      }
  return ::testing::AssertionSuccess();
}
::testing::AssertionResult identical(const Matrix& a, const Matrix& b) {
  return identical(SparseMatrix(a.sparseView()), SparseMatrix(b.sparseView()));
}

::testing::AssertionResult identical(const DescriptorSystem& a, const DescriptorSystem& b) {
  for (const auto& [x, y, name] : {std::tuple{&a.E, &b.E, "E"}, std::tuple{&a.A, &b.A, "A"},
                                   std::tuple{&a.B, &b.B, "B"}, std::tuple{&a.C, &b.C, "C"}})
    if (auto r = identical(*x, *y); !r)
      return ::testing::AssertionFailure() << name << ": " << r.message();
  if (auto r = identical(a.D_ff, b.D_ff); !r)
    return ::testing::AssertionFailure() << "D: " << r.message();
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult identical(const SecondOrderSystem& a, const SecondOrderSystem& b) {
  for (const auto& [x, y, name] : {std::tuple{&a.M, &b.M, "M"}, std::tuple{&a.D, &b.D, "D"},
                                   std::tuple{&a.K, &b.K, "K"}, std::tuple{&a.B, &b.B, "B"},
                                   std::tuple{&a.Cp, &b.Cp, "Cp"}, std::tuple{&a.Cv, &b.Cv, "Cv"}})
    if (auto r = identical(*x, *y); !r)
      return ::testing::AssertionFailure() << name << ": " << r.message();
  return ::testing::AssertionSuccess();
}

/// Passes if f throws exactly E (IoError or InvalidArgument) with every part in its message.
template <class E>
::testing::AssertionResult throws_with(const std::function<void()>& f,
                                       const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const E& e) {
    const std::string message = e.what();
    if (message.find('\n') != std::string::npos)
      return ::testing::AssertionFailure() << "message has several lines: " << message;
    for (const auto& part : parts)
      if (message.find(part) == std::string::npos)
        return ::testing::AssertionFailure()
               << "message \"" << message << "\" lacks \"" << part << "\"";
    return ::testing::AssertionSuccess() << message;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another exception type: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

DescriptorSystem first_order(const ImportedModel& m) {
  return std::get<DescriptorSystem>(m.system);
}
SecondOrderSystem second_order(const ImportedModel& m) {
  return std::get<SecondOrderSystem>(m.system);
}
ImportedModel import_file(const fs::path& p) {
  ModelFileSpec spec;
  spec.path = p;
  return mor::io::import_model(spec);
}

SparseMatrix to_sparse(const Matrix& X) {
  return X.sparseView();
}

/// A second-order test system with distinct non-round values: M SPD tridiagonal, D and K sparse,
/// B dense, Cp sparse, Cv with one nonzero.
SecondOrderSystem random_second_order(Index n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Matrix M = Matrix::Zero(n, n), D = Matrix::Zero(n, n), K = Matrix::Zero(n, n);
  for (Index i = 0; i < n; ++i) {
    M(i, i) = 3.0 + u(gen);
    D(i, i) = 0.1 + 0.01 * u(gen);
    K(i, i) = 2.0 + u(gen) / 3.0;
    if (i + 1 < n) {
      M(i, i + 1) = M(i + 1, i) = 0.3 * u(gen);
      K(i, i + 1) = K(i + 1, i) = -1.0 + 0.1 * u(gen);
    }
  }
  D(0, n - 1) = 1e-300;  // tiny, huge and denormal values must survive every format
  K(n - 1, 0) = 3.5e300;
  M(0, 0) += 5e-324;
  Matrix B(n, 2), Cp = Matrix::Zero(2, n), Cv = Matrix::Zero(2, n);
  for (Index i = 0; i < B.size(); ++i) B(i) = u(gen) / 7.0;
  Cp(0, 0) = 1.0 / 3.0;
  Cp(1, n - 1) = -0.1;
  Cv(1, 2) = std::sqrt(2.0);
  SecondOrderSystem s;
  s.M = to_sparse(M);
  s.D = to_sparse(D);
  s.K = to_sparse(K);
  s.B = to_sparse(B);
  s.Cp = to_sparse(Cp);
  s.Cv = to_sparse(Cv);
  return s;
}

class ModelFilesTest : public mor::testing::TempDirTest {
 protected:
  /// Runs script with /usr/bin/python3 in the test folder; false (and the output) on failure.
  bool python(const std::string& script, std::string& output) {
    const fs::path file = dir_ / ("script_" + std::to_string(scripts_++) + ".py");
    std::ofstream(file) << script;
    const std::string cmd =
        "cd '" + dir_.string() + "' && /usr/bin/python3 '" + file.string() + "' 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) {
      output = "popen failed";
      return false;
    }
    output.clear();
    char buffer[4096];
    while (fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
    const int status = pclose(pipe);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  /// The reference needs NumPy, SciPy and h5py for /usr/bin/python3 (project dependencies).
  void require_python() {
    std::string out;
    ASSERT_TRUE(python(R"(
import importlib.util, sys
missing = [m for m in ('numpy', 'scipy', 'h5py') if importlib.util.find_spec(m) is None]
if missing:
    print('/usr/bin/python3 lacks ' + ', '.join(missing) + ' (Debian packages: ' +
          ', '.join('python3-' + m for m in missing) + '), the reference of this test')
    sys.exit(1)
)",
                       out))
        << out;
  }

  /// Writes a MAT v5 file of dense matrices with write_mat.
  fs::path mat(const std::string& name, const std::vector<NamedMatrix>& vars) {
    const fs::path p = dir_ / name;
    mor::io::write_mat(p, vars);
    return p;
  }

  fs::path text_file(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }

  int scripts_ = 0;
};

/// Python helpers shared by the scripts: MATLAB's v7.3 layout written with h5py.
const char* kWriteV73 = R"(
import numpy as np, scipy.sparse as sp, h5py
def matlab_class(obj):
    # as MATLAB and matio write it: the 6 characters in a 6-byte "null-terminated" string, no
    # terminator stored (matio reads it as such a string: from h5py's default null-padded 'S6',
    # or from a converted write, it gets 'doubl')
    t = h5py.h5t.C_S1.copy()
    t.set_size(6)
    t.set_strpad(h5py.h5t.STR_NULLTERM)
    a = h5py.h5a.create(obj.id, b'MATLAB_class', t, h5py.h5s.create(h5py.h5s.SCALAR))
    a.write(np.array(b'double', dtype='S6'), mtype=t)
def raw_sparse(path, name, data, ir, jc):
    # adds to the v7.3 file at path a 2 x n sparse variable written as given, consistent or not
    with h5py.File(path, 'r+') as f:
        g = f.create_group(name)
        g.attrs['MATLAB_sparse'] = np.uint64(2)
        matlab_class(g)
        g.create_dataset('data', data=np.array(data, dtype=np.float64))
        g.create_dataset('ir', data=np.array(ir, dtype=np.uint64))
        g.create_dataset('jc', data=np.array(jc, dtype=np.uint64))
def write_v73(path, variables):
    with h5py.File(path, 'w', userblock_size=512) as f:
        for name, v in variables.items():
            if sp.issparse(v):
                v = sp.csc_matrix(v)
                v.sort_indices()
                g = f.create_group(name)
                matlab_class(g)
                g.attrs['MATLAB_sparse'] = np.uint64(v.shape[0])
                g.create_dataset('data', data=v.data.astype(np.float64))
                g.create_dataset('ir', data=v.indices.astype(np.uint64))
                g.create_dataset('jc', data=v.indptr.astype(np.uint64))
            else:
                # MATLAB is column-major: an m x n array is the HDF5 dataset (n, m)
                d = f.create_dataset(name, data=np.asarray(v, dtype=np.float64).T)
                matlab_class(d)
    header = (b'MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan  1 00:00:00 2024 '
              b'HDF5 schema 1.00 .').ljust(116, b' ') + b'\0' * 8 + b'\x00\x02' + b'IM'
    with open(path, 'r+b') as fh:
        fh.write(header)
)";

// ---------------------------------------------------------------------------------------------
// The data files against SciPy's reading of them

TEST_F(ModelFilesTest, DataFilesMatchScipy) {
  ASSERT_NO_FATAL_FAILURE(require_python());
  const std::vector<std::string> files = {"rail_371.mat", "rail_1357.mat", "CDplayer.mat"};
  std::string script = R"(
import numpy as np, scipy.io as sio, scipy.sparse as sp
files = {)";
  for (const auto& f : files) script += "'" + f + "': " + py(data(f)) + ", ";
  script += R"(}
for tag, path in files.items():
    d = sio.loadmat(path)
    for name in sorted(k for k in d if not k.startswith('__')):
        v = d[name]
        if sp.issparse(v):
            coo = sp.csc_matrix(v).tocoo()
            rows, cols, vals = coo.row, coo.col, coo.data.astype(np.float64)
        else:
            a = np.asarray(v, dtype=np.float64)
            rows, cols = np.nonzero(a)
            vals = a[rows, cols]
        m, n = v.shape
        fro = float(np.sqrt(np.sum(vals ** 2)))
        wsum = float(np.sum(np.abs(vals) * ((7 * rows + 3 * cols) % 11 + 1)))
        asym, pd = -1.0, -1
        if m == n:
            full = sp.csc_matrix(v) if sp.issparse(v) else sp.csc_matrix(np.asarray(v, float))
            diff = (full - full.T).tocoo()
            asym = float(np.max(np.abs(diff.data))) if diff.nnz else 0.0
            if asym == 0.0:
                try:
                    np.linalg.cholesky(full.toarray())
                    pd = 1
                except np.linalg.LinAlgError:
                    pd = 0
        picks = ' '.join('%d %d %r' % (rows[k], cols[k], vals[k])
                         for k in sorted({0, len(vals) // 2, len(vals) - 1}) if len(vals))
        print(tag, name, m, n, len(vals), int(sp.issparse(v)), repr(fro), repr(wsum), repr(asym),
              pd, picks)
)";
  std::string out;
  ASSERT_TRUE(python(script, out)) << out;

  std::map<std::string, ImportedModel> models;
  for (const auto& f : files) models.emplace(f, import_file(data(f)));
  std::istringstream lines(out);
  std::string line;
  int checked = 0;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string tag, name;
    Index rows = 0, cols = 0, nnz = 0;
    int sparse = 0, pd = 0;
    std::string fro_s, wsum_s, asym_s;
    in >> tag >> name >> rows >> cols >> nnz >> sparse >> fro_s >> wsum_s >> asym_s >> pd;
    ASSERT_TRUE(in) << line;
    SCOPED_TRACE(tag + " " + name);
    const ImportedModel& model = models.at(tag);
    const DescriptorSystem sys = first_order(model);
    const std::map<std::string, SparseMatrix> by_name = {
        {"E", sys.E}, {"A", sys.A}, {"B", sys.B}, {"C", sys.C}, {"D", to_sparse(sys.D_ff)}};
    const mor::io::MatrixReport* r = model.report.find(name);
    ASSERT_NE(r, nullptr);
    EXPECT_TRUE(r->present);
    EXPECT_EQ(r->name, name);
    const SparseMatrix& X = by_name.at(name);
    EXPECT_EQ(X.rows(), rows);
    EXPECT_EQ(X.cols(), cols);
    EXPECT_EQ(r->nnz, nnz);
    EXPECT_EQ(r->stored_sparse, sparse == 1);
    // Sums of up to 10^4 terms in another order: relative 1e-12 (about 100 n eps).
    const double fro = std::stod(fro_s), wsum = std::stod(wsum_s), asym = std::stod(asym_s);
    EXPECT_NEAR(X.norm(), fro, 1e-12 * fro);
    double mine = 0.0;
    for (Index j = 0; j < X.outerSize(); ++j)
      for (SparseMatrix::InnerIterator it(X, j); it; ++it)
        mine += std::abs(it.value()) * static_cast<double>((7 * it.row() + 3 * it.col()) % 11 + 1);
    EXPECT_NEAR(mine, wsum, 1e-12 * wsum);
    // Single entries are compared exactly (Python's repr reads back to the same double).
    Index i = 0, j = 0;
    std::string v;
    int picks = 0;
    while (in >> i >> j >> v) {
      EXPECT_EQ(X.coeff(i, j), std::stod(v)) << "entry (" << i << ", " << j << ")";
      ++picks;
    }
    EXPECT_EQ(picks >= 1, nnz >= 1);
    if (rows == cols) {
      EXPECT_EQ(r->symmetric, asym == 0.0) << "scipy: max |X - X^T| = " << asym;
      if (pd >= 0 && name == "E") {
        EXPECT_EQ(r->positive_definite, pd == 1 ? Verdict::yes : Verdict::no);
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4 + 4 + 4) << out;  // rail: E, A, B, C; CD player: A, B, C, D
}

TEST_F(ModelFilesTest, StructureReportOfRailAndCdPlayer) {
  const ImportedModel rail = import_file(data("rail_1357.mat"));
  const auto& r = rail.report;
  EXPECT_EQ(r.form, ModelForm::first_order);
  EXPECT_EQ(r.n, 1357);
  EXPECT_EQ(r.m, 7);
  EXPECT_EQ(r.p, 6);
  // data/README.md: E and A symmetric, E positive definite (A negative definite).
  EXPECT_TRUE(r.find("E")->symmetric);
  EXPECT_TRUE(r.find("A")->symmetric);
  EXPECT_EQ(r.find("E")->positive_definite, Verdict::yes);
  EXPECT_EQ(r.find("A")->positive_definite, Verdict::unknown);  // only E and M are factorized
  EXPECT_FALSE(r.E_is_identity);
  EXPECT_FALSE(r.find("D")->present);
  EXPECT_TRUE(first_order(rail).D_ff.isZero());
  EXPECT_NO_THROW(mor::io::check_nonsingular(first_order(rail), r.file));

  const ImportedModel cd = import_file(data("CDplayer.mat"));
  const auto& c = cd.report;
  EXPECT_EQ(c.n, 120);
  EXPECT_EQ(c.m, 2);
  EXPECT_EQ(c.p, 2);
  EXPECT_FALSE(c.find("A")->symmetric);
  EXPECT_FALSE(c.find("A")->symmetric_to_tolerance);
  EXPECT_TRUE(c.E_is_identity);
  EXPECT_FALSE(c.find("E")->present);
  EXPECT_TRUE(identical(first_order(cd).E, SparseMatrix(Matrix::Identity(120, 120).sparseView())));
  EXPECT_EQ(c.find("D")->stored_class, "double");
  const std::string text = mor::io::describe(c);
  EXPECT_NE(text.find("first-order model from"), std::string::npos) << text;
  EXPECT_NE(text.find("E  absent: identity"), std::string::npos) << text;
  EXPECT_NE(text.find("not symmetric"), std::string::npos) << text;
}

// ---------------------------------------------------------------------------------------------
// One model through every format

TEST_F(ModelFilesTest, V4V5V73AndMatrixMarketImportsAreIdentical) {
  ASSERT_NO_FATAL_FAILURE(require_python());
  std::string out;
  const std::string script = std::string(kWriteV73) + R"(
import scipy.io as sio, os, shutil
d = sio.loadmat()" + py(data("rail_371.mat")) +
                             R"()
for name in 'EABC':
    # precision 17: SciPy's default for sparse files (16 digits) does not always read back exactly
    sio.mmwrite('rail.%s.mtx' % name, d[name], precision=17)
os.makedirs('oberwolfach', exist_ok=True)
for name in 'EABC':
    shutil.copy('rail.%s.mtx' % name, 'oberwolfach/rail_c60.%s' % name)
write_v73('rail73.mat', {k: d[k] for k in 'EABC'})
sio.savemat('rail4.mat', {k: d[k] for k in 'EABC'}, format='4')
print(open('rail.E.mtx').readline().strip())
print(open('rail.C.mtx').readline().strip())
)";
  ASSERT_TRUE(python(script, out)) << out;
  // The symmetric storage and the integer field are the cases CHOLMOD must expand / convert.
  EXPECT_NE(out.find("coordinate real symmetric"), std::string::npos) << out;
  EXPECT_NE(out.find("array integer general"), std::string::npos) << out;

  const ImportedModel v5 = import_file(data("rail_371.mat"));
  const ImportedModel v73 = import_file(dir_ / "rail73.mat");
  const ImportedModel v4 = import_file(dir_ / "rail4.mat");
  const ImportedModel mm = import_file(dir_ / "rail");
  const ImportedModel oberwolfach = import_file(dir_ / "oberwolfach" / "rail_c60");
  ModelFileSpec listed;
  for (const char* name : {"E", "A", "B", "C"})
    listed.files[name] = dir_ / (std::string("rail.") + name + ".mtx");
  const ImportedModel by_list = mor::io::import_model(listed);

  for (const auto* m : {&v73, &v4, &mm, &oberwolfach, &by_list}) {
    SCOPED_TRACE(m->report.file);
    EXPECT_TRUE(identical(first_order(*m), first_order(v5)));
    EXPECT_EQ(m->report.n, 371);
  }
  EXPECT_TRUE(v73.report.find("A")->stored_sparse);
  EXPECT_FALSE(v73.report.find("B")->stored_sparse);
  EXPECT_TRUE(mm.report.find("E")->stored_sparse);
  EXPECT_EQ(mm.report.find("C")->stored_class, "integer");
  EXPECT_TRUE(mm.report.find("E")->symmetric);
  EXPECT_EQ(mm.report.find("E")->source, dir_ / "rail.E.mtx");
  EXPECT_EQ(oberwolfach.report.find("A")->source, dir_ / "oberwolfach" / "rail_c60.A");
}

// ---------------------------------------------------------------------------------------------
// Export round trips

TEST_F(ModelFilesTest, ExportRoundTripsAndScipyReadsTheExports) {
  ASSERT_NO_FATAL_FAILURE(require_python());
  const DescriptorSystem rail = first_order(import_file(data("rail_371.mat")));
  Matrix V(371, 3), hsv(5, 1);
  std::mt19937 gen(7);
  std::normal_distribution<double> g;
  for (Index i = 0; i < V.size(); ++i) V(i) = g(gen);
  for (Index i = 0; i < hsv.size(); ++i) hsv(i) = std::exp(-3.0 * static_cast<double>(i)) / 3.0;
  const std::vector<NamedMatrix> extras = {{"V", V}, {"hsv", hsv}};
  const SecondOrderSystem so = random_second_order(9, 11);

  const std::vector<std::pair<ModelFileFormat, std::string>> formats = {
      {ModelFileFormat::mat_v5, "v5.mat"},
      {ModelFileFormat::mat_v73, "v73.mat"},
      {ModelFileFormat::matrix_market, "mm"}};
  for (const auto& [format, name] : formats) {
    SCOPED_TRACE(name);
    const bool mtx = format == ModelFileFormat::matrix_market;
    mor::io::export_model(dir_ / ("rail_" + name), rail, format, extras);
    mor::io::export_model(dir_ / ("so_" + name), so, format);
    EXPECT_TRUE(identical(first_order(import_file(dir_ / ("rail_" + name))), rail));
    const ImportedModel back = import_file(dir_ / ("so_" + name));
    EXPECT_EQ(back.report.form, ModelForm::second_order);
    EXPECT_TRUE(identical(second_order(back), so));
    // An all-zero sparse matrix (no stored entries) is a variable like any other.
    SecondOrderSystem so0 = so;
    so0.Cv = SparseMatrix(2, 9);
    mor::io::export_model(dir_ / ("so0_" + name), so0, format);
    const ImportedModel back0 = import_file(dir_ / ("so0_" + name));
    EXPECT_TRUE(back0.report.find("Cv")->present);
    EXPECT_TRUE(identical(second_order(back0), so0));
    // Extra matrices alone.
    mor::io::export_matrices(dir_ / ("bases_" + name), extras, format);
    EXPECT_TRUE(identical(mtx ? mor::io::read_matrix_market(dir_ / ("bases_" + name + ".V.mtx"))
                              : mor::io::read_mat_variable(dir_ / ("bases_" + name), "V").value,
                          to_sparse(V)));
    // The file name as a variable of its own: clang 14 (the sanitizer build) refuses a lambda
    // capturing a structured binding, which C++20 allows.
    const std::string rail_file = "rail_" + name;
    const auto extra = [&](const std::string& x) {
      return mtx ? mor::io::read_matrix_market(dir_ / (rail_file + "." + x + ".mtx"))
                 : mor::io::read_mat_variable(dir_ / rail_file, x).value;
    };
    EXPECT_TRUE(identical(extra("V"), to_sparse(V)));
    EXPECT_TRUE(identical(extra("hsv"), to_sparse(hsv)));
  }
  // Only the final files remain (the temporaries were renamed).
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos) << entry.path();

  // SciPy reads the v5 export and the MatrixMarket export, h5py the v7.3 one (MATLAB's layout),
  // and compares with its own reading of the original file: max |difference| must be 0.
  std::string out;
  const std::string script = R"(
import numpy as np, scipy.io as sio, scipy.sparse as sp, h5py
orig = sio.loadmat()" + py(data("rail_371.mat")) +
                             R"()
orig['D'] = np.zeros((6, 7))
def diff(a, b):
    a = a.toarray() if sp.issparse(a) else np.asarray(a, float)
    b = b.toarray() if sp.issparse(b) else np.asarray(b, float)
    return float(np.max(np.abs(a - b))) if a.shape == b.shape else float('inf')
v5 = sio.loadmat('rail_v5.mat')
print('v5', max(diff(v5[k], orig[k]) for k in 'EABCD'), sorted(k for k in v5 if k[0] != '_'))
with h5py.File('rail_v73.mat', 'r') as f:
    got = {}
    for k in 'EABCD':
        o = f[k]
        assert o.attrs['MATLAB_class'] == b'double', (k, o.attrs['MATLAB_class'])
        if isinstance(o, h5py.Group):
            jc = o['jc'][()]
            got[k] = sp.csc_matrix((o['data'][()], o['ir'][()], jc),
                                   shape=(int(o.attrs['MATLAB_sparse']), len(jc) - 1))
        else:
            got[k] = o[()].T
    print('v73', max(diff(got[k], orig[k]) for k in 'EABCD'))
print('mtx', max(diff(sio.mmread('rail_mm.%s.mtx' % k), orig[k]) for k in 'EABCD'))
print('header', open('rail_v73.mat', 'rb').read(19).decode())
)";
  ASSERT_TRUE(python(script, out)) << out;
  EXPECT_NE(out.find("v5 0.0 ['A', 'B', 'C', 'D', 'E', 'V', 'hsv']"), std::string::npos) << out;
  EXPECT_NE(out.find("v73 0.0"), std::string::npos) << out;
  EXPECT_NE(out.find("mtx 0.0"), std::string::npos) << out;
  EXPECT_NE(out.find("header MATLAB 7.3 MAT-file"), std::string::npos) << out;
}

TEST_F(ModelFilesTest, MatrixMarketWriterReadsBackExactly) {
  // Values that need 17 significant digits, extremes, integers and all-ones (which CHOLMOD
  // writes as "integer" and "pattern"; a symmetric pattern file must read back as ones).
  Matrix X(4, 3);
  X << 0.1, 1.0 / 3.0, -2.0 / 7.0, 1e-300, -2.5e300, 5e-324, 0.0, 1.0 + 1e-16 * 4, -0.0, 3.0,
      9.999999999999999e307, -2.2250738585072014e-308;
  const Matrix ints = (Matrix(2, 2) << 4.0, -3.0, 2.0, 100000.0).finished();
  const Matrix ones = Matrix::Ones(3, 3);
  for (const Matrix& M : {X, ints, ones, Matrix(Matrix::Zero(2, 3)), Matrix(0, 4)}) {
    mor::io::write_matrix_market(dir_ / "s.mtx", to_sparse(M));
    mor::io::write_matrix_market(dir_ / "d.mtx", M);
    EXPECT_TRUE(identical(mor::io::read_matrix_market(dir_ / "s.mtx"), to_sparse(M)));
    EXPECT_TRUE(identical(mor::io::read_matrix_market(dir_ / "d.mtx"), to_sparse(M)));
  }
  EXPECT_FALSE(mor::io::read_matrix_market_variable(dir_ / "d.mtx").stored_sparse);
  EXPECT_EQ(mor::io::read_matrix_market_variable(dir_ / "s.mtx").stored_class, "pattern");
  // CHOLMOD's reader turns magnitudes >= 1e308 into Inf: refused on both sides, not changed.
  Matrix huge = X;
  huge(3, 1) = 1e308;
  EXPECT_TRUE(throws_with<mor::InvalidArgument>(
      [&] { mor::io::write_matrix_market(dir_ / "h.mtx", huge); }, {"h.mtx", "(4, 2)", "1e+308"}));
  EXPECT_TRUE(throws_with<mor::InvalidArgument>(
      [&] { mor::io::write_matrix_market(dir_ / "h.mtx", to_sparse(huge)); }, {"h.mtx", "1e+308"}));
  std::ofstream(dir_ / "h.mtx") << "%%MatrixMarket matrix array real general\n1 1\n-1.5e308\n";
  EXPECT_TRUE(throws_with<mor::InvalidArgument>(
      [&] { mor::io::read_matrix_market(dir_ / "h.mtx"); }, {"h.mtx", "line 3", "-1.5e308"}));
}

// ---------------------------------------------------------------------------------------------
// Broken files: the documented exception, naming the file and the variable

// A set of files is written whole or not at all: every file to a temporary first, renamed only
// by commit(); a failure in any file (here a NaN, which MatrixMarket files cannot hold) or a set
// never committed leaves the earlier files and no temporary. A comment line and a MAT header
// text (the marks of `mor export`) are written as given and read back.
TEST_F(ModelFilesTest, StagedSetsAreWrittenWholeOrNotAtAll) {
  using mor::io::MatrixValue;
  const auto no_temporaries = [&] {
    for (const auto& entry : fs::directory_iterator(dir_))
      EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos) << entry.path();
  };
  const Matrix one = Matrix::Ones(2, 2), two = 2.0 * Matrix::Ones(2, 2);
  Matrix nan = two;
  nan(1, 1) = std::numeric_limits<double>::quiet_NaN();
  const fs::path a = dir_ / "s.A.mtx", b = dir_ / "s.B.mtx";
  mor::io::write_matrix_market_files({{a, MatrixValue(one)}, {b, MatrixValue(one)}});
  EXPECT_THROW(mor::io::write_matrix_market_files({{a, MatrixValue(two)}, {b, MatrixValue(nan)}}),
               mor::InvalidArgument);
  EXPECT_TRUE(identical(mor::io::read_matrix_market(a), to_sparse(one))) << "part of a set new";
  no_temporaries();
  {
    const auto staged = mor::io::stage_matrix_market_files({{a, MatrixValue(two)}});
    EXPECT_EQ(staged.files(), std::vector<fs::path>{a});
  }  // never committed
  EXPECT_TRUE(identical(mor::io::read_matrix_market(a), to_sparse(one)));
  no_temporaries();
  // Handed to another owner (another process, in `mor export`) and committed there.
  auto released = mor::io::stage_matrix_market_files(
                      {{a, MatrixValue(two)}, {b, MatrixValue(to_sparse(two))}}, " a mark")
                      .release();
  ASSERT_EQ(released.size(), 2u);
  EXPECT_TRUE(fs::exists(released[0].first));
  mor::io::StagedFiles::adopt(released).commit();
  no_temporaries();
  EXPECT_TRUE(identical(mor::io::read_matrix_market(a), to_sparse(two)));
  EXPECT_TRUE(identical(mor::io::read_matrix_market(b), to_sparse(two)));
  std::ifstream in(b);
  std::string banner, comment;
  std::getline(in, banner);
  std::getline(in, comment);
  EXPECT_EQ(comment, "% a mark") << banner;
  // The MAT header text as given, in both versions.
  for (const auto& [version, text] :
       {std::pair{mor::io::MatVersion::v5, "MATLAB 5.0 MAT-file, a mark"},
        std::pair{mor::io::MatVersion::v73, "MATLAB 7.3 MAT-file, a mark"}}) {
    const fs::path m = dir_ / "h.mat";
    mor::io::stage_mat(m, {{"X", MatrixValue(two)}}, version, text).commit();
    EXPECT_EQ(mor::io::mat_header_text(m), text);
    EXPECT_TRUE(identical(mor::io::read_mat_variable(m, "X").value, to_sparse(two)));
  }
  no_temporaries();
}

TEST_F(ModelFilesTest, BrokenMatFilesAreIoErrorsNamingTheFile) {
  const fs::path missing = dir_ / "missing.mat";
  EXPECT_TRUE(throws_with<mor::IoError>([&] { import_file(missing); }, {missing.string()}));
  const fs::path text = text_file("text.mat", "this is a text file renamed .mat\nE = [1 2];\n");
  EXPECT_TRUE(
      throws_with<mor::IoError>([&] { import_file(text); }, {text.string(), "not a MAT file"}));
  // The first half of a real file.
  const fs::path half = dir_ / "half.mat";
  {
    std::ifstream in(data("rail_371.mat"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(half, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  EXPECT_TRUE(throws_with<mor::IoError>([&] { import_file(half); }, {half.string(), "truncated"}));
  EXPECT_TRUE(
      throws_with<mor::IoError>([&] { mor::io::read_mat_variable(half, "E"); }, {half.string()}));
  // A v7.3 header on a truncated HDF5 body.
  ASSERT_NO_FATAL_FAILURE(require_python());
  std::string out;
  ASSERT_TRUE(python(std::string(kWriteV73) + R"(
import numpy as np
write_v73('full73.mat', {'A': np.eye(3), 'B': np.ones((3, 1)), 'C': np.ones((1, 3))})
data = open('full73.mat', 'rb').read()
open('half73.mat', 'wb').write(data[:len(data) // 2])
)",
                     out))
      << out;
  EXPECT_TRUE(throws_with<mor::IoError>([&] { import_file(dir_ / "half73.mat"); },
                                        {(dir_ / "half73.mat").string()}));
  EXPECT_NO_THROW(import_file(dir_ / "full73.mat"));
}

// Damaged headers that fuzz_mat found (docs/hardening.md): a variable claiming more entries than
// the file can hold (matio would allocate the claim before reading a byte) and sparse column
// pointers that rise beyond the row indices before they decrease (the rows of that column were
// read past the end of the array: a heap-buffer-overflow under ASan before the fix), and v7.3
// sparse row indices beyond the values (HDF5 wrote past matio's buffer).
TEST_F(ModelFilesTest, DamagedSizesAndColumnPointersAreIoErrors) {
  ASSERT_NO_FATAL_FAILURE(require_python());
  std::string out;
  ASSERT_TRUE(python(std::string(kWriteV73) + R"(
import io, struct, numpy as np, scipy.io as sio
# v5, uncompressed: the dimensions of the first variable (after the 128-byte header, the
# miMATRIX tag, the array-flags element and the dimensions tag) claim 50000 x 50000 doubles.
b = io.BytesIO()
sio.savemat(b, {'A': -2.0 * np.eye(3), 'B': np.ones((3, 1)), 'C': np.ones((1, 3))})
d = bytearray(b.getvalue())
assert struct.unpack('<2I', d[152:160]) == (5, 8) and struct.unpack('<2i', d[160:168]) == (3, 3)
d[160:168] = struct.pack('<2i', 50000, 50000)
open('claims_v5.mat', 'wb').write(bytes(d))
# v7.3: a chunked 200000 x 200000 dataset of which no chunk is stored (a few kB on disk).
write_v73('claims_v73.mat', {'B': np.ones((3, 1)), 'C': np.ones((1, 3))})
import h5py
with h5py.File('claims_v73.mat', 'r+') as f:
    a = f.create_dataset('A', shape=(200000, 200000), dtype='f8', chunks=(64, 64))
    t = h5py.h5t.C_S1.copy()
    t.set_size(6)
    t.set_strpad(h5py.h5t.STR_NULLTERM)
    h5py.h5a.create(a.id, b'MATLAB_class', t, h5py.h5s.create(h5py.h5s.SCALAR)).write(
        np.array(b'double', dtype='S6'), mtype=t)
# v7.3 sparse 2 x 2 with column pointers [0, 100, 2] over 2 row indices.
write_v73('pointers.mat', {'A': -np.eye(2), 'B': np.ones((2, 1)), 'C': np.ones((1, 2))})
raw_sparse('pointers.mat', 'E', [1.0, 2.0], [0, 1], [0, 100, 2])
# v7.3 sparse 2 x 2 whose row indices outnumber its values (matio sizes the buffer by the values).
write_v73('rows.mat', {'A': -np.eye(2), 'B': np.ones((2, 1)), 'C': np.ones((1, 2))})
raw_sparse('rows.mat', 'E', [1.0, 2.0], [0, 1, 0, 1, 0], [0, 1, 2])
)",
                     out))
      << out;
  const fs::path v5 = dir_ / "claims_v5.mat", v73 = dir_ / "claims_v73.mat",
                 pointers = dir_ / "pointers.mat";
  EXPECT_TRUE(throws_with<mor::IoError>([&] { mor::io::read_mat_variable(v5, "A"); },
                                        {v5.string(), "'A'", "50000 x 50000", "damaged"}));
  EXPECT_TRUE(throws_with<mor::IoError>([&] { import_file(v5); }, {v5.string(), "50000 x 50000"}));
  EXPECT_TRUE(throws_with<mor::IoError>([&] { mor::io::read_mat_variable(v73, "A"); },
                                        {v73.string(), "'A'", "200000 x 200000", "damaged"}));
  EXPECT_TRUE(throws_with<mor::IoError>(
      [&] { mor::io::read_mat_variable(pointers, "E"); },
      {pointers.string(), "sparse variable 'E'", "column pointers decrease at column 2"}));
  EXPECT_TRUE(throws_with<mor::IoError>([&] { import_file(pointers); },
                                        {pointers.string(), "'E'", "column pointers"}));
  // HDF5 wrote past matio's buffer for these (fuzz_mat, a 4-byte heap-buffer-overflow): row
  // indices outnumbering the values, and the kept input, whose Cv claims 2^40 row indices.
  const fs::path rows = dir_ / "rows.mat";
  EXPECT_TRUE(throws_with<mor::IoError>(
      [&] { mor::io::read_mat_variable(rows, "E"); },
      {rows.string(), "variable 'E'", "'/E/ir') holds 5 row indices for 2 values", "damaged"}));
  const fs::path overflow = source_dir() / "tests/fuzz/known/mat_hdf5_fill_write_overflow.mat";
  EXPECT_TRUE(throws_with<mor::IoError>(
      [&] { mor::io::read_mat_variable(overflow, "Cv"); },
      {overflow.string(), "variable 'Cv'", "claims 1099511627776 entries", "damaged"}));
  // The regression seed of the fuzz corpus: variable Cp has column pointers [0, 0, 402653184,
  // 115561463808, 0, ...] (stored as 64 bits, 4294967295 as matio's 32) over one row index.
  const fs::path seed = source_dir() / "tests/fuzz/corpus/mat/regression_column_pointers.mat";
  EXPECT_TRUE(throws_with<mor::IoError>([&] { mor::io::read_mat_variable(seed, "Cp"); },
                                        {seed.string(), "'Cp'", "column pointers decrease"}));
}

TEST(MatFileFuzzFindings, AV4HeaderIsReadInTheByteOrderItsMachineDigitNames) {
  // Type 0 (machine digit 0: little endian), then a name length of 1 056 964 608 read little
  // endian; read big endian the header looked plausible (name length 63), and matio, which reads
  // it little endian, allocated the 1 GB name (fuzz_mat).
  const fs::path file = source_dir() / "tests/fuzz/known/mat_matio_v4_name_claim.mat";
  EXPECT_TRUE(throws_with<mor::IoError>([&] { mor::io::mat_variable_names(file); },
                                        {file.string(), "is not a MAT file"}));
}

TEST(MatFileFuzzFindings, AVariableTooLargeForMemoryIsAnIoErrorNamingIt) {
  // A 137-byte v4 file declares an empty 0 x 520093702 matrix, whose column pointers need 2 GB.
  // Read in a child process whose address space is limited to 1 GiB more than it uses, so the
  // allocation fails there as it does on a smaller machine: the reader must name the variable,
  // not let std::bad_alloc through (the program reported it as "std::bad_alloc", exit 1).
  if (mor::testing::kAddressSanitizer)
    GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: no RLIMIT_AS here";
  const fs::path file = source_dir() / "tests/fuzz/known/mat_sparse_dims_bad_alloc.mat";
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t limit =
        static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGE_SIZE)) +
        (rlim_t{1} << 30);
    const rlimit rl{limit, limit};
    if (::setrlimit(RLIMIT_AS, &rl) != 0) ::_exit(10);
    try {
      for (const auto& name : mor::io::mat_variable_names(file))
        (void)mor::io::read_mat_variable(file, name);
      ::_exit(11);  // nothing refused
    } catch (const mor::IoError& e) {
      const std::string what = e.what();
      std::fprintf(stderr, "child: %s\n", what.c_str());
      ::_exit(what.find("does not fit in the memory") != std::string::npos &&
                      what.find("0 x 520093702") != std::string::npos
                  ? 0
                  : 12);
    } catch (const std::bad_alloc&) {
      ::_exit(13);
    } catch (...) {
      ::_exit(14);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "10: setrlimit failed, 11: nothing refused, 12: another message (printed above), "
         "13: std::bad_alloc escaped, 14: another exception";
}

TEST_F(ModelFilesTest, VariablesOfTheWrongKindAreNamed) {
  ASSERT_NO_FATAL_FAILURE(require_python());
  std::string out;
  ASSERT_TRUE(python(R"(
import numpy as np, scipy.io as sio
cell = np.empty((1, 2), dtype=object)
cell[0, 0] = np.eye(2)
cell[0, 1] = np.ones(3)
sio.savemat('kinds.mat', {'Z': np.array([[1 + 2j, 0], [0, 1]]), 'cellvar': cell,
                          'structvar': {'x': 1.0}, 'text': 'hello', 'cube': np.ones((2, 2, 2)),
                          'I': np.array([[1, -2], [3, 40000]], dtype=np.int32),
                          'L': np.array([[True, False, True]]),
                          'S': np.array([[0.1, 0.2]], dtype=np.float32)})
sio.savemat('complexA.mat', {'A': np.array([[1 + 2j, 0], [0, 1]]), 'B': np.ones((2, 1)),
                             'C': np.ones((1, 2))})
sio.savemat('cellB.mat', {'A': np.eye(2), 'B': cell, 'C': np.ones((1, 2))})
print('%r %r' % (float(np.float32(0.1)), float(np.float32(0.2))))
)",
                     out))
      << out;
  const fs::path kinds = dir_ / "kinds.mat";
  using mor::InvalidArgument;
  const auto read = [&](const std::string& name) {
    return [=] { mor::io::read_mat_variable(kinds, name); };
  };
  EXPECT_TRUE(throws_with<InvalidArgument>(read("Z"), {kinds.string(), "'Z'", "complex"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(read("cellvar"), {kinds.string(), "'cellvar'", "cell"}));
  EXPECT_TRUE(
      throws_with<InvalidArgument>(read("structvar"), {kinds.string(), "'structvar'", "struct"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(read("text"), {kinds.string(), "'text'", "char"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(read("cube"), {kinds.string(), "'cube'", "2x2x2"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(read("nothere"),
                                           {kinds.string(), "'nothere'", "I, L, S, Z, cellvar"}));
  // Integer, logical and single classes convert exactly.
  const auto I = mor::io::read_mat_variable(kinds, "I");
  EXPECT_EQ(I.stored_class, "int32");
  EXPECT_TRUE(identical(I.value, to_sparse((Matrix(2, 2) << 1, -2, 3, 40000).finished())));
  const auto L = mor::io::read_mat_variable(kinds, "L");
  EXPECT_EQ(L.stored_class, "logical");
  EXPECT_TRUE(identical(L.value, to_sparse((Matrix(1, 3) << 1, 0, 1).finished())));
  const auto S = mor::io::read_mat_variable(kinds, "S");
  EXPECT_EQ(S.stored_class, "single");
  std::istringstream singles(out);
  double s0 = 0, s1 = 0;
  singles >> s0 >> s1;
  EXPECT_TRUE(identical(S.value, to_sparse((Matrix(1, 2) << s0, s1).finished())));

  EXPECT_TRUE(throws_with<InvalidArgument>([&] { import_file(dir_ / "complexA.mat"); },
                                           {"complexA.mat", "'A'", "complex"}));
  EXPECT_TRUE(throws_with<InvalidArgument>([&] { import_file(dir_ / "cellB.mat"); },
                                           {"cellB.mat", "'B'", "cell"}));
}

TEST_F(ModelFilesTest, ContentErrorsNameFileVariableAndSizes) {
  using mor::InvalidArgument;
  const Matrix A = -2.0 * Matrix::Identity(4, 4), B = Matrix::Ones(4, 1), C = Matrix::Ones(1, 4);
  const auto import_of = [&](const std::string& file, const std::vector<NamedMatrix>& vars) {
    const fs::path p = mat(file, vars);
    return [p] { import_file(p); };
  };
  EXPECT_TRUE(throws_with<InvalidArgument>(import_of("noC.mat", {{"A", A}, {"B", B}}),
                                           {"noC.mat", "'C'", "A, B"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(
      import_of("brows.mat", {{"A", A}, {"B", Matrix(Matrix::Ones(3, 1))}, {"C", C}}),
      {"brows.mat", "variable 'B'", "3x1", "n = 4"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(
      import_of("ccols.mat", {{"A", A}, {"B", B}, {"C", Matrix(Matrix::Ones(1, 5))}}),
      {"ccols.mat", "variable 'C'", "1x5", "n = 4"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(
      import_of("dsize.mat", {{"A", A}, {"B", B}, {"C", C}, {"D", Matrix(Matrix::Zero(2, 1))}}),
      {"dsize.mat", "variable 'D'", "2x1", "1x1"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(
      import_of("esize.mat", {{"E", Matrix(Matrix::Identity(3, 3))}, {"A", A}, {"B", B}, {"C", C}}),
      {"esize.mat", "variable 'E'", "3x3", "4x4"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(
      import_of("nonsquare.mat", {{"A", Matrix(Matrix::Ones(4, 3))}, {"B", B}, {"C", C}}),
      {"nonsquare.mat", "variable 'A'", "4x3", "square"}));
  Matrix An = A, Bi = B;
  An(1, 2) = std::numeric_limits<double>::quiet_NaN();
  Bi(3, 0) = -std::numeric_limits<double>::infinity();
  EXPECT_TRUE(throws_with<InvalidArgument>(import_of("nan.mat", {{"A", An}, {"B", B}, {"C", C}}),
                                           {"nan.mat", "'A'", "A(2, 3) = nan"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(import_of("inf.mat", {{"A", A}, {"B", Bi}, {"C", C}}),
                                           {"inf.mat", "'B'", "B(4, 1) = -inf"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(
      import_of("emptyB.mat", {{"A", A}, {"B", Matrix(4, 0)}, {"C", C}}),
      {"emptyB.mat", "variable 'B'", "4x0", "no inputs"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(
      import_of("emptyC.mat", {{"A", A}, {"B", B}, {"C", Matrix(0, 4)}}),
      {"emptyC.mat", "variable 'C'", "0x4", "no outputs"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(
      import_of("n0.mat", {{"A", Matrix(0, 0)}, {"B", Matrix(0, 1)}, {"C", Matrix(1, 0)}}),
      {"n0.mat", "variable 'A'", "0x0", "n = 0"}));
  EXPECT_TRUE(throws_with<InvalidArgument>(import_of("neither.mat", {{"B", B}, {"C", C}}),
                                           {"neither.mat", "B, C", "M and K"}));

  // A role given explicitly must exist; unknown roles are refused.
  ModelFileSpec spec;
  spec.path = mat("ok.mat", {{"A", A}, {"B", B}, {"C", C}, {"Bmine", B}});
  spec.variables = {{"B", "Bx"}};
  EXPECT_TRUE(throws_with<InvalidArgument>([&] { mor::io::import_model(spec); },
                                           {"ok.mat", "'Bx'", "A, B, Bmine, C"}));
  spec.variables = {{"Q", "B"}};
  EXPECT_TRUE(throws_with<InvalidArgument>([&] { mor::io::import_model(spec); },
                                           {"ok.mat", "'Q'", "E, A, B, C, D"}));
  spec.variables = {{"B", "Bmine"}};
  EXPECT_EQ(mor::io::import_model(spec).report.find("B")->name, "Bmine");
}

TEST_F(ModelFilesTest, SingularMassOrDescriptorMatrixIsRefusedOnRequest) {
  using mor::InvalidArgument;
  const Matrix A = -2.0 * Matrix::Identity(4, 4), B = Matrix::Ones(4, 1), C = Matrix::Ones(1, 4);
  Matrix E = Matrix::Identity(4, 4);
  E(2, 2) = 0.0;  // a zero row: an algebraic equation
  const fs::path p = mat("dae.mat", {{"E", E}, {"A", A}, {"B", B}, {"C", C}});
  const ImportedModel dae = import_file(p);  // importing is fine; the check is separate
  EXPECT_TRUE(throws_with<InvalidArgument>(
      [&] { mor::io::check_nonsingular(first_order(dae), p.string()); },
      {p.string(), "E is singular (a differential-algebraic system", "4x4"}));
  // Not exactly singular, but far beyond what a solver can trust.
  E(2, 2) = 1e-17;
  const fs::path q = mat("near.mat", {{"E", E}, {"A", A}, {"B", B}, {"C", C}});
  EXPECT_TRUE(throws_with<InvalidArgument>(
      [&] { mor::io::check_nonsingular(first_order(import_file(q)), q.string()); },
      {q.string(), "E is singular", "condition"}));

  SecondOrderSystem so = random_second_order(6, 3);
  EXPECT_NO_THROW(mor::io::check_nonsingular(so, "so"));
  Matrix M(so.M);
  M.row(4).setZero();
  M.col(4).setZero();
  so.M = to_sparse(M);
  EXPECT_TRUE(throws_with<InvalidArgument>([&] { mor::io::check_nonsingular(so, "so.mat"); },
                                           {"so.mat", "M is singular", "6x6"}));
}

TEST_F(ModelFilesTest, SecondOrderConventions) {
  // The MORwiki second-order convention: damping named E, output named C.
  const SecondOrderSystem s = random_second_order(5, 1);
  const fs::path p = dir_ / "morwiki.mat";
  mor::io::write_mat(p, {{"M", s.M}, {"E", s.D}, {"K", s.K}, {"B", s.B}, {"C", s.Cp}});
  const ImportedModel m = import_file(p);
  EXPECT_EQ(m.report.form, ModelForm::second_order);
  const SecondOrderSystem r = second_order(m);
  EXPECT_TRUE(identical(r.D, s.D));
  EXPECT_TRUE(identical(r.Cp, s.Cp));
  EXPECT_TRUE(identical(r.Cv, SparseMatrix(2, 5)));
  EXPECT_EQ(m.report.find("D")->name, "E");
  ASSERT_EQ(m.report.warnings.size(), 1u);
  EXPECT_NE(m.report.warnings[0].find("damping D taken from the variable 'E'"), std::string::npos);
  EXPECT_EQ(m.report.find("M")->positive_definite, Verdict::yes);
  EXPECT_NE(mor::io::describe(m.report).find("warning: damping"), std::string::npos);
  // Forced first order: E is then the descriptor matrix, and there is no A.
  ModelFileSpec spec;
  spec.path = p;
  spec.form = ModelForm::first_order;
  EXPECT_TRUE(throws_with<mor::InvalidArgument>([&] { mor::io::import_model(spec); },
                                                {"morwiki.mat", "'A'", "B, C, E, K, M"}));
  // Wrong sizes in a second-order file.
  mor::io::write_mat(p, {{"M", s.M}, {"K", SparseMatrix(4, 4)}, {"B", s.B}, {"Cv", s.Cv}});
  EXPECT_TRUE(throws_with<mor::InvalidArgument>([&] { import_file(p); },
                                                {"morwiki.mat", "variable 'K'", "4x4", "5x5"}));
}

TEST_F(ModelFilesTest, BrokenMatrixMarketFilesAreIoErrors) {
  using mor::IoError;
  const auto read = [&](const std::string& name, const std::string& text) {
    const fs::path p = text_file(name, text);
    return [p] { mor::io::read_matrix_market(p); };
  };
  EXPECT_TRUE(throws_with<IoError>(read("banner.mtx",
                                        "%%MatrixMarket matrix coordinate real\n"
                                        "2 2 1\n1 1 1.0\n"),
                                   {"banner.mtx", "line 1", "bad banner"}));
  EXPECT_TRUE(throws_with<IoError>(read("nobanner.mtx", "2 2 1\n1 1 1.0\n"),
                                   {"nobanner.mtx", "not a MatrixMarket file"}));
  EXPECT_TRUE(throws_with<IoError>(
      read("range.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n3 1 2.0\n"),
      {"range.mtx", "line 4", "(3, 1) out of range"}));
  // CHOLMOD alone would read this file as 0-based.
  EXPECT_TRUE(throws_with<IoError>(
      read("zero.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n0 0 1.0\n1 1 2.0\n"),
      {"zero.mtx", "line 3", "out of range"}));
  EXPECT_TRUE(throws_with<IoError>(
      read("few.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.0\n2 2 2.0\n"),
      {"few.mtx", "ends after 2 of the 3 entries"}));
  EXPECT_TRUE(throws_with<IoError>(
      read("many.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1.0\n2 2 2.0\n"),
      {"many.mtx", "line 4", "more entries"}));
  EXPECT_TRUE(throws_with<IoError>(
      read("word.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0x\n"),
      {"word.mtx", "line 3", "'1.0x' is not a number"}));
  EXPECT_TRUE(throws_with<IoError>(
      read("upper.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1.0\n"),
      {"upper.mtx", "line 3", "on or below the diagonal"}));
  EXPECT_TRUE(throws_with<IoError>(
      read("array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n"),
      {"array.mtx", "ends after 3 of the 4 entries"}));
  EXPECT_TRUE(throws_with<IoError>([&] { mor::io::read_matrix_market(dir_ / "absent.mtx"); },
                                   {"absent.mtx", "no such"}));
  EXPECT_TRUE(throws_with<mor::InvalidArgument>(
      read("complex.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n"),
      {"complex.mtx", "complex"}));
  // A symmetric file comes back full; skew-symmetric too, with the sign.
  const SparseMatrix sym = mor::io::read_matrix_market(
      text_file("sym.mtx",
                "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2.5\n3 1 -1.25\n"
                "2 2 4\n"));
  EXPECT_TRUE(
      identical(sym, to_sparse((Matrix(3, 3) << 2.5, 0, -1.25, 0, 4, 0, -1.25, 0, 0).finished())));
  const SparseMatrix skew = mor::io::read_matrix_market(
      text_file("skew.mtx", "%%MatrixMarket matrix array real skew-symmetric\n2 2\n0.5\n"));
  EXPECT_TRUE(identical(skew, to_sparse((Matrix(2, 2) << 0, -0.5, 0.5, 0).finished())));

  // A model whose MatrixMarket B file is broken names that file.
  mor::io::write_matrix_market(dir_ / "m.A.mtx", to_sparse(-Matrix::Identity(2, 2)));
  mor::io::write_matrix_market(dir_ / "m.C.mtx", Matrix(Matrix::Ones(1, 2)));
  text_file("m.B.mtx", "%%MatrixMarket matrix array real general\n2 1\n1\n");
  EXPECT_TRUE(throws_with<IoError>([&] { import_file(dir_ / "m"); }, {"m.B.mtx", "ends after"}));
  EXPECT_TRUE(throws_with<IoError>([&] { import_file(dir_ / "nomodel"); },
                                   {"nomodel", "no MatrixMarket files"}));
}

TEST_F(ModelFilesTest, WritersRefuseBadInputAndKeepThePreviousFile) {
  const fs::path p = dir_ / "keep.mat";
  mor::io::write_mat(p, {{"A", Matrix(Matrix::Ones(2, 2))}});
  EXPECT_TRUE(throws_with<mor::InvalidArgument>(
      [&] {
        mor::io::write_mat(p, {{"A", Matrix(Matrix::Zero(2, 2))}, {"2bad", Matrix(1, 1)}});
      },
      {"keep.mat", "'2bad'"}));
  EXPECT_TRUE(throws_with<mor::InvalidArgument>(
      [&] {
        mor::io::write_mat(p, {{"A", Matrix(1, 1)}, {"A", Matrix(1, 1)}});
      },
      {"keep.mat", "'A' given twice"}));
  Matrix nan = Matrix::Ones(2, 2);
  nan(1, 0) = std::numeric_limits<double>::quiet_NaN();
  const fs::path q = dir_ / "keep.mtx";
  mor::io::write_matrix_market(q, Matrix(Matrix::Ones(2, 2)));
  EXPECT_TRUE(throws_with<mor::InvalidArgument>([&] { mor::io::write_matrix_market(q, nan); },
                                                {"keep.mtx", "(2, 1)", "nan"}));
  EXPECT_TRUE(throws_with<mor::IoError>(
      [&] {
        mor::io::write_mat(dir_ / "keep.mat" / "x.mat", {{"A", Matrix(1, 1)}});
      },
      {"keep.mat"}));
  // The previous files are untouched and no temporary is left.
  EXPECT_TRUE(identical(mor::io::read_mat_variable(p, "A").value, to_sparse(Matrix::Ones(2, 2))));
  EXPECT_TRUE(identical(mor::io::read_matrix_market(q), to_sparse(Matrix::Ones(2, 2))));
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos) << entry.path();
  // An extra with the name of a system variable is refused.
  const DescriptorSystem cd = first_order(import_file(data("CDplayer.mat")));
  EXPECT_TRUE(throws_with<mor::InvalidArgument>(
      [&] {
        mor::io::export_model(dir_ / "cd.mat", cd, ModelFileFormat::mat_v5,
                              {{"A", Matrix(Matrix::Ones(1, 1))}});
      },
      {"cd.mat", "'A'"}));
}

// ---------------------------------------------------------------------------------------------
// Named matrices as a stream of bytes (src/io/matrix_stream.hpp): how `mor export`'s reading
// child hands a results file's matrices to the parent that writes them.

/// Whether a and b hold the same names in order, of the same kind and size, with the same bits
/// (memcmp: -0.0, subnormals and the last bit count); the first difference otherwise.
::testing::AssertionResult bit_identical(const std::vector<NamedMatrix>& a,
                                         const std::vector<NamedMatrix>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << a.size() << " matrices against " << b.size();
  const auto same_bytes = [](const auto* x, const auto* y, Index n) {
    return n == 0 || std::memcmp(x, y, sizeof(*x) * static_cast<std::size_t>(n)) == 0;
  };
  for (std::size_t k = 0; k < a.size(); ++k) {
    const std::string which = "matrix " + std::to_string(k) + " ('" + a[k].name + "')";
    if (a[k].name != b[k].name)
      return ::testing::AssertionFailure() << which << " came back as '" << b[k].name << "'";
    if (a[k].value.index() != b[k].value.index())
      return ::testing::AssertionFailure() << which << " changed kind";
    if (const auto* x = std::get_if<Matrix>(&a[k].value)) {
      const auto& y = std::get<Matrix>(b[k].value);
      if (x->rows() != y.rows() || x->cols() != y.cols() ||
          !same_bytes(x->data(), y.data(), x->size()))
        return ::testing::AssertionFailure() << which << " differs";
      continue;
    }
    SparseMatrix x = std::get<SparseMatrix>(a[k].value);
    x.makeCompressed();
    const auto& y = std::get<SparseMatrix>(b[k].value);
    if (!y.isCompressed() || x.rows() != y.rows() || x.cols() != y.cols() ||
        x.nonZeros() != y.nonZeros() ||
        !same_bytes(x.outerIndexPtr(), y.outerIndexPtr(), x.cols() + 1) ||
        !same_bytes(x.innerIndexPtr(), y.innerIndexPtr(), x.nonZeros()) ||
        !same_bytes(x.valuePtr(), y.valuePtr(), x.nonZeros()))
      return ::testing::AssertionFailure() << which << " differs";
  }
  return ::testing::AssertionSuccess();
}

std::string encoded(const std::vector<NamedMatrix>& vars) {
  std::ostringstream out;
  mor::io::encode_matrices(out, vars);
  return std::move(out).str();
}

/// Dense and sparse matrices with values whose bits must survive (17 digits, -0.0, the smallest
/// subnormal, the extremes), empty shapes, a sparse matrix with empty columns and one left
/// uncompressed.
std::vector<NamedMatrix> stream_samples() {
  std::mt19937_64 random(29);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Matrix X(7, 5);
  for (Index k = 0; k < X.size(); ++k) X.data()[k] = u(random) * std::pow(10.0, k % 40 - 20);
  X(0, 0) = -0.0;
  X(1, 0) = 5e-324;
  X(2, 0) = std::numeric_limits<double>::max();
  X(3, 0) = -std::numeric_limits<double>::min();
  SparseMatrix S(6, 9);
  S.insert(5, 0) = 1.0 / 3.0;
  S.insert(0, 4) = -2.5e-300;
  S.insert(3, 4) = 7.0;
  S.insert(2, 8) = -0.0;
  SparseMatrix compressed = S;
  compressed.makeCompressed();
  return {{"A", X},
          {"B", Matrix(Matrix::Ones(3, 1))},
          {"E0", Matrix(0, 4)},
          {"none", Matrix(3, 0)},
          {"S_uncompressed", S},
          {"Sc", compressed},
          {"Z", SparseMatrix(4, 0)},
          {"hsv", Matrix(Matrix::Constant(1, 1, 0.1))}};
}

TEST(MatrixStream, RoundTripsBitForBit) {
  const auto vars = stream_samples();
  EXPECT_TRUE(bit_identical(vars, mor::io::decode_matrices(encoded(vars))));
  EXPECT_TRUE(bit_identical({}, mor::io::decode_matrices(encoded({}))));
  // A large dense block (a basis) too: 2 x 10^5 values.
  Matrix V = Matrix::Random(40000, 5);
  V(39999, 4) = -0.0;
  const std::vector<NamedMatrix> basis = {{"V", V}};
  EXPECT_TRUE(bit_identical(basis, mor::io::decode_matrices(encoded(basis))));
  // A name the stream could not carry (it becomes part of a file name) is refused on writing.
  std::ostringstream out;
  EXPECT_THROW(mor::io::encode_matrices(out, {{"../x", Matrix(Matrix::Zero(1, 1))}}),
               mor::InvalidArgument);
}

// Every prefix of a stream (a child killed while writing it) is refused with one plain line;
// so are streams bent in each field, a claim of more than the stream holds (before anything of
// that size is allocated), a name that is no variable name, a NaN, and bytes after the end.
TEST(MatrixStream, TruncatedOrMalformedStreamsAreRefusedPlainly) {
  const std::string whole = encoded(stream_samples());
  for (std::size_t n = 0; n < whole.size(); ++n) {
    const auto refused = throws_with<mor::IoError>(
        [&] { mor::io::decode_matrices(std::string_view(whole).substr(0, n)); },
        {n < 8 ? "the stream ends at byte " + std::to_string(n) + " in its header"
               : "the stream ends at byte " + std::to_string(n)});
    // The header is checked first: a prefix of 8 bytes or more names the byte it ends at.
    EXPECT_TRUE(refused) << "prefix of " << n << " of " << whole.size() << " bytes";
  }
  // The fields of a one-matrix stream: header 0-7, count 8-15, name length 16-23, name 24,
  // kind 25, rows 26-33, cols 34-41, then the values.
  const std::string one = encoded({{"A", Matrix(Matrix::Constant(2, 3, 1.5))}});
  ASSERT_EQ(one.size(), 42u + 6 * 8);
  const auto bent = [&](std::size_t at, const void* bytes, std::size_t n) {
    std::string s = one;
    s.replace(at, n, static_cast<const char*>(bytes), n);
    return s;
  };
  const std::uint64_t huge = std::uint64_t{1} << 62;
  const std::int64_t minus_one = -1, many = std::int64_t{1} << 40;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const struct {
    std::string stream;
    std::vector<std::string> parts;
  } cases[] = {
      {"MORMATS1" + one.substr(8), {"does not start with the header"}},
      {one.substr(0, 60),
       {"the stream ends at byte 60 in 'A' (dense, 2 x 3), which needs 48 bytes (18 are left)"}},
      {bent(8, &huge, 8),
       {"the stream ends at byte 90 in the name of matrix 2 of 4611686018427387904"}},
      {bent(16, &huge, 8), {"the name of matrix 1 of 1 claims 4611686018427387904 characters"}},
      {bent(24, "/", 1), {"the name of matrix 1 of 1 is not a variable name"}},
      {bent(25, "X", 1), {"'A' (matrix 1 of 1) has kind 88 and size 2 x 3"}},
      {bent(26, &minus_one, 8), {"'A' (matrix 1 of 1) has kind 68 and size -1 x 3"}},
      {bent(34, &many, 8),
       {"the stream ends at byte 90 in 'A' (dense, 2 x 1099511627776), which needs 17592186044416 "
        "bytes (48 are left)"}},
      {bent(26, &many, 8), {"in 'A' (dense, 1099511627776 x 3), which needs 26388279066624 bytes"}},
      {bent(42 + 8 * 4, &nan, 8), {"'A' (dense, 2 x 3) holds nan at (1, 3)"}},
      {one + "x", {"the stream goes on for 1 bytes after its 1 matrices"}},
      {encoded({{"A", Matrix(Matrix::Zero(1, 1))}, {"B", Matrix(Matrix::Zero(1, 1))}})
           .replace(58, 1, "A"),
       {"'A' comes twice"}},
  };
  for (const auto& c : cases)
    EXPECT_TRUE(throws_with<mor::IoError>([&] { mor::io::decode_matrices(c.stream); }, c.parts));
  // An empty matrix of 2^40 columns holds no value: decoded at once (a check that walked the
  // columns took minutes; found by mutating streams under ASan).
  std::string empty = encoded({{"E", Matrix(0, 3)}});
  empty.replace(34, 8, reinterpret_cast<const char*>(&many), 8);
  const auto wide = mor::io::decode_matrices(empty);
  ASSERT_EQ(wide.size(), 1u);
  EXPECT_EQ(std::get<Matrix>(wide[0].value).cols(), many);
  // A sparse matrix whose structure is bent: a row index out of range, out of order, column
  // starts that do not add up.
  SparseMatrix S(3, 2);
  S.insert(0, 0) = 1.0;
  S.insert(2, 0) = 2.0;
  S.insert(1, 1) = 3.0;
  S.makeCompressed();
  const std::string sparse = encoded({{"S", S}});
  // Header 8, count 8, name 8 + 1, kind 1, rows 8, cols 8, nonzeros 8 = 50; column starts
  // 0, 2, 3 at 50, 54, 58; row indices 0, 2, 1 at 62, 66, 70; values.
  const auto bent_int = [&](std::size_t at, int value) {
    std::string s = sparse;
    s.replace(at, 4, reinterpret_cast<const char*>(&value), 4);
    return s;
  };
  EXPECT_TRUE(throws_with<mor::IoError>([&] { mor::io::decode_matrices(bent_int(62, 3)); },
                                        {"'S' (sparse, 3 x 2): row index 3 of column 1"}));
  EXPECT_TRUE(
      throws_with<mor::IoError>([&] { mor::io::decode_matrices(bent_int(66, 0)); },
                                {"row index 0 of column 1 is out of range or out of order"}));
  EXPECT_TRUE(throws_with<mor::IoError>([&] { mor::io::decode_matrices(bent_int(58, 2)); },
                                        {"column starts run from 0 to 2, not from 0 to its 3"}));
  // A column start past the end (read before the last start is known to be smaller).
  EXPECT_TRUE(throws_with<mor::IoError>([&] { mor::io::decode_matrices(bent_int(54, 4)); },
                                        {"column 2 starts at 4 and ends at 3"}));
}

// CHOLMOD's MatrixMarket writer costs microseconds a value; a stop request ends it within a
// buffer of output (its FILE fails the writes) instead of after the whole matrix. The stopped
// write of a dense block of 5 x 10^4 values must take under a tenth of the complete one, measured
// in the same test (so the machine's load cancels), and leave no temporary.
TEST_F(ModelFilesTest, StopRequestEndsCholmodsWritingAtOnce) {
  using Clock = std::chrono::steady_clock;
  const Matrix V = Matrix::Random(10000, 5);
  const fs::path file = dir_ / "v.mtx";
  auto start = Clock::now();
  mor::io::write_matrix_market(file, V);
  const double whole = std::chrono::duration<double>(Clock::now() - start).count();
  mor::g_stop_requested.store(true);
  start = Clock::now();
  const auto stopped =
      throws_with<mor::Interrupted>([&] { mor::io::write_matrix_market(dir_ / "w.mtx", V); },
                                    {"writing '", "w.mtx' interrupted"});
  const double cut = std::chrono::duration<double>(Clock::now() - start).count();
  mor::g_stop_requested.store(false);
  EXPECT_TRUE(stopped);
  EXPECT_LT(cut, whole / 10) << "stopped after " << cut << " s; the whole write took " << whole
                             << " s";
  EXPECT_FALSE(fs::exists(dir_ / "w.mtx"));
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos) << entry.path();
}

}  // namespace
