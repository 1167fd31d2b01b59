"""Dynamic mode decomposition: :class:`DMD` (exact DMD) and :class:`DMDc` (with control).

The snapshots are the columns of ``X`` (``n_features x n_timesteps``, Heat's convention
for DMD). :class:`DMD` fits ``x_{k+1} ≈ A x_k`` (Tu et al. 2014; Proctor, Brunton and
Kutz 2016, Sect. 2.2): the SVD ``X[:, :-1] ≈ U diag(S) Vh`` truncated to ``k`` modes,
the reduced operator ``Ã = U^T X[:, 1:] Vh^T diag(S)^-1`` (``k x k``), its eigenvalues
``λ`` and eigenvectors ``W``, and the modes ``U W``. :class:`DMDc` fits
``x_{k+1} ≈ A x_k + B c_k`` (Proctor et al. 2016, Sects. 3.3-3.4): ``U`` spans
``X[:, 1:]``, the SVD ``[X; C][:, :-1] ≈ Ũ diag(S̃) Ṽh`` with ``Ũ = [Ũ1; Ũ2]`` gives
``Ã = U^T X' Ṽh^T S̃^-1 Ũ1^T U`` and ``B̃ = U^T X' Ṽh^T S̃^-1 Ũ2^T``.

The SVD is :func:`dndask.linalg.svd` (``"full"``, truncated by ``svd_rank`` or by
``svd_tol``: the fewest modes whose squared singular values pass ``1 - svd_tol`` of their
sum), :func:`~dndask.linalg.hsvd_rank`/:func:`~dndask.linalg.hsvd_rtol`
(``"hierarchical"``, safety shift 5) or :func:`~dndask.linalg.rsvd` (``"randomized"``),
on every split. What travels to the driver is small: the singular values and the
``k x k`` (``k x c``) products; ``Ã``'s eigendecomposition and its powers are numpy on
the driver, as Heat takes them on every rank. The snapshots, ``U`` and the predictions
stay distributed.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dndarray, _factories, _manipulation
from .._estimator import BaseEstimator
from .._linalg import hsvd_rank, hsvd_rtol, matmul, rsvd, svd, tensordot
from .._linalg._tsqr import _swap_last

__all__ = ["DMD", "DMDc"]

_SOLVERS = ("full", "hierarchical", "randomized")


def _check_params(svd_solver, svd_rank, svd_tol) -> None:
    """Heat's rules for the solver and its truncation (TypeError/ValueError)."""
    if not isinstance(svd_solver, str):
        raise TypeError(f"`svd_solver` must be a str, got {type(svd_solver).__name__}")
    if svd_solver not in _SOLVERS:
        raise ValueError(f"`svd_solver` must be one of {_SOLVERS}, got {svd_solver!r}")
    if svd_rank is not None:
        if isinstance(svd_rank, bool) or not isinstance(svd_rank, numbers.Integral):
            raise TypeError(f"`svd_rank` must be None or an int, got {type(svd_rank).__name__}")
        if svd_rank < 1:
            raise ValueError(f"`svd_rank` must be at least 1, got {svd_rank}")
    if svd_tol is not None:
        if isinstance(svd_tol, bool) or not isinstance(svd_tol, numbers.Real):
            raise TypeError(f"`svd_tol` must be None or a float, got {type(svd_tol).__name__}")
        if not svd_tol > 0:
            raise ValueError(f"`svd_tol` must be positive, got {svd_tol}")
    both = svd_rank is not None and svd_tol is not None
    if svd_solver == "full" and both:
        raise ValueError("`svd_solver='full'` takes at most one of `svd_rank` and `svd_tol`")
    if svd_solver == "hierarchical" and (both or (svd_rank is None and svd_tol is None)):
        raise ValueError(
            "`svd_solver='hierarchical'` takes exactly one of `svd_rank` and `svd_tol`"
        )
    if svd_solver == "randomized" and (svd_rank is None or svd_tol is not None):
        raise ValueError("`svd_solver='randomized'` takes `svd_rank` and no `svd_tol`")


def _check_array(x, name: str) -> _dndarray.DNDarray:
    if not isinstance(x, _dndarray.DNDarray):
        raise TypeError(f"`{name}` must be a DNDarray, got {type(x).__name__}")
    if x.dtype.kind == "c":
        raise TypeError(f"`{name}` must be real, got {x.dtype}")
    return x


def _snapshots(x, name: str, rows: str) -> _dndarray.DNDarray:
    """``x`` checked as a 2-D series of at least two snapshots (columns)."""
    x = _check_array(x, name)
    if x.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D ({rows} x n_timesteps), got shape {x.shape}")
    if x.shape[1] < 2:
        raise ValueError(f"`{name}` must have at least 2 time steps (columns), got {x.shape[1]}")
    return x


def _float_dtype(*dtypes) -> np.dtype:
    dtype = np.result_type(*dtypes)
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def _complex_of(dtype) -> np.dtype:
    return np.result_type(dtype, np.complex64)


def _tol_count(s: np.ndarray, tol: float) -> int:
    """The fewest modes whose squared singular values reach ``1 - tol`` of their sum."""
    power = np.cumsum(np.asarray(s, dtype=np.float64) ** 2)
    if power.size == 0:
        return 0
    return min(int(np.count_nonzero(power <= (1.0 - tol) * power[-1])) + 1, s.shape[0])


def _truncated_svd(a: _dndarray.DNDarray, solver: str, rank, tol):
    """``(U, S as numpy, Vh)`` of ``a``, truncated as ``solver``, ``rank`` and ``tol`` say."""
    if solver == "hierarchical":
        if tol is not None:
            u, s, vh, _ = hsvd_rtol(a, float(tol), compute_sv=True, safetyshift=5)
        else:
            u, s, vh, _ = hsvd_rank(a, int(rank), compute_sv=True, safetyshift=5)
        return u, np.asarray(s.numpy()), vh
    if solver == "randomized":
        u, s, vh = rsvd(a, min(int(rank), min(a.shape)))
        return u, np.asarray(s.numpy()), vh
    u, s, vh = svd(a)
    s_np = np.asarray(s.numpy())
    k = s_np.shape[0]
    if tol is not None:
        k = _tol_count(s_np, tol)
    elif rank is not None:
        k = min(int(rank), k)
    if k < s_np.shape[0]:
        u, s_np, vh = u[:, :k], s_np[:k], vh[:k]
    return u, s_np, vh


def _small(x: np.ndarray, comm, dtype) -> _dndarray.DNDarray:
    return _factories.array(np.ascontiguousarray(x).astype(dtype), comm=comm)


def _numpy(x: _dndarray.DNDarray) -> np.ndarray:
    return np.asarray(x.numpy(), dtype=np.float64)


def _power(a: np.ndarray, n: int) -> np.ndarray:
    try:
        return np.linalg.matrix_power(a, n)
    except np.linalg.LinAlgError as error:
        raise ValueError(
            f"a negative number of steps ({n}) needs an invertible reduced operator; this "
            f"fit's is singular"
        ) from error


def _check_steps_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    return int(value)


def check_steps(steps) -> list[int]:
    """``steps`` of :meth:`DMD.predict` as a list: an int ``n >= 0`` is ``0, ..., n - 1``."""
    if isinstance(steps, numbers.Integral) and not isinstance(steps, bool):
        if steps < 0:
            raise ValueError(f"`steps` as an int must be non-negative, got {steps}")
        return list(range(int(steps)))
    if isinstance(steps, (list, tuple)):
        return [_check_steps_int(s, "steps[i]") for s in steps]
    raise TypeError(f"`steps` must be an int or a list of ints, got {type(steps).__name__}")


def _reduced(a: np.ndarray, comm, dtype) -> tuple[dict, np.ndarray]:
    """The fitted reduced operator ``a`` and its eigenpairs, by attribute name, and the
    eigenvectors as numpy."""
    values, vectors = np.linalg.eig(a)
    cdtype = _complex_of(dtype)
    fitted = {
        "rom_transfer_matrix_": _small(a, comm, dtype),
        "rom_eigenvalues_": _small(values, comm, cdtype),
        "rom_eigenmodes_": _small(vectors, comm, cdtype),
    }
    return fitted, vectors


class _Fitted(BaseEstimator):
    """What DMD and DMDc share: the parameters and the fitted reduced operator."""

    def __init__(self, svd_solver: str = "full", svd_rank: int | None = None, svd_tol=None):
        _check_params(svd_solver, svd_rank, svd_tol)
        self.svd_solver = svd_solver
        self.svd_rank = svd_rank
        self.svd_tol = svd_tol

    def _check_fitted(self) -> None:
        if getattr(self, "rom_basis_", None) is None:
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet: call `fit` first")

    def _operator(self) -> np.ndarray:
        return _numpy(self.rom_transfer_matrix_)


class DMD(_Fitted):
    """Dynamic mode decomposition (exact DMD) of a series of snapshots.

    Parameters
    ----------
    svd_solver : {"full", "hierarchical", "randomized"}
        The SVD of the snapshots: :func:`dndask.linalg.svd`, :func:`~dndask.linalg.hsvd_rank`
        / :func:`~dndask.linalg.hsvd_rtol` or :func:`~dndask.linalg.rsvd`.
    svd_rank : int or None
        Modes to keep. ``"full"``: at most one of ``svd_rank`` and ``svd_tol`` (neither:
        no truncation); ``"hierarchical"``: exactly one; ``"randomized"``: required.
    svd_tol : float or None
        ``"full"``: keep the fewest modes whose squared singular values reach
        ``1 - svd_tol`` of their sum; ``"hierarchical"``: the relative Frobenius error
        bound of :func:`~dndask.linalg.hsvd_rtol`; ``"randomized"``: must be None.

    Attributes
    ----------
    rom_basis_ : DNDarray
        ``U`` (``n_features x n_modes_``), the reduced basis.
    rom_transfer_matrix_ : DNDarray
        The reduced operator ``Ã = U^T A U`` (``n_modes_ x n_modes_``, split None).
    rom_eigenvalues_, rom_eigenmodes_ : DNDarray
        ``Ã``'s eigenvalues and eigenvectors (complex, split None).
    dmdmodes_ : DNDarray
        The DMD modes ``U W`` (``n_features x n_modes_``, complex).
    n_modes_ : int
        The number of modes kept.

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> a = np.array([[0.9, -0.2], [0.2, 0.9]])
    >>> x = np.stack([np.linalg.matrix_power(a, k) @ [1.0, 0.5] for k in range(8)], axis=1)
    >>> dmd = ht.decomposition.DMD(svd_solver="full").fit(ht.array(x, split=1))
    >>> np.sort_complex(dmd.rom_eigenvalues_.numpy()).round(6).tolist()
    [(0.9-0.2j), (0.9+0.2j)]
    >>> bool(np.allclose(dmd.predict_next(ht.array(x[:, 0]), 3).numpy(), x[:, 3]))
    True
    """

    def fit(self, X, y=None):  # noqa: N803 (scikit-learn's names)
        """Fit to the snapshots ``X`` (``n_features x n_timesteps``); returns ``self``."""
        _check_params(self.svd_solver, self.svd_rank, self.svd_tol)
        x = _snapshots(X, "X", "n_features")
        dtype = _float_dtype(x.dtype)
        x = x if x.dtype == dtype else x.astype(dtype)
        u, s, vh = _truncated_svd(x[:, :-1], self.svd_solver, self.svd_rank, self.svd_tol)
        # Ã = U^T X' Vh^T diag(S)^-1: a k x (m - 1) product, then a k x k one
        projected = matmul(matmul(_swap_last(u), x[:, 1:]), _swap_last(vh))
        fitted, _ = _reduced(_numpy(projected) / s, x.comm, dtype)
        fitted["dmdmodes_"] = matmul(u, fitted["rom_eigenmodes_"])
        self.__dict__.update(fitted, rom_basis_=u, n_modes_=int(s.shape[0]))  # all or nothing
        return self

    def _states(self, X) -> tuple[_dndarray.DNDarray, bool]:  # noqa: N803
        """``X`` as ``n_features x n_states`` (a 1-D state as one column), and whether 1-D."""
        self._check_fitted()
        x = _check_array(X, "X")
        if x.ndim not in (1, 2):
            raise ValueError(
                f"`X` must be 1-D (n_features,) or 2-D (n_features x n_states), got shape {x.shape}"
            )
        n = self.rom_basis_.shape[0]
        if x.shape[0] != n:
            raise ValueError(f"`X` must have {n} features (rows, as in fit), got {x.shape[0]}")
        if x.dtype.kind != "f":
            x = x.astype(_float_dtype(x.dtype, self.rom_basis_.dtype))
        return (_manipulation.expand_dims(x, 1), True) if x.ndim == 1 else (x, False)

    def predict_next(self, X, n_steps: int = 1):  # noqa: N803
        """The state(s) ``n_steps`` steps after ``X``: ``U Ã^n_steps U^T X``.

        ``X`` is one state (``n_features``) or a batch (``n_features x n_states``); the
        result has its shape. A negative ``n_steps`` steps back (``Ã`` must be invertible).
        """
        n_steps = _check_steps_int(n_steps, "n_steps")
        x, one = self._states(X)
        power = _small(_power(self._operator(), n_steps), x.comm, self.rom_basis_.dtype)
        out = matmul(self.rom_basis_, matmul(power, matmul(_swap_last(self.rom_basis_), x)))
        return out[:, 0] if one else out

    def predict(self, X, steps):  # noqa: N803
        """The states at time steps ``steps`` from ``X``, without a time-stepping loop.

        ``steps`` is an int (the steps ``0, 1, ..., steps - 1``) or a list of ints. The
        result is ``n_states x n_features x len(steps)`` (``n_features x len(steps)`` for
        a 1-D ``X``): ``out[b, :, j] = U Ã^steps[j] U^T X[:, b]``.
        """
        x, one = self._states(X)
        steps = check_steps(steps)
        a = self._operator()
        k = a.shape[0]
        powers = np.stack([_power(a, s) for s in steps]) if steps else np.zeros((0, k, k))
        powers = _small(powers, x.comm, self.rom_basis_.dtype)
        reduced = matmul(_swap_last(self.rom_basis_), x)  # k x n_states
        evolved = tensordot(powers, reduced, axes=([2], [0]))  # steps x k x n_states
        out = tensordot(self.rom_basis_, evolved, axes=([1], [1]))  # n x steps x n_states
        out = out.transpose((2, 0, 1))
        return out[0] if one else out


class DMDc(_Fitted):
    """Dynamic mode decomposition with control of states ``X`` driven by inputs ``C``.

    Fits ``x_{k+1} ≈ A x_k + B c_k``. Parameters as :class:`DMD`'s; ``svd_rank`` truncates
    the SVD of ``X[:, 1:]`` and ``svd_rank + n_control_features`` that of
    ``[X; C][:, :-1]``, ``svd_tol`` truncates both.

    Attributes
    ----------
    rom_basis_ : DNDarray
        ``U`` (``n_state_features x n_modes_``), spanning ``X[:, 1:]``.
    rom_transfer_matrix_, rom_control_matrix_ : DNDarray
        ``Ã = U^T A U`` (``n_modes_ x n_modes_``) and ``B̃ = U^T B``
        (``n_modes_ x n_control_features``), split None.
    rom_eigenvalues_, rom_eigenmodes_ : DNDarray
        ``Ã``'s eigenpairs (complex, split None).
    dmdmodes_ : DNDarray
        The modes ``X' Ṽh^T S̃^-1 Ũ1^T U W`` (complex).
    n_modes_, n_modes_system_ : int
        The modes kept of the states' SVD and of the system's.

    Examples
    --------
    >>> import numpy as np, dndask as ht
    >>> a, b = np.array([[0.5, 0.0], [0.0, 0.8]]), np.array([[1.0], [0.5]])
    >>> c = np.array([[1.0, -1.0, 0.5, 2.0, 0.0, 1.0]])
    >>> x = [np.array([1.0, 2.0])]
    >>> for k in range(5):
    ...     x.append(a @ x[-1] + b @ c[:, k])
    >>> x = np.stack(x, axis=1)
    >>> dmdc = ht.decomposition.DMDc().fit(ht.array(x, split=1), ht.array(c, split=1))
    >>> dmdc.n_modes_, bool(np.allclose(dmdc.predict(ht.array(x[:, 0]), ht.array(c)).numpy()[0], x))
    (2, True)
    """

    def fit(self, X, C):  # noqa: N803
        """Fit to the states ``X`` (``n_state_features x n_timesteps``) and the control
        inputs ``C`` (``n_control_features x n_timesteps``); returns ``self``."""
        _check_params(self.svd_solver, self.svd_rank, self.svd_tol)
        x = _snapshots(X, "X", "n_state_features")
        c = _snapshots(C, "C", "n_control_features")
        if x.shape[1] != c.shape[1]:
            raise ValueError(
                f"`X` and `C` must have the same number of time steps, got {x.shape[1]} "
                f"and {c.shape[1]}"
            )
        dtype = _float_dtype(x.dtype, c.dtype)
        x = x if x.dtype == dtype else x.astype(dtype)
        c = c if c.dtype == dtype else c.astype(dtype)
        if c.split != x.split:
            c = c.resplit(x.split)  # C is the small one
        n, n_control = x.shape[0], c.shape[0]
        later = x[:, 1:]
        system = _manipulation.concatenate([x, c], axis=0)[:, :-1]
        rank = self.svd_rank
        u, _, _ = _truncated_svd(later, self.svd_solver, rank, self.svd_tol)
        system_rank = None if rank is None else rank + n_control
        ut, st, vht = _truncated_svd(system, self.svd_solver, system_rank, self.svd_tol)
        ut_np = _numpy(ut)
        # X' Ṽh^T S̃^-1 (n x p, distributed), then its small products with U and Ũ
        lifted = matmul(later, _swap_last(vht)) / _small(st, x.comm, dtype)
        left = _numpy(matmul(_swap_last(u), lifted))  # U^T X' Ṽh^T S̃^-1 (k x p)
        back = ut_np[:n].T @ _numpy(u)  # Ũ1^T U (p x k)
        fitted, vectors = _reduced(left @ back, x.comm, dtype)
        fitted["dmdmodes_"] = matmul(lifted, _small(back @ vectors, x.comm, _complex_of(dtype)))
        fitted["rom_control_matrix_"] = _small(left @ ut_np[n:].T, x.comm, dtype)
        self.__dict__.update(
            fitted, rom_basis_=u, n_modes_=int(u.shape[1]), n_modes_system_=int(st.shape[0])
        )
        return self

    def predict(self, X, C):  # noqa: N803
        """The trajectories from the state(s) ``X`` under the control inputs ``C``.

        ``X`` is one state (``n_state_features``) or a batch, one state per row
        (``n_states x n_state_features``); ``C`` is ``n_control_features x n_timesteps``
        (1-D: one time step). The result is ``n_states x n_state_features x n_timesteps``:
        time step 0 is ``X`` projected on ``U``, then ``x_t = Ã x_{t-1} + B̃ c_{t-1}`` in
        the reduced space (so ``C``'s last column is not used).
        """
        self._check_fitted()
        x = _check_array(X, "X")
        c = _check_array(C, "C")
        if x.ndim not in (1, 2):
            raise ValueError(
                f"`X` must be 1-D (n_state_features,) or 2-D (n_states x n_state_features), "
                f"got shape {x.shape}"
            )
        if c.ndim not in (1, 2):
            raise ValueError(
                f"`C` must be 1-D (n_control_features,) or 2-D (n_control_features x "
                f"n_timesteps), got shape {c.shape}"
            )
        n, n_control = self.rom_basis_.shape[0], self.rom_control_matrix_.shape[1]
        x = _manipulation.expand_dims(x, 0) if x.ndim == 1 else x
        if x.shape[1] != n:
            raise ValueError(
                f"`X` must have {n} state features (columns, as in fit), got {x.shape[1]}"
            )
        if c.shape[0] != n_control:
            raise ValueError(
                f"`C` must have {n_control} control features (rows, as in fit), got {c.shape[0]}"
            )
        if x.dtype.kind != "f":
            x = x.astype(_float_dtype(x.dtype, self.rom_basis_.dtype))
        inputs = np.asarray(c.numpy(), dtype=np.float64).reshape(n_control, -1)
        a, b = self._operator(), _numpy(self.rom_control_matrix_)
        steps = inputs.shape[1]
        powers = [np.eye(a.shape[0])]
        driven = [np.zeros(a.shape[0])]  # what the inputs add: g_t = Ã g_{t-1} + B̃ c_{t-1}
        for t in range(1, steps):
            powers.append(a @ powers[-1])
            driven.append(a @ driven[-1] + b @ inputs[:, t - 1])
        dtype = np.result_type(x.dtype, self.rom_basis_.dtype)
        reduced = matmul(x, self.rom_basis_)  # n_states x k
        evolved = tensordot(reduced, _small(np.stack(powers), x.comm, dtype), axes=([1], [2]))
        evolved = evolved + _small(np.stack(driven), x.comm, dtype)  # n_states x steps x k
        out = tensordot(evolved, self.rom_basis_, axes=([2], [1]))  # n_states x steps x n
        return out.transpose((0, 2, 1))
