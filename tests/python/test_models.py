# SPDX-License-Identifier: GPL-3.0-or-later
"""Models between SciPy / NumPy and mor: round trips of every form (values and sparsity kept),
what is copied and what is a view, and the validation errors."""
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import mor
from conftest import ASAN_PRELOAD, data, python_env, random_stable


def assert_same_sparse(got, want, name):
    """Same shape, same stored pattern (after dropping explicit zeros) and the same values."""
    got, want = sp.csc_matrix(got), sp.csc_matrix(want)
    want.eliminate_zeros()
    want.sort_indices()
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    assert got.nnz == want.nnz, f"{name}: nnz {got.nnz} != {want.nnz}"
    assert np.array_equal(got.indptr, want.indptr), f"{name}: column pointers differ"
    assert np.array_equal(got.indices, want.indices), f"{name}: row indices differ"
    assert np.array_equal(got.data, want.data), f"{name}: values differ"


FORMS = {
    "csc": lambda X: sp.csc_matrix(X),
    "csr": lambda X: sp.csr_matrix(X),
    "coo": lambda X: sp.coo_matrix(X),
    "csc_int64": lambda X: sp.csc_matrix(
        (X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)), shape=X.shape),
    "dense_c": lambda X: np.ascontiguousarray(X.toarray()),
    "dense_f": lambda X: np.asfortranarray(X.toarray()),
    "float32": lambda X: X.toarray().astype(np.float32),
}


@pytest.mark.parametrize("form", FORMS)
def test_lti_round_trip(form):
    E, A, B, C = random_stable(30, 2, 3, seed=1)
    D = np.arange(6.0).reshape(3, 2)
    convert = FORMS[form]
    if form == "float32":
        E, A = (sp.csc_matrix(X.toarray().astype(np.float32).astype(np.float64)) for X in (E, A))
    m = mor.LtiModel(A=convert(A), B=B, C=C, E=convert(E), D=D)
    assert (m.n, m.first_order, m.kind) == (30, True, "memory")
    assert_same_sparse(m.A, A, "A")
    assert_same_sparse(m.E, E, "E")
    assert_same_sparse(m.B, B, "B")
    assert_same_sparse(m.C, C, "C")
    assert np.array_equal(m.D, D)


def test_lti_defaults_and_vectors():
    E, A, B, C = random_stable(10, 1, 1, seed=2)
    m = mor.LtiModel(A=A, B=B[:, 0], C=C[0])  # 1-D B is a column, 1-D C a row
    assert m.B.shape == (10, 1) and m.C.shape == (1, 10)
    assert_same_sparse(m.E, sp.identity(10), "E")
    assert np.array_equal(m.D, np.zeros((1, 1)))


def test_second_order_round_trip():
    n = 12
    K = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csc")
    M = sp.identity(n, format="csc") * 2.0
    D = 0.1 * K
    B = np.zeros((n, 1))
    B[-1] = 1
    Cp = np.eye(1, n, n - 1)
    Cv = np.eye(1, n, 0)
    m = mor.SecondOrderModel(M=M, D=D, K=K, B=B, Cp=Cp, Cv=Cv)
    assert (m.n, m.first_order) == (n, False)
    for name, X in dict(M=M, D=D, K=K, B=B, Cp=Cp, Cv=Cv).items():
        assert_same_sparse(getattr(m, name), X, name)
    with pytest.raises(AttributeError, match="has no matrix A"):
        m.A


def test_returned_matrices_are_views_of_the_library():
    """model.A is a read-only view of the library's CSC arrays: two reads share memory."""
    E, A, B, C = random_stable(20, 1, 1, seed=3)
    m = mor.LtiModel(A=A, B=B, C=C, E=E)
    a1, a2 = m.A, m.A
    assert np.shares_memory(a1.data, a2.data) and np.shares_memory(a1.indices, a2.indices)
    assert not a1.data.flags.writeable
    assert not np.shares_memory(a1.data, A.data)  # the library owns its copy
    rom = mor.reduce(m, "bt", order=3)
    assert np.shares_memory(rom.A, rom.A) and not rom.A.flags.writeable
    assert rom.A.flags.f_contiguous


@pytest.mark.skipif(ASAN_PRELOAD is not None, reason="the sanitizers' shadow memory and "
                    "quarantine change the peak it measures")
def test_one_copy_of_a_large_csc_input():
    """Peak memory: a CSC float64/int32 input costs one copy (the library's), not two."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import resource, numpy as np, scipy.sparse as sp, mor
        n = 2_000_000
        A = sp.diags([-np.ones(n - 1), -4 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csc")
        A.indices = A.indices.astype(np.int32); A.indptr = A.indptr.astype(np.int32)
        b = np.ones(n); c = np.ones(n)
        size = A.data.nbytes + A.indices.nbytes + A.indptr.nbytes
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        m = mor.LtiModel(A=A, B=b, C=c)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(size, after - before)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=python_env(), check=True).stdout.split()
    size, growth = int(out[0]), int(out[1])
    # A's copy and E = I (0.4 of A's size): 1.4 copies; a second copy of A would make it 2.4.
    assert growth < 2.0 * size, f"peak memory grew by {growth} bytes for a {size}-byte matrix"


def test_load_model_as_the_file_kind():
    import scipy.io

    m = mor.load_model(data("rail_371.mat"))
    d = scipy.io.loadmat(data("rail_371.mat"))
    assert m.kind == "file" and m.n == 371
    for name in "EABC":
        assert_same_sparse(m.matrix(name), d[name], name)


def test_chain_keys():
    m = mor.Chain(N=50, k_n=0.0)
    assert (m.kind, m.n, m.is_linear) == ("mass_spring_chain", 50, True)
    assert "N = 50" in m.toml()
    assert m.M.shape == (50, 50) and m.K.nnz == 3 * 50 - 2
    assert not mor.Chain(N=10, k_n=2.0).is_linear


def test_bad_shapes():
    E, A, B, C = random_stable(10, 1, 1, seed=4)
    with pytest.raises(ValueError) as e:
        mor.LtiModel(A=A, B=np.ones((9, 1)), C=C)
    assert "B" in str(e.value) and "9" in str(e.value), str(e.value)
    with pytest.raises(ValueError, match="dimensions"):
        mor.LtiModel(A=np.ones((2, 2, 2)), B=B, C=C)


def test_non_square_A_without_E_is_refused_and_the_interpreter_goes_on():
    """A 50 x 49 A with E left out: a ValueError naming the shapes, and the process stays sound
    (issue 44: the identity E was sized from A and overran its arrays; the interpreter aborted
    later with "munmap_chunk(): invalid pointer"). Run in a child interpreter, whose exit code
    shows a corrupted heap."""
    code = (
        "import numpy as np, mor, gc\n"
        "for _ in range(20):\n"
        "    try:\n"
        "        mor.LtiModel(A=np.ones((50, 49)), B=np.ones((50, 1)), C=np.ones((1, 50)))\n"
        "    except ValueError as e:\n"
        "        msg = str(e)\n"
        "    gc.collect()\n"
        "x = [np.ones((100, 100)) for _ in range(50)]\n"
        "print(msg)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=python_env(), timeout=120)
    assert p.returncode == 0, (p.returncode, p.stderr)
    assert "A is 50x49" in p.stdout and "n x n" in p.stdout, p.stdout


def test_non_finite_entries():
    E, A, B, C = random_stable(10, 1, 1, seed=5)
    A = A.tolil()
    A[3, 4] = np.nan
    with pytest.raises(ValueError, match=r"mor.LtiModel: A\(4, 5\) = nan is not finite"):
        mor.LtiModel(A=A.tocsc(), B=B, C=C)
    Cbad = C.copy()
    Cbad[0, 2] = np.inf
    with pytest.raises(ValueError, match=r"C\(1, 3\) = inf is not finite"):
        mor.LtiModel(A=-np.eye(10), B=B, C=Cbad)


def test_singular_E():
    E, A, B, C = random_stable(10, 1, 1, seed=6)
    with pytest.raises(ValueError, match="E is singular"):
        mor.LtiModel(A=A, B=B, C=C, E=sp.diags(np.r_[np.ones(9), 0.0]))


def test_model_key_errors():
    with pytest.raises(ValueError, match=r"unknown key 'model.NN'.*did you mean 'model.N'"):
        mor.Chain(NN=10)
    with pytest.raises(ValueError, match="model.N must be an integer"):
        mor.Chain(N="ten")
    with pytest.raises(ValueError, match="did you mean 'mass_spring_chain'"):
        mor.model("mass_spring_chian")
    with pytest.raises(OSError, match="no_such_file"):
        mor.load_model("no_such_file.mat")
