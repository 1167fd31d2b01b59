"""Heat's ``ht.random``: the core's counter-based generator behind Heat's state tuples.

Heat's states ``("Threefry", seed, counter, ...)`` and ``("Batchparallel", seed, ...)``
are accepted and map onto dndask's generator ``("splitmix64", seed, counter)``. The
values differ from Heat's (a different generator), but the same seed gives the same
global array for every number of ranks and every split, as in Heat's Threefry mode.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dndarray, _elementwise, _factories, _random, _torch
from . import _adapt, types

__all__ = [
    "get_state",
    "normal",
    "permutation",
    "rand",
    "randint",
    "randn",
    "random",
    "random_integer",
    "random_sample",
    "randperm",
    "ranf",
    "sample",
    "seed",
    "set_state",
    "standard_normal",
]

_ALGORITHMS = ("Threefry", "Batchparallel")
_mode = {"algorithm": "Batchparallel", "local_only": False}  # Heat 1.8's default


def seed(seed: int | None = None) -> None:
    """Seed the generator (see :func:`dndask.random.seed`)."""
    _random.seed(seed)
    _mode["local_only"] = False


def get_state() -> tuple:
    """Heat's 5-tuple ``(algorithm, seed, counter or local seed, 0, 0.0)``.

    With "Threefry" the third item is dndask's counter (one per call, not Heat's
    count of drawn values); with "Batchparallel" it is the driver's local seed, the
    seed itself (Heat's seed plus the rank, for rank 0).
    """
    _, seed_, counter = _random.get_state()
    third = counter if _mode["algorithm"] == "Threefry" else seed_
    return (_mode["algorithm"], None if _mode["local_only"] else seed_, third, 0, 0.0)


def set_state(state: tuple) -> None:
    """Restore a Heat state: ``(algorithm, seed, counter[, 0, 0.0])``.

    >>> import dndask.heat as ht
    >>> ht.random.set_state(("Threefry", 42, 0))
    >>> ht.random.get_state()[:3]
    ('Threefry', 42, 0)
    """
    if not isinstance(state, tuple) or len(state) not in (3, 5):
        raise TypeError(f"`state` must be a 3- or 5-tuple, got {state!r}")
    algorithm, seed_, counter = state[:3]
    if algorithm not in _ALGORITHMS:
        raise ValueError(
            f"`state` algorithm must be 'Threefry' or 'Batchparallel', got {algorithm!r}"
        )
    local_only = algorithm == "Batchparallel" and seed_ is None
    if algorithm == "Batchparallel":
        # (seed, local seed): dndask has one global stream, keyed by the seed (or by
        # the local seed where the global one is None; get_state reports it so)
        seed_, counter = (counter if seed_ is None else seed_), 0
    for name, value in (("seed", seed_), ("counter", counter)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"`state` {name} must be an int, got {value!r}")
    _random.set_state((_random.ALGORITHM, int(seed_), int(counter)))
    _mode["algorithm"], _mode["local_only"] = algorithm, local_only


def _shape(args, kwargs, name):
    return args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


def rand(*d, dtype=types.float32, split=None, device=None, comm=None):
    """Uniform samples in [0, 1) of shape ``d``; one Python float without ``d`` (Heat).
    A complex ``dtype`` draws the real and imaginary parts each in [0, 1) (torch's rule)."""
    device = _adapt.check_device(device)
    complex_dtype = _complex_dtype(dtype)
    if complex_dtype is None:
        out = _random.rand(*(d or (1,)), dtype=dtype, split=split, comm=comm, device=device)
    else:
        # torch's complex uniform: real and imaginary parts each uniform in [0, 1)
        real = complex_dtype(0).real.dtype
        parts = [
            _random.rand(*(d or (1,)), dtype=real, split=split, comm=comm, device=device)
            for _ in "ri"
        ]
        out = _elementwise.add(parts[0], _elementwise.multiply(parts[1], 1j))
    return out.item() if not d else _adapt.face(out)


def randn(*d, dtype=types.float32, split=None, device=None, comm=None):
    """Standard normal samples of shape ``d``; one Python float without ``d`` (Heat)."""
    device = _adapt.check_device(device)
    complex_dtype = _complex_dtype(dtype)
    if complex_dtype is None:
        out = _random.randn(*(d or (1,)), dtype=dtype, split=split, comm=comm, device=device)
    else:
        # torch's complex normal: real and imaginary parts of variance 1/2 each
        real = complex_dtype(0).real.dtype
        parts = [
            _random.randn(*(d or (1,)), dtype=real, split=split, comm=comm, device=device)
            for _ in "ri"
        ]
        out = _elementwise.add(parts[0], _elementwise.multiply(parts[1], 1j))
        out = _elementwise.multiply(out, 0.5**0.5)
    return out.item() if not d else _adapt.face(out)


def _complex_dtype(dtype):
    """numpy's complex64/complex128 for Heat's complex types, else None."""
    try:
        dt = np.dtype(_adapt._dtype_arg(dtype))
    except TypeError:
        return None
    return dt.type if dt.kind == "c" else None


def standard_normal(shape=None, dtype=types.float32, split=None, device=None, comm=None):
    """Standard normal samples of ``shape`` (Heat's keyword order)."""
    device = _adapt.check_device(device)
    shape = (1,) if shape is None else shape
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    return _adapt.face(_random.randn(*shape, dtype=dtype, split=split, comm=comm, device=device))


def normal(mean=0.0, std=1.0, shape=None, dtype=types.float32, split=None, device=None, comm=None):
    """Normal samples of ``shape``; ``mean`` and ``std`` may be DNDarrays (Heat).

    With arrays the samples are ``mean + std * randn(shape)`` (``shape`` defaults to
    the broadcast shape of ``mean`` and ``std``).
    """
    device = _adapt.check_device(device)
    arrays = [v for v in (mean, std) if isinstance(v, _dndarray.DNDarray)]
    if arrays:
        if shape is None:
            shape = np.broadcast_shapes(*(v.shape for v in arrays))
        base = _random.randn(
            *shape, dtype=dtype, split=split, comm=comm or arrays[0].comm, device=device
        )
        return _adapt.face(_elementwise.add(_elementwise.multiply(base, std), mean))
    shape = (1,) if shape is None else shape
    return _adapt.face(
        _random.normal(mean, std, shape, dtype=dtype, split=split, comm=comm, device=device)
    )


def random(shape=None, dtype=types.float32, split=None, device=None, comm=None):
    """Uniform samples in [0, 1) of ``shape`` (Heat's defaults: float32, shape ``(1,)``)."""
    device = _adapt.check_device(device)
    shape = (1,) if shape is None else shape
    return _adapt.face(_random.random(shape, dtype=dtype, split=split, comm=comm, device=device))


random_sample = ranf = sample = random


def randint(low, high=None, size=None, dtype=types.int32, split=None, device=None, comm=None):
    """Integers in [low, high) of shape ``size`` (Heat's default type is int32)."""
    device = _adapt.check_device(device)
    size = () if size is None else size
    dtype = _adapt._dtype_arg(dtype)
    return _adapt.face(
        _random.randint(low, high, size, dtype=dtype, split=split, comm=comm, device=device)
    )


random_integer = randint


def randperm(n, dtype=types.int64, split=None, device=None, comm=None):
    """A random permutation of ``range(n)`` drawn from torch's global generator (Heat's).

    As in Heat, ``torch.manual_seed`` (not :func:`seed`) decides it: the driver draws
    ``torch.randperm(n)``, as Heat's rank 0 does before broadcasting it.
    """
    device = _adapt.check_device(device)
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"`n` must be an int, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"`n` must be non-negative, got {n}")
    want = types.canonical_heat_type(_adapt._dtype_arg(dtype))
    perm = _torch.torch().randperm(int(n), dtype=want.torch_type())
    return _adapt.face(_factories.array(perm, split=split, comm=comm, device=device))


def permutation(x, **kwargs):
    """A permuted copy of ``x`` along axis 0, or :func:`randperm` of an int (Heat's).

    The permutation is ``torch.randperm(len(x))`` from torch's global generator, as in
    Heat; the result keeps ``x``'s split.
    """
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return randperm(x, **kwargs)
    if not isinstance(x, _dndarray.DNDarray):
        raise TypeError(
            f"`x` of `permutation` must be an int or a DNDarray, got {type(x).__name__}"
        )
    device = _adapt.check_device(kwargs.pop("device", None))
    if kwargs:
        raise TypeError(f"`permutation` got unexpected keywords {sorted(kwargs)}")
    if x.ndim == 0:
        raise ValueError("`x` of `permutation` must have at least one dimension")
    perm = _torch.torch().randperm(x.shape[0]).numpy()
    out = x[perm]
    return _adapt.face(out if device is None else out._on_device(device))
