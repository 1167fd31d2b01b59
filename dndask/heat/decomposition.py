"""Heat's ``ht.decomposition``: the core's PCA and IncrementalPCA with Heat's constructor
arguments and face arrays as fitted attributes (DMD and DMDc are not implemented)."""

from __future__ import annotations

from .. import decomposition as _core
from . import _adapt

__all__ = ["IncrementalPCA", "PCA"]


class _Faced:
    """Fitted attributes (ending in ``_``) as face arrays."""

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        return _adapt.face(value) if name.endswith("_") and not name.startswith("_") else value


class PCA(_Faced, _core.PCA):
    """Heat's ``PCA``: ``copy``/``whiten``/``tol``/``power_iteration_normalizer`` are checked
    as Heat checks them (only their defaults are supported, as in Heat)."""

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

    def fit(self, X, y=None):
        """The core's fit; the attributes Heat leaves unset for a solver are None, as in Heat
        (only the full solver reports variances; ``noise_variance_`` is never computed)."""
        super().fit(X, y)
        self.noise_variance_ = None
        if self.svd_solver != "full":
            self.explained_variance_ = self.explained_variance_ratio_ = None
            self.singular_values_ = None
        if self.svd_solver == "randomized":
            self.total_explained_variance_ratio_ = None
        return self

    def transform(self, X):
        return _adapt.face(super().transform(X))

    def fit_transform(self, X, y=None):
        return _adapt.face(self.fit(X).transform(X))

    def inverse_transform(self, X):
        return _adapt.face(super().inverse_transform(X))


class IncrementalPCA(_Faced, _core.IncrementalPCA):
    """Heat's ``IncrementalPCA(n_components=None, copy=True, whiten=False, batch_size=None)``."""

    def __init__(self, n_components=None, copy=True, whiten=False, batch_size=None):
        if not copy:
            raise NotImplementedError("`copy=False` is not supported (as in Heat)")
        if whiten:
            raise NotImplementedError("`whiten=True` is not supported (as in Heat)")
        super().__init__(n_components)
        self.copy, self.whiten, self.batch_size = copy, whiten, batch_size

    def transform(self, X):
        return _adapt.face(super().transform(X))

    def inverse_transform(self, X):
        return _adapt.face(super().inverse_transform(X))
