"""PCA and IncrementalPCA against scikit-learn, by explained variance and subspace angles."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
import sklearn.decomposition as skd

import dndask as ht
import dndask.heat as hf
from dndask.base import is_estimator, is_transformer

RNG = np.random.default_rng(20261206)


def data(n=40, f=6, dtype=np.float64, tail=1.0):
    """Samples with three strong directions; ``tail`` scales the other three."""
    scales = np.array([5.0, 3.0, 1.0, 0.5 * tail, 0.1 * tail, 0.05 * tail])[:f]
    return (RNG.standard_normal((n, f)) * scales + 2.0).astype(dtype)


def same_rows_up_to_sign(a: np.ndarray, b: np.ndarray, atol: float) -> None:
    signs = np.sign(np.sum(a * b, axis=1, keepdims=True))
    np.testing.assert_allclose(a * signs, b, atol=atol)


@pytest.mark.parametrize(
    ("n", "split", "solver", "dtype"),
    [
        (1, None, "full", np.float64),
        (3, 0, "full", np.float32),
        (5, 0, "hierarchical", np.float64),
        (2, 1, "full", np.float64),
        (4, 0, "randomized", np.float64),
    ],
)
def test_pca_matches_scikit_learn(comm_of, n, split, solver, dtype):
    # the hierarchical SVD is approximate: exact only when the cut directions are negligible
    x_np = data(dtype=dtype, tail=1e-6 if solver == "hierarchical" else 1.0)
    pca = ht.decomposition.PCA(n_components=3, svd_solver=solver, n_oversamples=3)
    pca.fit(ht.array(x_np, split=split, comm=comm_of(n)))
    ref = skd.PCA(n_components=3).fit(x_np.astype(np.float64))
    atol = 1e-3 if dtype == np.float32 or solver != "full" else 1e-8
    np.testing.assert_allclose(
        pca.explained_variance_.numpy(), ref.explained_variance_, rtol=atol * 10
    )
    np.testing.assert_allclose(
        pca.explained_variance_ratio_.numpy(), ref.explained_variance_ratio_, rtol=atol * 10
    )
    same_rows_up_to_sign(pca.components_.numpy(), ref.components_, atol * 10)
    np.testing.assert_allclose(pca.mean_.numpy(), ref.mean_, atol=1e-5)
    x = ht.array(x_np, split=split, comm=comm_of(n))
    back = pca.inverse_transform(pca.transform(x)).numpy()
    np.testing.assert_allclose(back, ref.inverse_transform(ref.transform(x_np)), atol=atol * 100)


def test_pca_variance_share(comm_of):
    x_np = data()
    pca = ht.decomposition.PCA(n_components=0.9, svd_solver="full").fit(
        ht.array(x_np, split=0, comm=comm_of(3))
    )
    ref = skd.PCA(n_components=0.9, svd_solver="full").fit(x_np)
    assert pca.n_components_ == ref.n_components_


def test_incremental_pca_matches_scikit_learn(comm_of):
    comm = comm_of(3)
    x_np = data(60)
    ipca = ht.decomposition.IncrementalPCA(n_components=3)
    ref = skd.IncrementalPCA(n_components=3)
    for start in (0, 20, 40):
        batch = x_np[start : start + 20]
        ipca.partial_fit(ht.array(batch, split=0, comm=comm))
        ref.partial_fit(batch)
    assert ipca.n_samples_seen_ == 60
    np.testing.assert_allclose(ipca.singular_values_.numpy(), ref.singular_values_, rtol=1e-8)
    same_rows_up_to_sign(ipca.components_.numpy(), ref.components_, 1e-8)
    np.testing.assert_allclose(ipca.mean_.numpy(), ref.mean_, atol=1e-10)


def test_bad_inputs(comm_of):
    with pytest.raises(ValueError, match="`svd_solver` must be one of"):
        ht.decomposition.PCA(svd_solver="arpack")
    with pytest.raises(ValueError, match="`n_components` as a float must be in"):
        ht.decomposition.PCA(n_components=1.5)
    with pytest.raises(RuntimeError, match="not fitted yet"):
        ht.decomposition.PCA().transform(ht.ones((3, 2), comm=comm_of(1)))
    x = ht.array(data(4), split=0, comm=comm_of(2))
    with pytest.raises(
        ValueError, match=r"`n_components` must be at most min\(n_samples, n_features\) = 4"
    ):
        ht.decomposition.PCA(n_components=5, svd_solver="full").fit(x)


def test_estimator_protocol_and_heat_checks(comm_of, tmp_path):
    """The face's are scikit-learn transformers; ``y`` must be None; a reduced ``X`` of the
    wrong type or width is a TypeError/ValueError; IncrementalPCA keeps at most the rank
    its data can have (Heat's), its attributes None before the first batch."""
    comm = comm_of(3)
    for est in (hf.decomposition.PCA(), hf.decomposition.IncrementalPCA()):
        assert is_estimator(est) and is_transformer(est)
        assert set(est.get_params()) >= {"n_components", "copy", "whiten"}
    x_np = data(30)
    x = ht.array(x_np, split=0, comm=comm)
    pca = ht.decomposition.PCA(n_components=2, svd_solver="full")
    with pytest.raises(ValueError, match="`y` is not used by a PCA"):
        pca.fit(x, x)
    pca.fit(x)
    with pytest.raises(TypeError, match="`X` must be a DNDarray"):
        pca.inverse_transform("abc")
    with pytest.raises(ValueError, match="2 columns"):
        pca.inverse_transform(ht.ones((3, 6), comm=comm))
    ipca = ht.decomposition.IncrementalPCA(n_components=10)
    assert ipca.components_ is None and ipca.mean_ is None and ipca.n_components_ is None
    with pytest.raises(ValueError, match="`y` is not used by a PCA"):
        ipca.partial_fit(x, y="labels")
    ipca.partial_fit(ht.array(x_np[:4], split=0, comm=comm))
    assert ipca.n_components_ == 4  # four samples: rank 4 at most
    ipca.partial_fit(ht.array(x_np[4:], split=0, comm=comm))
    assert ipca.n_components_ == 6  # six features
    ref = np.linalg.svd(x_np - x_np.mean(axis=0), compute_uv=False)
    np.testing.assert_allclose(ipca.singular_values_.numpy(), ref, rtol=1e-8)
    with pytest.raises(ValueError, match="6 columns"):
        ipca.inverse_transform(ht.ones((2, 5), comm=comm))


def test_face_pca_heat_rules(comm_of, tmp_path):
    """The face: ``random_state`` seeds the generator, the hierarchical solver needs rows
    split, and IncrementalPCA.fit reads an HDF5 file in blocks of rows."""
    comm = comm_of(3)
    hf.decomposition.PCA(svd_solver="randomized", random_state=1234)
    assert hf.random.get_state()[1] == 1234
    x_np = data(31)
    with pytest.raises(ValueError, match="split along axis 0"):
        hf.decomposition.PCA(n_components=2).fit(hf.array(x_np, split=1, comm=comm))
    path = tmp_path / "x.h5"
    with h5py.File(path, "w") as f:
        f["data"] = x_np
    ipca = hf.decomposition.IncrementalPCA(n_components=10)  # more than the 6 features
    ipca.fit(path=str(path), chunk_size=10, dataset="data")
    assert ipca.n_samples_seen_ == 31 and ipca.n_components_ == 6
    ref = np.linalg.svd(x_np - x_np.mean(axis=0), compute_uv=False)
    np.testing.assert_allclose(ipca.singular_values_.numpy(), ref, rtol=1e-8)
    with pytest.raises(ValueError, match="`chunk_size` must be at most the 31 rows"):
        ipca.fit(path=str(path), chunk_size=40, dataset="data")
    with pytest.raises(ValueError, match="must name an HDF5 file"):
        ipca.fit(path=str(tmp_path / "x.txt"), chunk_size=5)
