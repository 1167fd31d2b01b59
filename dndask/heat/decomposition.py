"""Heat's ``ht.decomposition``: the core's PCA, IncrementalPCA, DMD and DMDc with Heat's
constructor arguments and face arrays as fitted attributes."""

from __future__ import annotations

import numbers

from .. import _dndarray
from .. import base as _estimators
from .. import decomposition as _core
from .. import load_hdf5 as _load_hdf5
from ..decomposition import _dmd
from . import _adapt, io
from . import random as _random

__all__ = ["DMD", "DMDc", "IncrementalPCA", "PCA"]


class _Faced:
    """Fitted attributes (ending in ``_``) as face arrays."""

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        return _adapt.face(value) if name.endswith("_") and not name.startswith("_") else value


class PCA(_Faced, _estimators.TransformMixin, _estimators.BaseEstimator, _core.PCA):
    """Heat's ``PCA``: ``copy``/``whiten``/``tol``/``power_iteration_normalizer`` are checked
    as Heat checks them (only their defaults are supported, as in Heat); a scikit-learn
    transformer (``ht.is_estimator``, ``ht.is_transformer``, ``get_params``)."""

    def __init__(
        self,
        n_components=None,
        copy=True,
        whiten=False,
        svd_solver="hierarchical",
        tol=None,
        iterated_power=0,
        n_oversamples=10,
        power_iteration_normalizer="qr",
        random_state=None,
    ):
        if not copy:
            raise NotImplementedError("`copy=False` is not supported (as in Heat)")
        if whiten:
            raise NotImplementedError("`whiten=True` is not supported (as in Heat)")
        if power_iteration_normalizer != "qr":
            raise ValueError("`power_iteration_normalizer` must be 'qr' (as in Heat)")
        if tol is not None:
            raise ValueError("`tol` must be None (as in Heat)")
        if random_state is not None and not isinstance(random_state, int):
            raise ValueError(f"`random_state` must be None or an int, got {random_state!r}")
        if not isinstance(iterated_power, int):
            raise TypeError(f"`iterated_power` must be an int, got {type(iterated_power).__name__}")
        try:
            super().__init__(
                n_components,
                svd_solver=svd_solver,
                iterated_power=iterated_power,
                n_oversamples=n_oversamples,
            )
        except TypeError as error:  # Heat raises ValueError for a bad n_components type
            raise ValueError(str(error)) from error
        self.copy, self.whiten, self.tol = copy, whiten, tol
        self.power_iteration_normalizer, self.random_state = (
            power_iteration_normalizer,
            random_state,
        )
        if random_state is not None:  # Heat seeds its generator here
            _random.seed(random_state)

    def fit(self, X, y=None):
        """The core's fit, with Heat's rules: the hierarchical solver takes data split along
        its rows only (``ValueError``), and data that is not distributed goes through the
        full SVD whatever the solver; the attributes Heat leaves unset for a distributed
        fit with another solver are None (only the full solver reports variances;
        ``noise_variance_`` is never computed)."""
        if not isinstance(X, _dndarray.DNDarray):
            raise TypeError(f"`X` must be a DNDarray, got {type(X).__name__}")
        distributed = X.is_distributed()
        if self.svd_solver == "hierarchical" and distributed and X.split != 0:
            raise ValueError(
                f"PCA with svd_solver='hierarchical' needs data split along axis 0 (as in "
                f"Heat), got split {X.split}"
            )
        solver = self.svd_solver
        if not distributed:
            self.svd_solver = "full"
        try:
            super().fit(X, y)
        finally:
            self.svd_solver = solver
        self.noise_variance_ = None
        if distributed and self.svd_solver != "full":
            self.explained_variance_ = self.explained_variance_ratio_ = None
            self.singular_values_ = None
        if distributed and self.svd_solver == "randomized":
            self.total_explained_variance_ratio_ = None
        return self

    def transform(self, X):
        return _adapt.face(super().transform(X))

    def fit_transform(self, X, y=None):
        return _adapt.face(self.fit(X).transform(X))

    def inverse_transform(self, X):
        return _adapt.face(super().inverse_transform(X))


class IncrementalPCA(
    _Faced, _estimators.TransformMixin, _estimators.BaseEstimator, _core.IncrementalPCA
):
    """Heat's ``IncrementalPCA(n_components=None, copy=True, whiten=False, batch_size=None)``."""

    def __init__(self, n_components=None, copy=True, whiten=False, batch_size=None):
        if not copy:
            raise NotImplementedError("`copy=False` is not supported (as in Heat)")
        if whiten:
            raise NotImplementedError("`whiten=True` is not supported (as in Heat)")
        super().__init__(n_components)
        self.copy, self.whiten, self.batch_size = copy, whiten, batch_size

    def fit(self, path, chunk_size=None, dataset="DATA"):
        """Heat's ``fit(path, chunk_size, dataset="DATA")``: :meth:`partial_fit` on blocks of
        ``chunk_size`` rows of an HDF5 dataset (a ``.h5`` file; else ``ValueError``), in
        order; the last block may be shorter. ``chunk_size`` above the number of rows, or
        fewer columns than ranks, is a ``ValueError`` (Heat's). Each block is read by the
        ranks that hold its rows. A DNDarray in place of ``path`` is fitted in one batch
        (the core's ``fit``)."""
        if isinstance(path, _dndarray.DNDarray):
            return super().fit(path)
        if not io.supports_hdf5():
            raise RuntimeError("`IncrementalPCA.fit` from a file needs HDF5 support (h5py)")
        if not isinstance(path, str) or not path.endswith(".h5"):
            raise ValueError(f"`path` must name an HDF5 file (.h5), got {path!r}")
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral):
            raise TypeError(f"`chunk_size` must be an int, got {type(chunk_size).__name__}")
        if chunk_size < 1:
            raise ValueError(f"`chunk_size` must be at least 1, got {chunk_size}")
        data = _load_hdf5(path, dataset, split=0)
        rows, columns = data.shape
        if columns < data.comm.size:
            raise ValueError(
                f"the dataset must have at least as many columns as ranks ({data.comm.size}), "
                f"got {columns} (as in Heat)"
            )
        if chunk_size > rows:
            raise ValueError(f"`chunk_size` must be at most the {rows} rows, got {chunk_size}")
        self._reset()
        for start in range(0, rows, chunk_size):
            self.partial_fit(data[start : start + chunk_size])
        return self

    def transform(self, X):
        return _adapt.face(super().transform(X))

    def inverse_transform(self, X):
        return _adapt.face(super().inverse_transform(X))


_DMD_FITTED = (
    "rom_basis_",
    "rom_transfer_matrix_",
    "rom_eigenvalues_",
    "rom_eigenmodes_",
    "dmdmodes_",
    "n_modes_",
)


class DMD(_Faced, _core.DMD, _estimators.RegressionMixin, _estimators.BaseEstimator):
    """Heat's ``DMD(svd_solver="full", svd_rank=None, svd_tol=None)``: the fitted attributes
    are None before ``fit``, and ``predict`` keeps Heat's layout rule and its squeezed
    result (see :meth:`predict`)."""

    def __init__(self, svd_solver="full", svd_rank=None, svd_tol=None):
        super().__init__(svd_solver, svd_rank, svd_tol)
        for name in _DMD_FITTED:
            setattr(self, name, None)

    def predict_next(self, X, n_steps=1):
        return _adapt.face(super().predict_next(X, n_steps))

    def predict(self, X, steps):
        """The core's ``predict``, squeezed as Heat's result is; as in Heat,
        NotImplementedError where the states or the basis are split along the features
        (the core computes every layout)."""
        x, _ = self._states(X)
        _dmd.check_steps(steps)
        if x.split == 0 or self.rom_basis_.split == 0:
            raise NotImplementedError(
                "`predict` of states or a basis split along the features is not supported "
                "(as in Heat): use `predict_next`"
            )
        return _adapt.face(super().predict(X, steps).squeeze())


class DMDc(_Faced, _core.DMDc, _estimators.RegressionMixin, _estimators.BaseEstimator):
    """Heat's ``DMDc(svd_solver="full", svd_rank=None, svd_tol=None)``: the fitted attributes
    are None before ``fit``; ``X`` and ``C`` split along different axes are a ValueError,
    as in Heat."""

    def __init__(self, svd_solver="full", svd_rank=None, svd_tol=None):
        super().__init__(svd_solver, svd_rank, svd_tol)
        for name in (*_DMD_FITTED, "rom_control_matrix_", "n_modes_system_"):
            setattr(self, name, None)

    def fit(self, X, C):
        if (
            getattr(X, "split", None) is not None
            and getattr(C, "split", None) is not None
            and X.split != C.split
        ):
            raise ValueError(
                f"`X` and `C` split along different axes ({X.split} and {C.split}) are not "
                f"supported (as in Heat)"
            )
        return super().fit(X, C)

    def predict(self, X, C):
        return _adapt.face(super().predict(X, C))
