"""The FFTs on DNDarrays: a plan from :mod:`._plan` run as relayouts and per-chunk stages.

Every local stage is one ``map_blocks`` task per chunk; every change of split goes
through :func:`dndask._distribution.relayout`. A numpy chunk is transformed by torch's
FFT (a view of the chunk, single precision kept: float32 and complex64 give complex64):
numpy's pocketfft runs one 1-D transform at a time, torch's vectorizes across them,
measured 0.09 s against 0.035 s for a 65536 x 64 float32 chunk along axis 0. Other
chunks (CuPy) use their own namespace's ``fftn``.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from .. import _dndarray, _factories, _graph, _layout, _torch, _types
from .._distribution import relayout
from .._layout import Distribution
from ._plan import FFTPlan, Relayout, Stage, plan_fft, stage_dtype, stage_shape

_NORMS = (None, "backward", "ortho", "forward")
_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}
_NUMPY = {
    "fft": np.fft.fftn,
    "ifft": np.fft.ifftn,
    "rfft": np.fft.rfftn,
    "irfft": np.fft.irfftn,
}
_TORCH = {"fft": "fftn", "ifft": "ifftn", "rfft": "rfftn", "irfft": "irfftn"}


def _local(block, kind: str, axes: tuple, s, norm, dtype):
    """``kind`` over ``axes`` of one chunk (zeros for a chunk without elements)."""
    out_shape = stage_shape(block.shape, Stage(kind, axes, s))
    if block.size == 0:
        return np.zeros(out_shape, dtype=dtype)
    if kind == "fftshift":
        return np.fft.fftshift(block, axes=axes)
    if kind == "ifftshift":
        return np.fft.ifftshift(block, axes=axes)
    if type(block) is np.ndarray:
        if block.ctypes.data % block.dtype.itemsize:
            # a chunk deserialized from a message can sit at any 8-byte offset; torch's
            # complex128 kernels assume 16 (a segfault otherwise)
            block = block.copy()
        fn = getattr(_torch.torch().fft, _TORCH[kind])
        out = _torch.from_torch(fn(_torch.to_torch(block), s=s, dim=axes, norm=norm))
        return out.astype(dtype, copy=False)
    return np.asarray(_NUMPY[kind](block, s=s, axes=axes, norm=norm)).astype(dtype, copy=False)


def _stage(x: _dndarray.DNDarray, stage: Stage, norm) -> _dndarray.DNDarray:
    """``stage`` on every chunk where it lives (the split axis is never transformed here)."""
    shape = stage_shape(x.shape, stage)
    dtype = stage_dtype(x.dtype, stage)
    counts = x.distribution.counts if x.split is not None else None
    chunks = _layout.chunks_for(shape, x.split, counts)
    meta = _graph.meta_of(dtype, x.ndim, like=x)
    arr = x.to_dask().map_blocks(
        _local, stage.kind, stage.axes, stage.s, norm, dtype, chunks=chunks, dtype=dtype, meta=meta
    )
    return _dndarray.from_dask(arr, x.split, x.comm, parents=(x,))


def run(x: _dndarray.DNDarray, plan: FFTPlan, norm) -> _dndarray.DNDarray:
    """The steps of ``plan`` on ``x``."""
    for step in plan.steps:
        if isinstance(step, Relayout):
            x = relayout(x, Distribution.balanced(x.shape, step.split, x.comm))
        else:
            x = _stage(x, step, norm)
    return x


def check_array(x, fname: str) -> _dndarray.DNDarray:
    if not isinstance(x, _dndarray.DNDarray):
        raise TypeError(f"`x` of `{fname}` must be a DNDarray, got {type(x).__name__}")
    return x


def check_norm(norm) -> None:
    if norm not in _NORMS:
        raise ValueError(f"`norm` must be None, 'backward', 'ortho' or 'forward', got {norm!r}")


def _as_float(x: _dndarray.DNDarray, real: bool, fname: str) -> _dndarray.DNDarray:
    """Heat's (torch's) input rule: integers, booleans and float16 become float32."""
    kind = x.dtype.kind
    if real and kind == "c":
        raise TypeError(f"`x` of `{fname}` must be real, got {x.dtype}")
    if kind in "biu" or x.dtype == np.float16:
        return x.astype(np.float32)
    if kind not in "fc":
        raise TypeError(f"`x` of `{fname}` must be numeric, got {x.dtype}")
    return x


def check_length(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"`{name}` must be positive, got {value}")
    return int(value)


def axes_and_lengths(x, s, axes, default_axes, fname: str) -> tuple[tuple, tuple | None]:
    """numpy's ``s``/``axes`` rules: ``s`` alone takes the last ``len(s)`` axes."""
    if axes is None and s is not None:
        if not isinstance(s, Sequence):
            raise TypeError(f"`s` must be a sequence of ints, got {type(s).__name__}")
        if len(s) > x.ndim:
            raise ValueError(
                f"`s` of `{fname}` must have at most {x.ndim} entries (the axes of `x`), "
                f"got {len(s)}"
            )
        axes = tuple(range(x.ndim - len(s), x.ndim))
    elif axes is None:
        axes = default_axes
    if isinstance(axes, numbers.Integral) and not isinstance(axes, bool):
        axes = (axes,)
    if not isinstance(axes, Sequence):
        raise TypeError(f"`axes` must be a sequence of ints, got {type(axes).__name__}")
    normalized = []
    for axis in axes:
        normalized.append(_layout.normalize_axis(axis, x.ndim, "axes"))
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"`axes` of `{fname}` must not repeat an axis, got {tuple(axes)}")
    if s is not None:
        if not isinstance(s, Sequence):
            raise TypeError(f"`s` must be a sequence of ints, got {type(s).__name__}")
        if len(s) != len(normalized):
            raise ValueError(
                f"`s` and `axes` of `{fname}` must have the same length, got {len(s)} "
                f"and {len(normalized)}"
            )
        s = tuple(check_length(n, "s") for n in s)
    return tuple(normalized), s


def transform(x, fname, kind, axes, s, norm, conj_in=False, conj_out=False, swap=False):
    """``kind`` over ``axes`` of ``x`` with output lengths ``s`` (defaults filled here).

    ``conj_in``/``conj_out``/``swap``: the Hermitian transforms as real ones
    (``hfft`` is ``irfft`` of the conjugate with the normalization swapped).
    """
    check_norm(norm)
    real = kind == "rfft"
    x = _as_float(x, real, fname)
    if s is None:
        s = tuple(x.shape[a] for a in axes)
        if kind == "irfft":
            s = (*s[:-1], 2 * (s[-1] - 1))
    for n in s:
        check_length(n, "s")
    if conj_in and x.dtype.kind == "c":
        x = _conj(x)
    plan = plan_fft(kind, x.shape, x.split, x.distribution.counts, x.comm.size, axes, s, x.dtype)
    out = run(x, plan, _SWAPPED[norm] if swap else norm)
    return _conj(out) if conj_out else out


def _conj(x: _dndarray.DNDarray) -> _dndarray.DNDarray:
    arr = x.to_dask().map_blocks(np.conj, dtype=x.dtype)
    return _dndarray.from_dask(arr, x.split, x.comm, parents=(x,))


def shift(x, axes, kind: str, fname: str) -> _dndarray.DNDarray:
    """``fftshift``/``ifftshift`` of ``x`` over ``axes`` (None: all)."""
    x = check_array(x, fname)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, numbers.Integral) and not isinstance(axes, bool):
        axes = (axes,)
    axes = tuple(_layout.normalize_axis(a, x.ndim, "axes") for a in axes)
    axes = tuple(dict.fromkeys(axes))
    if not axes:
        return x.copy()
    plan = plan_fft(kind, x.shape, x.split, x.distribution.counts, x.comm.size, axes, None, x.dtype)
    return run(x, plan, None)


def _freq_chunk(offsets, lshape, meta, n, d, half, dtype):
    index = np.arange(offsets[0], offsets[0] + lshape[0], dtype=np.float64)
    if not half:
        index = np.where(index >= (n + 1) // 2, index - n, index)
    return (index / (n * d)).astype(dtype)


def frequencies(n, d, dtype, split, comm, device, half: bool, fname: str):
    """The sample frequencies of ``fftfreq`` (``half=False``) or ``rfftfreq``."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ValueError(f"`n` of `{fname}` must be an int, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"`n` of `{fname}` must be positive, got {n}")
    if isinstance(d, complex):
        raise NotImplementedError(f"`d` of `{fname}` must be real: complex `d` is not supported")
    if isinstance(d, bool) or not isinstance(d, numbers.Real):
        raise TypeError(f"`d` of `{fname}` must be a real scalar, got {type(d).__name__}")
    if d == 0:
        raise ValueError(f"`d` of `{fname}` must not be zero")
    dtype = np.dtype(np.float32) if dtype is None else _types.canonical_dtype(dtype)
    if dtype.kind not in "fc":
        raise TypeError(f"`dtype` of `{fname}` must be a float or complex type, got {dtype}")
    if split not in (None, 0):
        raise ValueError(f"`split` of `{fname}` must be None or 0 (the result is 1-D), got {split}")
    length = n // 2 + 1 if half else n
    args = (int(n), float(d), half, dtype)
    return _factories._generated(fname, _freq_chunk, (length,), dtype, split, comm, args, device)
