"""Heat's ``ht.linalg``: the core's linear algebra, returning face arrays."""

from __future__ import annotations

import functools
import numbers
import warnings

import numpy as np

from .. import (
    _dndarray,
    _elementwise,
    _factories,
    _manipulation,
    _random,
    _reductions,
    _torch,
)
from .. import linalg as _core_linalg
from . import _adapt, types

__all__ = list(_core_linalg.__all__)

globals().update({name: _adapt.wrap(getattr(_core_linalg, name)) for name in __all__})


def matmul(a, b, allow_resplit: bool = False):
    """Heat's ``matmul``: with ``allow_resplit=True``, two unsplit matrix operands and more
    than one rank, ``a`` is resplit in place along its rows afterwards (Heat's rule; the
    result stays split None as in Heat). dndask plans every split pair without it."""
    if not isinstance(allow_resplit, bool):
        raise TypeError(f"`allow_resplit` must be a bool, got {type(allow_resplit).__name__}")
    if isinstance(a, _dndarray.DNDarray) and isinstance(b, _dndarray.DNDarray):
        _heat_matmul_checks(a, b)
    result = _core_linalg.matmul(a, b)  # every check first: a failed call changes nothing
    if (
        allow_resplit
        and isinstance(a, _dndarray.DNDarray)
        and isinstance(b, _dndarray.DNDarray)
        and a.split is None
        and b.split is None
        and a.comm.size > 1
        and min(a.ndim, b.ndim) >= 2
    ):
        a.resplit_(a.ndim - 2)
    return _adapt.face(result)


def _heat_matmul_checks(a, b) -> None:
    """Heat's stricter rules for stacks: equal batch shapes and numbers of axes (a vector
    operand aside), one common batch split axis, no stack times a vector."""
    batch = max(a.ndim, b.ndim) - 2
    if batch > 0 and a.shape[:batch] != b.shape[:batch]:
        raise ValueError(
            f"`a` and `b` of `matmul` must have the same batch shape, got {a.shape} and {b.shape}"
        )
    vector = abs(a.ndim - b.ndim) == 1
    if not vector and a.ndim != b.ndim:
        raise ValueError(
            f"`a` and `b` of `matmul` must have the same number of axes (as in Heat), "
            f"got {a.ndim} and {b.ndim}"
        )
    if batch > 0:
        in_batch = [x.split is not None and x.split < batch for x in (a, b)]
        if any(in_batch) and a.split != b.split:
            raise NotImplementedError(
                f"`matmul` of stacks split along different axes ({a.split} and {b.split}) "
                "is not supported (as in Heat)"
            )
        if vector:
            raise NotImplementedError(
                "`matmul` of a stack of matrices and a vector is not supported (as in Heat)"
            )


def _dtype(x) -> np.dtype:
    """The numpy dtype of a DNDarray (a face array's ``dtype`` is a Heat type class)."""
    return x.to_dask().dtype


def _face_tuple(result):
    """A core named tuple (``QR``, ``SVD``) with face arrays in it."""
    if isinstance(result, tuple) and hasattr(result, "_fields"):
        return type(result)._make(_adapt.face(v) for v in result)
    return _adapt.face(result)


def qr(a, mode: str = "reduced", procs_to_merge: int = 2):
    """Heat's ``qr``: modes ``"reduced"`` and ``"r"`` only ("complete" and "raw" are a
    ``NotImplementedError``), float and complex inputs only (others are a ``TypeError``);
    ``procs_to_merge`` is the TSQR's merge width (0: all ranks at once)."""
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` must be a DNDarray, got {type(a).__name__}")
    if not isinstance(mode, str):
        raise TypeError(f"`mode` must be a str, got {type(mode).__name__}")
    if mode in ("complete", "raw"):
        raise NotImplementedError(f"`qr` with mode={mode!r} is not supported (as in Heat)")
    if mode not in ("reduced", "r"):
        raise ValueError(f"`mode` must be 'reduced' or 'r', got {mode!r}")
    _check_merge(procs_to_merge, "procs_to_merge")
    if _dtype(a).kind not in "fc":
        raise TypeError(f"`a` of `qr` must be float32, float64 or complex, got {_dtype(a)}")
    return _face_tuple(_core_linalg.qr(a, mode=mode, procs_to_merge=procs_to_merge))


def _check_merge(value, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    if value < 0 or value == 1:
        raise ValueError(f"`{name}` must be 0 (all ranks at once) or >= 2, got {value}")


def _tall_skinny_or_short_fat(a) -> bool:
    """Heat's TSQR cases: rows split and a chunk with at least ``n`` rows, or columns split
    and a chunk with at least ``m`` columns."""
    counts = a.distribution.counts
    if a.split == 0:
        return max(counts) >= a.shape[1]
    return a.split == 1 and max(counts) >= a.shape[0]


def svd(
    a,
    full_matrices: bool = False,
    compute_uv: bool = True,
    qr_procs_to_merge: int = 2,
    r_max_zolopd: int = 8,
):
    """Heat's ``svd``: ``(U, S, Vh)`` of a 2-D float32/float64 matrix.

    Heat's checks: ``full_matrices=True`` is a ``NotImplementedError``, a non-2-D
    ``a`` a ``ValueError``, a non-float ``a`` a ``TypeError``. ``qr_procs_to_merge``
    is the TSQR's merge width. Where Heat would switch to its Zolotarev polar
    decomposition (a distributed matrix that is neither tall-skinny nor short-fat,
    see :func:`_tall_skinny_or_short_fat`) dndask runs the same TSQR-based SVD, and
    warns with a ``UserWarning`` as Heat does; ``r_max_zolopd`` (0 to 8) is checked as
    Heat checks it there (0 is a ``ValueError``) and changes nothing else.
    """
    if full_matrices:
        raise NotImplementedError("`svd` with full_matrices=True is not supported (as in Heat)")
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` must be a DNDarray, got {type(a).__name__}")
    _check_merge(qr_procs_to_merge, "qr_procs_to_merge")
    if (
        isinstance(r_max_zolopd, bool)
        or not isinstance(r_max_zolopd, numbers.Integral)
        or not 0 <= r_max_zolopd <= 8
    ):
        raise ValueError(f"`r_max_zolopd` must be an int in [0, 8], got {r_max_zolopd!r}")
    if a.ndim != 2:
        raise ValueError(f"`a` of `svd` must be 2-D, got {a.ndim} dimensions")
    if _dtype(a) not in (np.float32, np.float64):
        raise TypeError(f"`a` of `svd` must be float32 or float64, got {_dtype(a)}")
    if a.is_distributed() and not _tall_skinny_or_short_fat(a):
        warnings.warn(
            f"`svd` of a distributed matrix that is neither tall-skinny nor short-fat "
            f"(shape {a.shape}, split {a.split}): Heat uses its costly Zolotarev path here; "
            "dndask runs its TSQR-based SVD, which gathers the R factor (n x n) on one rank",
            UserWarning,
            stacklevel=2,
        )
        if r_max_zolopd < 1:
            raise ValueError(f"`r_max_zolopd` must be in [1, 8] here, got {r_max_zolopd}")
    result = _core_linalg.svd(a, compute_uv=compute_uv, procs_to_merge=qr_procs_to_merge)
    return _face_tuple(result)


__all__ = sorted({*__all__, "condest", "expm", "projection", "transpose"})


def _square_floats(a, name: str) -> None:
    """Heat's ``det``/``inv`` checks: float, square in the last two axes, else RuntimeError."""
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` of `{name}` must be a DNDarray, got {type(a).__name__}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"`a` of `{name}` must be square in its last two axes, got {a.shape}")
    if a.to_dask().dtype.kind not in "fc":
        raise RuntimeError(f"`a` of `{name}` must be floating, got {a.to_dask().dtype}")


def det(a):
    """Heat's ``det``: a non-square or integer ``a`` is a ``RuntimeError`` (Heat's)."""
    _square_floats(a, "det")
    return _adapt.face(_core_linalg.det(a))


def inv(a):
    """Heat's ``inv``: a non-square or integer ``a`` is a ``RuntimeError`` (Heat's), and so
    is a singular one. Heat is eager here: the inverse is computed (persisted where it
    will live) before the call returns, so that a singular matrix raises at the call
    (torch's ``LinAlgError``, a ``RuntimeError``), not where the result is next used."""
    _square_floats(a, "inv")
    return _adapt.face(_core_linalg.inv(a).persist_(wait=True))


def transpose(a, axes=None):
    """Heat's ``transpose``: a non-int axis in a tuple is a TypeError, any other a ValueError."""
    if axes is not None:
        if isinstance(axes, list):
            axes = tuple(axes)
        if isinstance(axes, str):
            raise TypeError(f"`axes` must be a tuple of ints, got {axes!r}")
        if not isinstance(axes, tuple):
            raise ValueError(f"`axes` must be a tuple of ints, got {axes!r}")
        for v in axes:
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"`axes` must hold ints, got {v!r}")
        if isinstance(a, _dndarray.DNDarray) and len(axes) != a.ndim:
            raise ValueError(f"`axes` must name all {a.ndim} axes, got {axes}")
    return _adapt.face(_manipulation.transpose(a, axes))


def matrix_exp(a):
    """Heat's ``matrix_exp``: a non-square ``a`` is a ``RuntimeError``, and a matrix split
    along one of its two matrix axes a ``ValueError`` (Heat splits stacks only along a
    batch axis here; dndask's core gathers each matrix instead)."""
    if not isinstance(a, _dndarray.DNDarray):
        raise TypeError(f"`a` of `matrix_exp` must be a DNDarray, got {type(a).__name__}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"`a` of `matrix_exp` must be square in its last two axes, got shape {a.shape}"
        )
    if a.is_distributed() and a.split >= a.ndim - 2:
        raise ValueError(
            f"`a` of `matrix_exp` must not be split along a matrix axis (as in Heat), "
            f"got split {a.split} of shape {a.shape}"
        )
    return _adapt.face(_core_linalg.matrix_exp(a))


expm = matrix_exp  # Heat's alias


def _heat_common(*operands) -> list:
    """The DNDarray operands cast to Heat's (torch's) common type (int32 with float32:
    float32, where numpy gives float64)."""
    common = np.dtype(types.result_type(*operands))
    return [
        v.astype(common) if isinstance(v, _dndarray.DNDarray) and v.dtype != common else v
        for v in operands
    ]


def _torch_common(*arrays) -> list:
    """The DNDarrays cast to torch's common type of their dtypes (float32 with int64:
    float32), the type Heat's functions that call one torch function return."""
    torch = _torch.torch()
    dtypes = [_torch.to_torch(np.empty(0, dtype=_dtype(x))).dtype for x in arrays]
    common = _torch.from_torch(torch.empty(0, dtype=functools.reduce(torch.promote_types, dtypes)))
    return [x.astype(common.dtype) if x.dtype != common.dtype else x for x in arrays]


def _axis_of(value, ndim: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` of `cross` must be an int, got {type(value).__name__}")
    if not -ndim <= value < ndim:
        raise ValueError(f"`{name}` of `cross` must be in [{-ndim}, {ndim - 1}], got {value}")
    return int(value) % ndim


def _moved_split(split, source: int, destination: int, ndim: int):
    """Where the split axis is after ``moveaxis(source, destination)``."""
    if split is None:
        return None
    order = [i for i in range(ndim) if i != source]
    order.insert(destination, source)
    return order.index(split)


def _cross_axes(a, b, axisa, axisb, axisc, axis):
    """Heat's ``cross`` checks: ``axis`` (unless -1 with other axes given) sets all three;
    vectors along a split axis, and splits that differ once the vector axes are aligned,
    are a ``ValueError``. Returns the axes for the core (``axis`` None: use the three)."""
    together = not isinstance(axis, numbers.Integral) or axis != -1
    if together or axisa == axisb == axisc == -1:
        axis = _axis_of(axis, a.ndim, "axis")
        axisa = axisb = axisc = axis
    else:
        axisa, axisb = _axis_of(axisa, a.ndim, "axisa"), _axis_of(axisb, b.ndim, "axisb")
        axisc = _axis_of(axisc, a.ndim, "axisc")
        axis = None
    if a.split == axisa or b.split == axisb:
        raise ValueError(
            f"`cross` of vectors along the split axis is not supported (as in Heat): "
            f"`a` split {a.split}, axisa {axisa}; `b` split {b.split}, axisb {axisb}"
        )
    a_split = _moved_split(a.split, axisa, axisc, a.ndim)
    b_split = _moved_split(b.split, axisb, axisc, b.ndim)
    if a.ndim == b.ndim and a_split != b_split:
        raise ValueError(
            f"`a` and `b` of `cross` must have the same split once the vector axes are "
            f"aligned (as in Heat), got {a_split} and {b_split}"
        )
    return axisa, axisb, axisc, axis


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int = -1):
    """Heat's ``cross``: Heat's axis and split checks (:func:`_cross_axes`), then the
    operands cast to torch's common type."""
    for name, v in (("a", a), ("b", b)):
        if not isinstance(v, _dndarray.DNDarray):
            raise TypeError(f"`{name}` of `cross` must be a DNDarray, got {type(v).__name__}")
    axisa, axisb, axisc, axis = _cross_axes(a, b, axisa, axisb, axisc, axis)
    a, b = _torch_common(a, b)
    return _adapt.face(_core_linalg.cross(a, b, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis))


def vecdot(x1, x2, axis=None, keepdims=None):
    """Heat's ``vecdot``: ``sum(x1 * x2, axis)`` after broadcasting (no conjugation, as in
    Heat); ``axis=None`` is the last axis of the broadcast product."""
    for name, v in (("x1", x1), ("x2", x2)):
        if not isinstance(v, _dndarray.DNDarray):
            raise TypeError(f"`{name}` of `vecdot` must be a DNDarray, got {type(v).__name__}")
    x1, x2 = _heat_common(x1, x2)
    product = _elementwise.multiply(x1, x2)
    if axis is None:
        axis = product.ndim - 1
    return _adapt.face(_reductions.sum(product, axis=axis, keepdims=bool(keepdims)))


def outer(a, b, out=None, split=None):
    """Heat's ``outer``: DNDarray operands only (``TypeError``), no 0-d ones (``RuntimeError``),
    Heat's common type; ``out`` must have the result's shape and split."""
    for name, v in (("a", a), ("b", b)):
        if not isinstance(v, _dndarray.DNDarray):
            raise TypeError(f"`{name}` of `outer` must be a DNDarray, got {type(v).__name__}")
        if v.ndim == 0:
            raise RuntimeError(f"`{name}` of `outer` must have at least one dimension, got 0-d")
    a, b = _heat_common(a, b)
    result = _core_linalg.outer(a, b, split=split)
    if out is not None:
        return _adapt.face(_adapt.into(out, result, "outer"))
    return _adapt.face(result)


def dot(a, b, out=None):
    """Heat's ``dot``: with a scalar or two vectors ``out`` is ignored (as in Heat); for
    two operands of at most 2 dimensions ``out`` takes the result (values, dtype and
    split); higher dimensions are a ``NotImplementedError``."""
    numbers_only = not isinstance(a, _dndarray.DNDarray) and not isinstance(b, _dndarray.DNDarray)
    if numbers_only and isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a * b
    scalar = any(isinstance(v, numbers.Number) or getattr(v, "ndim", 1) == 0 for v in (a, b))
    if scalar or (a.ndim == 1 and b.ndim == 1):
        return _adapt.face(_core_linalg.dot(a, b))
    if a.ndim > 2 or b.ndim > 2:
        raise NotImplementedError("`dot` of operands with more than 2 dimensions (as in Heat)")
    result = _core_linalg.dot(a, b)
    if out is None:
        return _adapt.face(result)
    if not isinstance(out, _dndarray.DNDarray):
        raise TypeError(f"`out` of `dot` must be a DNDarray, got {type(out).__name__}")
    return _adapt.face(out._set(result.to_dask(), result.split, result._task_ranks))


def projection(a, b):
    """Heat's ``projection``: the projection of the vector ``a`` onto the vector ``b``,
    ``(a . b) / (b . b) * b``; non-vectors are a ``RuntimeError``."""
    for name, v in (("a", a), ("b", b)):
        if not isinstance(v, _dndarray.DNDarray):
            raise TypeError(f"`{name}` of `projection` must be a DNDarray, got {type(v).__name__}")
        if v.ndim != 1:
            raise RuntimeError(f"`{name}` of `projection` must be 1-D, got shape {v.shape}")
    a, b = _heat_common(a, b)
    ratio = _elementwise.divide(_core_linalg.dot(a, b), _core_linalg.dot(b, b))
    return _adapt.face(_elementwise.multiply(ratio, b))


def _heat_norm_dtype(x, ord, matrix: bool):
    """The dtype Heat's norm of an integer ``x`` has (torch's rules on Heat's formulas):
    sums of absolute values are int64, a maximum or minimum of them keeps ``x``'s type,
    anything with a root is float32. None: keep the core's (float and complex inputs)."""
    if _dtype(x).kind not in "iu":
        return None
    inf = isinstance(ord, numbers.Real) and abs(ord) == np.inf
    if matrix:
        return np.int64 if inf or ord in (1, -1) else np.float32
    if inf:
        return _dtype(x)
    return np.int64 if ord == 1 else np.float32


def _cast(result, dtype):
    return result if dtype is None or result.dtype == dtype else result.astype(dtype)


def vector_norm(x, axis=None, keepdims: bool = False, ord=None):
    """Heat's ``vector_norm`` (Heat's argument order): ``axis`` an int or a 1-tuple
    (else a ``TypeError``), ``ord=None`` is 2; the result keeps Heat's dtype (see
    :func:`_heat_norm_dtype`)."""
    if isinstance(axis, tuple) and len(axis) > 1:
        raise TypeError(f"`axis` of `vector_norm` must be an int or a 1-tuple, got {axis!r}")
    plain = axis is None or isinstance(axis, tuple)
    if not plain and (isinstance(axis, bool) or not isinstance(axis, numbers.Integral)):
        raise TypeError(f"`axis` of `vector_norm` must be an int or a 1-tuple, got {axis!r}")
    ord = 2 if ord is None else ord
    result = _core_linalg.vector_norm(x, ord=ord, axis=axis, keepdims=keepdims)
    return _adapt.face(_cast(result, _heat_norm_dtype(x, ord, matrix=False)))


def matrix_norm(x, axis=None, keepdims: bool = False, ord=None):
    """Heat's ``matrix_norm`` (Heat's argument order): ``axis=None`` is ``(0, 1)`` for a
    2-D ``x`` (a ``ValueError`` for more dimensions), ``ord=None`` is ``'fro'``. As in
    Heat, ``ord`` 2, -2 and ``'nuc'`` are a ``NotImplementedError`` here (the core's
    :func:`dndask.linalg.matrix_norm` computes them from the singular values)."""
    _check_dndarray(x, "x", "matrix_norm")
    if x.ndim < 2:
        raise ValueError(f"`x` of `matrix_norm` must have at least 2 dimensions, got {x.ndim}")
    if axis is None:
        if x.ndim > 2:
            raise ValueError(f"`axis` of `matrix_norm` cannot be inferred for {x.ndim}-D `x`")
        axis = (0, 1)
    if not isinstance(axis, tuple) or len(axis) != 2:
        raise TypeError(f"`axis` of `matrix_norm` must be a 2-tuple, got {axis!r}")
    ord = "fro" if ord is None else ord
    if ord in (2, -2, "nuc"):
        raise NotImplementedError(f"`matrix_norm` with ord={ord!r} is not supported (as in Heat)")
    result = _core_linalg.matrix_norm(x, ord=ord, axis=axis, keepdims=keepdims)
    return _adapt.face(_cast(result, _heat_norm_dtype(x, ord, matrix=True)))


def norm(x, axis=None, keepdims: bool = False, ord=None):
    """Heat's ``norm`` (Heat's argument order): the 2-norm of all elements (``axis`` and
    ``ord`` None, or the natural 2-norm of a vector or matrix), else a vector norm over
    one axis or a matrix norm over two (``axis=None``: those of a 1-D or 2-D ``x``),
    with Heat's result dtypes."""
    _check_dndarray(x, "x", "norm")
    if axis is None:
        if ord is None or (ord == 2 and x.ndim == 1) or (ord == "fro" and x.ndim == 2):
            result = _core_linalg.vector_norm(x, ord=2, axis=None, keepdims=keepdims)
            return _adapt.face(_cast(result, _heat_norm_dtype(x, 2, matrix=False)))
        if x.ndim == 2:
            return matrix_norm(x, None, keepdims, ord)
        return vector_norm(x, None, keepdims, ord)
    if isinstance(axis, numbers.Integral) and not isinstance(axis, bool):
        return vector_norm(x, axis, keepdims, ord)
    if isinstance(axis, (tuple, list)) and len(axis) == 1:
        return vector_norm(x, tuple(axis), keepdims, ord)
    if isinstance(axis, (tuple, list)) and len(axis) == 2:
        return matrix_norm(x, tuple(axis), keepdims, ord)
    raise ValueError(f"`axis` of `norm` must be an int or 1 or 2 axes, got {axis!r}")


def _check_dndarray(x, name: str, fname: str) -> None:
    if not isinstance(x, _dndarray.DNDarray):
        raise TypeError(f"`{name}` of `{fname}` must be a DNDarray, got {type(x).__name__}")


def condest(a, p=None, algorithm: str = "randomized", params=None):
    """Heat's ``condest``: a randomized upper estimate of the 2-norm condition number of a
    2-D float ``a``, from the ``R`` of its QR and a random ``n x nsamples`` orthonormal
    ``Q`` (Heat's formula: ``|R Q|_F * sqrt(m / nsamples) * |R^-1 Q|_F``; ``m >= n``,
    else the transpose is estimated). ``params={"nsamples": k}`` (default 10)."""
    _check_dndarray(a, "a", "condest")
    p = 2 if p is None else p
    if p != 2:
        raise ValueError(f"`p` of `condest` must be 2 (or None), got {p!r}")
    if not isinstance(algorithm, str):
        raise TypeError(f"`algorithm` of `condest` must be a str, got {type(algorithm).__name__}")
    if algorithm != "randomized":
        raise NotImplementedError(f"`condest` with algorithm={algorithm!r} is not supported")
    nsamples = 10
    if params is not None:
        if not isinstance(params, dict) or "nsamples" not in params:
            raise TypeError("`params` of `condest` must be a dict with the key 'nsamples'")
        nsamples = params["nsamples"]
        if isinstance(nsamples, bool) or not isinstance(nsamples, int) or nsamples <= 0:
            raise ValueError(f"`nsamples` of `condest` must be a positive int, got {nsamples!r}")
    if a.ndim != 2:
        raise ValueError(f"`a` of `condest` must be 2-D, got {a.ndim} dimensions")
    m, n = a.shape
    if n > m:  # the 2-norm condition number is that of the transpose
        return condest(_manipulation.transpose(a), p=p, algorithm=algorithm, params=params)
    r = _core_linalg.qr(a, mode="r").R
    sample = _random.randn(
        n, nsamples, dtype=r.dtype, split=0 if a.split == 1 else None, comm=a.comm
    )
    q = _core_linalg.qr(sample).Q
    scale = (m / nsamples) ** 0.5
    upper = _core_linalg.matrix_norm(_core_linalg.matmul(r, q))
    lower = _core_linalg.matrix_norm(_core_linalg.solve(r, q))
    return _adapt.face(_elementwise.multiply(_elementwise.multiply(upper, scale), lower))


def _estimate_largest_singularvalue(a, algorithm: str = "fro"):
    """Heat's private ``_estimate_largest_singularvalue``: an upper bound of the largest
    singular value of a 2-D ``a``; ``"fro"`` (the only algorithm, as in Heat) is the
    Frobenius norm, a 0-d array of ``a``'s float type."""
    if not isinstance(algorithm, str):
        raise TypeError(f"`algorithm` must be a str, got {type(algorithm).__name__}")
    if algorithm != "fro":
        raise NotImplementedError(f"`algorithm` {algorithm!r} is not supported, only 'fro'")
    return matrix_norm(a, ord="fro")


# ---------------------------------------------------------------- solvers, eigh, polar (issue 28)
__all__ = sorted({*__all__, "lanczos", "cg", "polar", "eigh", "solve_triangular"})


def cg(A, b, x0, out=None):
    """Heat's ``cg``: RuntimeError for operands of the wrong dimensions; ``len(b)`` iterations
    at most, stopping at a residual norm of 1e-10 (Heat's), never raising on the count."""
    for value, name in ((A, "A"), (b, "b"), (x0, "x0")):
        if not isinstance(value, _dndarray.DNDarray):
            raise TypeError(f"`{name}` of `cg` must be a DNDarray, got {type(value).__name__}")
    if A.ndim != 2:
        raise RuntimeError(f"`A` of `cg` must be a 2-D matrix, got {A.ndim} dimensions")
    if b.ndim != 1:
        raise RuntimeError(f"`b` of `cg` must be a 1-D vector, got {b.ndim} dimensions")
    if x0.ndim != 1:
        raise RuntimeError(f"`x0` of `cg` must be a 1-D vector, got {x0.ndim} dimensions")
    result = _core_linalg.cg(A, b, x0, rtol=0.0, atol=1e-10, strict=False)
    if out is not None:
        return _adapt.face(_adapt.into(out, result, "cg"))
    return _adapt.face(result)


def lanczos(A, m, v0=None, V_out=None, T_out=None):
    """Heat's ``lanczos``: TypeError for a non-square or integer ``A`` and a non-int ``m``,
    RuntimeError for more than two dimensions; ``V_out``/``T_out`` receive the results."""
    if not isinstance(A, _dndarray.DNDarray):
        raise TypeError(f"`A` of `lanczos` must be a DNDarray, got {type(A).__name__}")
    if A.ndim != 2:
        raise RuntimeError(f"`A` of `lanczos` must be a 2-D matrix, got {A.ndim} dimensions")
    if _dtype(A).kind not in "fc":
        raise TypeError(f"`A` of `lanczos` must be float or complex, got {_dtype(A)}")
    if not isinstance(m, numbers.Integral) or isinstance(m, bool):
        raise TypeError(f"`m` of `lanczos` must be an int, got {type(m).__name__}")
    if A.shape[0] != A.shape[1]:
        raise TypeError(f"`A` of `lanczos` must be square (symmetric), got shape {A.shape}")
    v, t = _core_linalg.lanczos(A, m, v0)
    if V_out is not None:
        _adapt.into(V_out, v, "lanczos")
    if T_out is not None:
        _adapt.into(T_out, t, "lanczos")
    if V_out is not None or T_out is not None:
        return _adapt.face(V_out if V_out is not None else v), _adapt.face(
            T_out if T_out is not None else t
        )
    return _adapt.face(v), _adapt.face(t)


def solve_triangular(A, b):
    """Heat's ``solve_triangular``: ``A`` upper triangular, the result split like ``b``."""
    return _adapt.face(_core_linalg.solve_triangular(A, b))


def _check_r(value, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 8:
        raise ValueError(f"`{name}` must be an int between 1 and 8, got {value!r}")


def polar(A, r=None, calcH=True, condition_estimate=1.0e16, silent=True, r_max=8):
    """Heat's ``polar``: ``r`` (Zolotarev degree) and ``r_max`` are checked as Heat checks them
    (a non-trivial divisor of the number of ranks); dndask runs QDWH (degree 1) whatever
    they are (docs/linalg-fft.md)."""
    if not isinstance(A, _dndarray.DNDarray):
        raise TypeError(f"`A` of `polar` must be a DNDarray, got {type(A).__name__}")
    if A.ndim != 2:
        raise ValueError(f"`A` of `polar` must be 2-D, got {A.ndim} dimensions")
    if A.shape[0] < A.shape[1]:
        raise ValueError(
            f"`A` of `polar` must have at least as many rows as columns, got {A.shape}"
        )
    if _dtype(A) not in (np.float32, np.float64):
        raise TypeError(f"`A` of `polar` must be float32 or float64, got {_dtype(A)}")
    if r is not None:
        _check_r(r, "r")
        size = A.comm.size
        if A.is_distributed() and (size % r != 0 or size == r):
            raise ValueError(
                f"`r` must be a non-trivial divisor of the number of ranks ({size}), got {r}"
            )
    else:
        _check_r(r_max, "r_max")
    if not isinstance(condition_estimate, float):
        raise TypeError(
            f"`condition_estimate` must be a float, got {type(condition_estimate).__name__}"
        )
    kappa = condition_estimate if condition_estimate > 1.0 else 1.0e16
    return _face_tuple(_core_linalg.polar(A, calc_h=calcH, condition_estimate=kappa))


def eigh(A, r_max_zolopd=8, silent=True):
    """Heat's ``eigh``: descending eigenvalues (split 0) and eigenvectors (split of ``A``);
    ``r_max_zolopd`` is checked as Heat checks it (dndask's polar steps are QDWH)."""
    if isinstance(r_max_zolopd, bool) or not isinstance(r_max_zolopd, int):
        raise ValueError(f"`r_max_zolopd` must be an int between 1 and 8, got {r_max_zolopd!r}")
    _check_r(r_max_zolopd, "r_max_zolopd")
    return _face_tuple(_core_linalg.eigh(A))


__all__ = sorted({*__all__, "hsvd_rank", "hsvd_rtol"})


def _heat_hsvd_result(A, result, compute_sv: bool):
    """Heat's return forms: the error estimate a 0-d array of ``A``'s type, and without
    ``compute_sv`` for a row-split ``A`` the transposed left singular vectors
    (``k x m``, Heat's ``V.T``)."""
    *factors, err = result
    err = _factories.array(err, dtype=_dtype(A), comm=A.comm)
    if not compute_sv and A.split == 0:
        factors = [_manipulation.transpose(factors[0])]
    return _face_tuple((*factors, err))


def hsvd_rank(A, maxrank, compute_sv=False, maxmergedim=None, safetyshift=5, silent=True):
    """Heat's ``hsvd_rank``: ``(U, S, V.T, err)`` with ``compute_sv``, else ``(U, err)``
    (``(V.T, err)`` for a row-split ``A``, as Heat's); ``err`` a 0-d array. ``silent``
    is accepted (dndask prints nothing)."""
    result = _core_linalg.hsvd_rank(
        A, maxrank, compute_sv=compute_sv, maxmergedim=maxmergedim, safetyshift=safetyshift
    )
    return _heat_hsvd_result(A, result, compute_sv)


def hsvd_rtol(
    A,
    rtol,
    compute_sv=False,
    maxrank=None,
    maxmergedim=None,
    safetyshift=5,
    no_of_merges=None,
    silent=True,
):
    """Heat's ``hsvd_rtol`` (Heat's argument order and return forms, see
    :func:`hsvd_rank`; ``silent`` is accepted, dndask prints nothing)."""
    result = _core_linalg.hsvd_rtol(
        A, rtol, compute_sv=compute_sv, no_of_merges=no_of_merges, maxrank=maxrank,
        maxmergedim=maxmergedim, safetyshift=safetyshift,
    )  # fmt: skip
    return _heat_hsvd_result(A, result, compute_sv)


__all__ = sorted({*__all__, "isvd"})


def isvd(new_data, U_old, S_old, V_old, maxrank=None):
    """Heat's ``isvd(new_data, U_old, S_old, V_old, maxrank=None)``; ``V_old`` is ``Vh``."""
    return _face_tuple(_core_linalg.isvd(new_data, U_old, S_old, V_old, maxrank))


__all__ = sorted({*__all__, "solve"})


def _heat_solve_plan(A, b):
    """Heat's reading of ``solve(A, b)``: ``b``'s non-batched axis (its last axis when
    that has ``n`` entries, a batch of vectors; else its second last, a batch of
    matrices), Heat's layout errors, and the result's shape and split."""
    n = A.shape[-1]
    if b.shape[-1] == n:
        axis = b.ndim - 1
    elif b.ndim > 1 and b.shape[-2] == n:
        axis = b.ndim - 2
    else:
        raise ValueError(f"`b` of shape {b.shape} does not fit `A` of shape {A.shape} in `solve`")
    if b.is_distributed() and b.split == axis:
        raise NotImplementedError(
            f"`solve` with `b` split along its non-batched axis {axis} is not supported "
            "(as in Heat)"
        )
    if A.is_distributed():
        if A.split > A.ndim - 3:
            raise NotImplementedError(
                f"`solve` with `A` split along a matrix axis ({A.split}) is not supported "
                "(as in Heat)"
            )
        if b.is_distributed() and A.split != b.split:
            raise ValueError(
                f"`A` and `b` of `solve` must share the split, got {A.split}, {b.split}"
            )
    if b.shape[:axis] == A.shape[:-2]:
        return axis, b.shape, b.split
    if axis == 0 and A.ndim > 2:
        split = b.split if A.split is None else A.split
        if split is not None and A.split is None:
            split += A.ndim - 2
        return axis, A.shape[:-2] + b.shape, split
    raise ValueError(
        f"`solve` of `A` of shape {A.shape} (split {A.split}) and `b` of shape {b.shape} "
        f"(split {b.split}) is not a batched system Heat reads"
    )


def solve(A, b, out=None):
    """Heat's ``solve``: ``A`` ``(*, n, n)`` with ``b`` ``(*, n)`` (vectors), ``(*, n, k)``,
    ``(n,)`` or ``(n, k)`` (the last two broadcast over ``*``), read as Heat reads them
    (:func:`_heat_solve_plan`); split only along batch axes (``b`` also along its
    columns). Eager, as Heat: a singular matrix raises torch's ``RuntimeError`` at
    the call. ``out`` must have the result's shape and split; an integer ``out`` is
    cast to the result's type in place (Heat's)."""
    for name, v in (("A", A), ("b", b)):
        if not isinstance(v, _dndarray.DNDarray):
            raise TypeError(f"`{name}` of `solve` must be a DNDarray, got {type(v).__name__}")
    if out is not None and not isinstance(out, _dndarray.DNDarray):
        raise TypeError(f"`out` of `solve` must be a DNDarray, got {type(out).__name__}")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"`A` of `solve` must be square in its last two axes, got {A.shape}")
    axis, shape, split = _heat_solve_plan(A, b)
    if out is not None:
        if out.shape != shape:
            raise ValueError(f"`out` of `solve` must have shape {shape}, got {out.shape}")
        if out.split != split:
            raise ValueError(f"`out` of `solve` must have split {split}, got {out.split}")
    vectors = axis == b.ndim - 1 and b.ndim > 1
    rhs = _manipulation.expand_dims(b, -1) if vectors else b
    x = _core_linalg.solve(A, rhs)
    if vectors:
        x = x[..., 0]
    if x.split != split:
        x = x.resplit(split)
    x.persist_(wait=True)  # Heat is eager: a singular matrix raises here
    if out is None:
        return _adapt.face(x)
    if out.dtype != x.dtype:
        out.astype(x.dtype, copy=False)
    return _adapt.face(_adapt.into(out, x, "solve"))
