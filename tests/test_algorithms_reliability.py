"""Fits survive a lost worker: the fit goes on and gives the undisturbed cluster's result.

The tests kill a worker process of the dedicated 3-worker cluster (conftest's ``lost``
fixture, as tests/test_reliability.py does) either while a pass of the fit runs on it
(``slow_blocks`` + ``kill_when_busy``) or between two iterations, when the data the fit
persisted is held by that worker only. Dask recomputes the lost chunks from their graph on
the worker that takes the rank over. The data is made on the workers (random draws), as
read from files would be: a chunk sent from the driver has no graph to recompute it from
(see test_reliability's ``test_driver_data_on_a_lost_worker_is_a_clear_error``).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import kill_when_busy, slow_blocks, wait_until, worker_names
from sklearn.cluster import KMeans as SkKMeans
from sklearn.linear_model import Lasso as SkLasso
from sklearn.naive_bayes import GaussianNB as SkGaussianNB

import dndask as ht
from dndask import _dndarray
from dndask.cluster import KMeans
from dndask.naive_bayes import GaussianNB
from dndask.regression import Lasso
from dndask.utils.data.spherical import create_spherical_dataset

INIT = np.array([[3.0, 3.0, 3.0], [9.0, 9.0, 9.0], [-3.0, -3.0, -3.0], [-9.0, -9.0, -9.0]])


def spheres(comm: ht.Comm) -> ht.DNDarray:
    """Four noisy balls (120, 3), drawn on the workers, split along the samples."""
    return create_spherical_dataset(30, radius=2.5, offset=4.0, dtype=np.float64, comm=comm)


def slowed(x: ht.DNDarray, marks, delay: float = 1.0) -> ht.DNDarray:
    """``x`` whose chunks each take ``delay`` s to make (they mark the worker making them).

    ``x`` is persisted first, so that the slow tasks run where its chunks are.
    """
    x = x.persist(wait=True)
    return _dndarray.from_dask(slow_blocks(x.to_dask(), marks, delay), x.split, x.comm, (x,))


class KilledKMeans(KMeans):
    """k-means that kills rank 1's worker after its second iteration (then goes on)."""

    def __init__(self, spare=None, **params):
        super().__init__(**params)
        self._spare, self._steps = spare, 0

    def _step(self, x, centers):
        self._steps += 1
        if self._steps == 3:  # the persisted data of rank 1 dies with its worker
            self._spare.kill(x.comm.workers[1])
        return super()._step(x, centers)


def check_kmeans(km: KMeans, reference: KMeans, data: np.ndarray, init=INIT) -> None:
    np.testing.assert_allclose(km.cluster_centers_.numpy(), reference.cluster_centers_.numpy())
    np.testing.assert_array_equal(km.labels_.numpy(), reference.labels_.numpy())
    assert km.n_iter_ == reference.n_iter_
    assert km.inertia_ == pytest.approx(reference.inertia_, rel=1e-12)
    sk = SkKMeans(n_clusters=4, init=init, n_init=1, tol=0.0, max_iter=300).fit(data)
    np.testing.assert_allclose(km.cluster_centers_.numpy(), sk.cluster_centers_, atol=1e-10)
    np.testing.assert_array_equal(km.labels_.numpy(), sk.labels_)
    assert km.inertia_ == pytest.approx(sk.inertia_, rel=1e-10)


@pytest.mark.timeout(240)
def test_kmeans_fit_survives_a_worker_killed_during_a_pass(lost, tmp_path):
    comm = lost.comm()
    ht.random.seed(4)
    x = spheres(comm)
    data = x.numpy()
    reference = KMeans(n_clusters=4, init=INIT, tol=0.0).fit(x)
    killer = kill_when_busy(lost, comm.workers[1], tmp_path)
    km = KMeans(n_clusters=4, init=INIT, tol=0.0).fit(slowed(x, tmp_path))
    killer.assert_killed()
    check_kmeans(km, reference, data)
    lost.healed(comm.workers[1])


@pytest.mark.timeout(240)
def test_kmeans_fit_survives_losing_its_persisted_data_between_iterations(lost):
    comm = lost.comm()
    ht.random.seed(5)
    x = spheres(comm)
    data = x.numpy()
    init = data[[0, 30, 31, 32]]  # three in one ball: 5 iterations, none empty
    reference = KMeans(n_clusters=4, init=init, tol=0.0).fit(x)
    assert reference.n_iter_ >= 3  # the kill falls inside the fit
    victim = comm.workers[1]
    km = KilledKMeans(lost, n_clusters=4, init=init, tol=0.0).fit(x)
    assert km._steps == reference.n_iter_
    check_kmeans(km, reference, data, init)
    assert victim not in lost.client.scheduler_info()["workers"]
    lost.healed(victim)


@pytest.mark.timeout(240)
def test_lasso_fit_survives_a_worker_killed_during_its_pass(lost, tmp_path):
    comm = lost.comm()
    ht.random.seed(6)
    f = ht.random.randn(90, 4, dtype=ht.float64, split=0, comm=comm)
    f = (f - f.mean(axis=0)) / f.std(axis=0)  # Heat's updates assume unit columns
    noise = ht.random.randn(90, dtype=ht.float64, split=0, comm=comm)
    y = f @ ht.array([1.5, 0.0, -2.0, 0.3], comm=comm) + 0.1 * noise
    x = ht.concatenate([ht.ones((90, 1), dtype=ht.float64, split=0, comm=comm), f], axis=1)
    xs, ys = x.numpy(), y.numpy()
    reference = Lasso(lam=0.05, max_iter=1000, tol=1e-12).fit(x, y)
    killer = kill_when_busy(lost, comm.workers[1], tmp_path)
    est = Lasso(lam=0.05, max_iter=1000, tol=1e-12).fit(slowed(x, tmp_path), y)
    killer.assert_killed()
    np.testing.assert_allclose(est.theta.numpy(), reference.theta.numpy(), rtol=1e-12)
    assert est.n_iter == reference.n_iter
    # Heat's objective is scikit-learn's, the intercept (column 0) unpenalized
    sk = SkLasso(alpha=0.05, tol=1e-14, max_iter=100000).fit(xs[:, 1:], ys)
    np.testing.assert_allclose(est.theta.numpy()[1:, 0], sk.coef_, atol=1e-8)
    assert est.theta.numpy()[0, 0] == pytest.approx(sk.intercept_, abs=1e-8)
    lost.healed(comm.workers[1])


@pytest.mark.timeout(240)
def test_gaussian_nb_fit_survives_a_worker_killed_during_its_pass(lost, tmp_path):
    comm = lost.comm()
    ht.random.seed(7)
    x = spheres(comm)
    y = ht.repeat(ht.arange(4, split=0, comm=comm), 30)  # the ball of each row
    xs, ys = x.numpy(), y.numpy()
    reference = GaussianNB().fit(x, y)
    killer = kill_when_busy(lost, comm.workers[2], tmp_path)
    gnb = GaussianNB().fit(slowed(x, tmp_path), y)
    killer.assert_killed()
    for name in ("theta_", "var_", "class_prior_", "class_count_"):
        np.testing.assert_allclose(
            getattr(gnb, name).numpy(), getattr(reference, name).numpy(), rtol=1e-12
        )
    sk = SkGaussianNB().fit(xs, ys)
    np.testing.assert_allclose(gnb.theta_.numpy(), sk.theta_, rtol=1e-10)
    np.testing.assert_allclose(gnb.var_.numpy(), sk.var_, rtol=1e-10)
    np.testing.assert_array_equal(gnb.predict(x).numpy(), sk.predict(xs))
    lost.healed(comm.workers[2])


@pytest.mark.timeout(240)
def test_a_fit_on_driver_data_of_a_lost_worker_is_a_clear_error(lost):
    """Driver data has no graph to recompute: the fit raises the array's lost-worker error."""
    comm = lost.comm()
    data = np.random.default_rng(2).normal(size=(40, 3))
    x = ht.array(data, split=0, comm=comm)
    victim = comm.workers[2]
    lost.kill(victim)
    wait_until(lambda: victim not in worker_names(lost.client), 30, "the loss to be noticed")
    km = KMeans(n_clusters=4, init=INIT)
    with pytest.raises(RuntimeError, match=r"chunk of rank 2 \(worker .*\) is lost: it was sent"):
        km.fit(x)
    assert km.cluster_centers_ is None
    lost.healed(victim)
