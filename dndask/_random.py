"""Counter-based random numbers keyed by the global element index.

Every element's value is a pure function of ``(seed, call counter, global C-order
index)``: a SplitMix64 mix of those numbers. So the same seed gives the same
global array for any number of ranks and any split, and each rank generates
only its own chunk, on its own worker, with nothing sent but the key.

The generator state is ``("splitmix64", seed, counter)``; the counter
advances by one per call, so successive calls draw different arrays.
Normal samples are Box-Muller with both outputs used: global elements
``2p`` and ``2p + 1`` are the cosine and the sine of pair ``p``, whose
radius and angle come from draws keyed by ``p`` (float64: two 53-bit draws,
float32: one 64-bit draw computed in float32). Pairs are aligned to the
global index, not to a chunk, so a chunk that starts or ends inside a pair
draws that pair and keeps its half. A chunk is generated in boxes of at most
:data:`_BLOCK` elements so the temporaries stay small.
"""

from __future__ import annotations

import math
import numbers
import secrets
import sys
import threading

import numpy as np

from . import _factories, _layout, _types, _xp
from ._dndarray import DNDarray, from_dask

ALGORITHM = "splitmix64"
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_MASK64 = (1 << 64) - 1
# Elements per box of a chunk: 64 KiB of uint64 temporaries, below glibc's mmap threshold.
# Larger boxes halve the numpy calls but, in a Dask worker (whose nanny sets
# MALLOC_TRIM_THRESHOLD_, which fixes that threshold at 128 KiB), every temporary is then
# an mmap and fresh pages: a 32 MiB float32 normal chunk took 119 ms of CPU at 1 << 15
# against 58 ms at 1 << 13 (and 31.5 ms against 40 ms outside a worker).
_BLOCK = 1 << 13
# Pairs per box of a float32 normal chunk whose rows are whole (so every box is one run of
# global indices): its temporaries are the chunk's :class:`_Scratch`, allocated once, so
# a box can be larger than the mmap threshold. Each box costs about 30 numpy calls of ~1 us
# each: a 32 MiB chunk took 38.7 ms of CPU in a worker at 1 << 13 pairs (512 boxes),
# 32.4 at 1 << 14 and 29.9 at 1 << 15 (128 boxes, 0.9 MiB of buffers: about the L2 cache);
# 1 << 16 gained nothing more (29.8). Issue 26 then read the draws' 32-bit words directly
# (:func:`_normal32_into`) and kept each thread's buffers (:func:`_scratch`): 30.9 ms median,
# 28.9 min in a worker against 35.0 and 30.8 before (60 chunks each, alternating, load 6-7).
_PAIRS32 = 1 << 15
_lock = threading.Lock()
_state = {"seed": secrets.randbits(63), "counter": 0}


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function, elementwise on uint64, in place (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(30)
        z *= _M1
        z ^= z >> np.uint64(27)
        z *= _M2
        z ^= z >> np.uint64(31)
    return z


def _stream_key(seed: int, counter: int) -> np.uint64:
    """One 64-bit key per (seed, call)."""
    with np.errstate(over="ignore"):
        z = _mix(np.array([seed % 2**64], dtype=np.uint64))
        z = _mix(z + np.array([counter % 2**64], dtype=np.uint64) * _GAMMA)
    return z[0]


def _strides(gshape) -> tuple[int, ...]:
    """C-order element strides of the global shape."""
    return tuple(math.prod(gshape[a + 1 :]) for a in range(len(gshape)))


def _global_index(offsets, lshape, gshape, strides) -> np.ndarray:
    """C-order flat global index of every element of a box, as a new uint64 array.

    ``strides`` are :func:`_strides` of ``gshape``, computed once per chunk.
    """
    start = _run_start(offsets, lshape, gshape, strides)
    if start is not None:
        return np.arange(start, start + math.prod(lshape), dtype=np.uint64).reshape(lshape)
    flat = np.full(lshape, _first_index(offsets, strides), dtype=np.uint64)
    for axis, (n, stride) in enumerate(zip(lshape, strides, strict=True)):
        shape = [1] * len(lshape)
        shape[axis] = n
        flat += (np.arange(n, dtype=np.uint64) * np.uint64(stride)).reshape(shape)
    return flat


def _bits(key: np.uint64, flat: np.ndarray, lane: int, lanes: int, reuse: bool = False):
    """64 random bits per element for ``lane`` of ``lanes`` draws per element.

    With ``reuse`` the result overwrites ``flat`` (its last use) instead of a new array.
    """
    with np.errstate(over="ignore"):
        z = flat if reuse else flat.copy()
        if lanes != 1:
            z *= np.uint64(lanes)
        z += np.uint64(lane + 1)
        z *= _GAMMA
        z += key
    return _mix(z)


def _scaled(ints: np.ndarray, scale: float, dtype) -> np.ndarray:
    """``ints * scale`` as ``dtype``; ``ints``: uint64 below 2**53 (read as int64, exactly)."""
    out = ints.view(np.int64).astype(dtype)
    out *= dtype.type(scale)
    return out


def _uniform(bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Floats in [0, 1) from the top mantissa-width bits (consumes ``bits``)."""
    width = 53 if dtype == np.float64 else 24
    bits >>= np.uint64(64 - width)
    return _scaled(bits, 2.0**-width, dtype)


def _polar32(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Box-Muller radius and angle in float32 from one 64-bit draw each (consumes ``bits``).

    The top 32 bits give ``u1`` in (0, 1] (tails reach 6.66 sigma), the low 24 bits
    the angle.
    """
    radius = (bits >> np.uint64(32)).view(np.int64).astype(np.float32)
    radius += np.float32(1.0)
    radius *= np.float32(2.0**-32)  # (0, 1]: rounding never passes 1
    np.log(radius, out=radius)
    radius *= np.float32(-2.0)
    np.sqrt(radius, out=radius)
    bits &= np.uint64(0xFFFFFF)
    angle = _scaled(bits, 2.0 * np.pi * 2.0**-24, np.dtype(np.float32))
    return radius, angle


def _polar64(key: np.uint64, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Box-Muller radius and angle in float64 from two 53-bit draws each."""
    u1 = _uniform(_bits(key, pairs, 0, 2), np.dtype(np.float64))
    u1 = np.subtract(1.0, u1, out=u1)  # (0, 1] keeps the log finite
    np.log(u1, out=u1)
    u1 *= -2.0
    np.sqrt(u1, out=u1)
    angle = _uniform(_bits(key, pairs, 1, 2, reuse=True), np.dtype(np.float64))
    angle *= 2.0 * np.pi
    return u1, angle


def _normal(key: np.uint64, starts: np.ndarray, length: int, dtype: np.dtype) -> np.ndarray:
    """Standard normals of ``len(starts)`` runs of ``length`` consecutive global indices.

    Element ``i`` is ``radius * cos(angle)`` of pair ``i // 2`` if ``i`` is even
    and ``radius * sin(angle)`` if odd; each run draws the pairs it touches
    (one more than half its length, so a run starting at an odd index is covered).
    Returns an array of shape ``(len(starts), length)``.
    """
    npairs = length // 2 + 1
    pairs = (starts >> np.uint64(1))[:, None] + np.arange(npairs, dtype=np.uint64)
    pairs = pairs.reshape(-1)
    if dtype == np.float64:
        radius, angle = _polar64(key, pairs)
    else:
        radius, angle = _polar32(_bits(key, pairs, 0, 1, reuse=True))
    radius, angle = radius.reshape(-1, npairs), angle.reshape(-1, npairs)
    both = np.empty((len(starts), npairs, 2), dtype=radius.dtype)
    np.multiply(radius, np.cos(angle), out=both[..., 0])
    np.sin(angle, out=angle)
    np.multiply(radius, angle, out=both[..., 1])
    both = both.reshape(len(starts), 2 * npairs)
    odd = (starts & np.uint64(1)).astype(np.intp)
    first = int(odd[0])
    if len(odd) == 1 or (odd == first).all():  # every run starts at the same parity
        return both[:, first : first + length]
    columns = odd[:, None] + np.arange(length)
    return np.take_along_axis(both, columns, axis=1)


class _Scratch:
    """The temporaries of float32 normal boxes of up to ``npairs`` pairs, reused box after box.

    In a Dask worker glibc gives a freed 64 KiB temporary back to the system at once
    (the nanny sets ``MALLOC_TRIM_THRESHOLD_``), so allocating the temporaries anew for
    every box faulted fresh pages in each time: about a third of a chunk's CPU time.
    """

    def __init__(self, npairs: int):
        self.npairs = npairs
        with np.errstate(over="ignore"):
            self.steps = np.arange(npairs, dtype=np.uint64) * _GAMMA  # i * gamma, wrapping
        self.bits = np.empty(npairs, dtype=np.uint64)
        self.shifted = np.empty(npairs, dtype=np.uint64)
        self.radius = np.empty(npairs, dtype=np.float32)
        self.angle = np.empty(npairs, dtype=np.float32)
        self.trig = np.empty(npairs, dtype=np.float32)


_local = threading.local()


def _scratch(npairs: int) -> _Scratch:
    """The calling thread's :class:`_Scratch` of at least ``npairs`` pairs, kept between chunks.

    Fresh buffers for every chunk faulted their 1.1 MiB of pages in again: 1.1 ms of a
    32 MiB chunk's CPU in a worker (0.6 in one process). Each thread that draws float32
    normals keeps its largest one (1.1 MiB at :data:`_PAIRS32`).
    """
    scratch = getattr(_local, "scratch", None)
    if scratch is None or scratch.npairs < npairs:
        scratch = _local.scratch = _Scratch(npairs)
    return scratch


# The scalars of the float32 normal path, made once (each call of it is a few numpy calls on a box)
_SHIFTS = tuple(np.uint64(k) for k in (30, 27, 31))
_LOW24_32 = np.uint32(0xFFFFFF)
_HIGH_WORD = 1 if sys.byteorder == "little" else 0  # the high half of a uint64 as 2 uint32s
_ONE32, _SCALE32, _MINUS2 = np.float32(1.0), np.float32(2.0**-32), np.float32(-2.0)
_ANGLE32 = np.float32(2.0 * np.pi * 2.0**-24)


def _mix_into(z: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """:func:`_mix` of ``z`` in place, its shifts written into ``tmp`` (no allocation).

    Array arithmetic on unsigned integers wraps without a warning (numpy checks no
    overflow in array loops), so no ``np.errstate`` is needed.
    """
    s30, s27, s31 = _SHIFTS
    np.bitwise_xor(z, np.right_shift(z, s30, out=tmp), out=z)
    np.multiply(z, _M1, out=z)
    np.bitwise_xor(z, np.right_shift(z, s27, out=tmp), out=z)
    np.multiply(z, _M2, out=z)
    np.bitwise_xor(z, np.right_shift(z, s31, out=tmp), out=z)
    return z


def _normal32_into(dest: np.ndarray, key: np.uint64, start: int, scratch: _Scratch) -> None:
    """:func:`_normal_into` of a float32 ``dest``, with the same operations on the same
    inputs (so the same values), into the buffers of ``scratch``.

    The integers come out of the 64-bit draws as 32-bit words, not by shifts and int64
    casts (per 32 MiB chunk, in one process): the radius's high word through a strided
    ``uint32`` view, cast straight to float32 (1.9 ms against 2.2 for the shift and the int64
    cast); the angle's low 24 bits through a wrapping cast to ``uint32``, a mask there and an
    ``int32`` cast (1.45 ms against 1.85). A cast rounds an integer's value the same way
    whatever its type (all 2**32 ``uint32`` values checked once against the int64 cast; the
    tests compare with :func:`_normal_into`, which casts from int64), so no value changes.
    """
    length = dest.size
    first, last = start >> 1, (start + length - 1) >> 1
    n = last - first + 1
    z, tmp = scratch.bits[:n], scratch.shifted[:n]
    radius, angle = scratch.radius[:n], scratch.angle[:n]
    # (first + i + 1) * gamma + key, wrapping (array arithmetic on unsigned integers wraps
    # without a warning: no np.errstate, 1.7 us a box)
    np.add(scratch.steps[:n], np.uint64(((first + 1) * int(_GAMMA) + int(key)) & _MASK64), out=z)
    _mix_into(z, tmp)
    # _polar32: the top 32 bits give the radius, the low 24 the angle
    np.copyto(radius, z.view(np.uint32)[_HIGH_WORD::2], casting="unsafe")
    np.add(radius, _ONE32, out=radius)
    np.multiply(radius, _SCALE32, out=radius)
    np.log(radius, out=radius)
    np.multiply(radius, _MINUS2, out=radius)
    np.sqrt(radius, out=radius)
    low = scratch.shifted.view(np.uint32)[:n]
    np.copyto(low, z, casting="unsafe")  # the low 32 bits (the cast wraps)
    np.bitwise_and(low, _LOW24_32, out=low)
    np.copyto(angle, low.view(np.int32), casting="unsafe")
    np.multiply(angle, _ANGLE32, out=angle)
    odd = start & 1  # an odd start begins with the sine of its pair
    n_cos, n_sin = (length + 1 - odd) // 2, (length + odd) // 2
    cos = np.cos(angle[odd : odd + n_cos], out=scratch.trig[:n_cos])
    np.multiply(radius[odd : odd + n_cos], cos, out=dest[odd::2])
    sin = np.sin(angle[:n_sin], out=scratch.trig[:n_sin])
    np.multiply(radius[:n_sin], sin, out=dest[1 - odd :: 2])


def _normal_into(dest: np.ndarray, key: np.uint64, start: int) -> None:
    """Write the standard normals of global indices ``start, start + 1, ...`` into ``dest``.

    ``dest`` is 1-d (a contiguous run of the output chunk). The same values as
    :func:`_normal`, without its ``(runs, pairs, 2)`` buffer and the copies out
    of it: cosines and sines are taken of contiguous slices of the angles (so the
    same kernels run on the same inputs) and multiplied straight into every
    other element of ``dest``.
    """
    length = dest.size
    first, last = start >> 1, (start + length - 1) >> 1
    pairs = np.arange(last - first + 1, dtype=np.uint64)
    if dest.dtype == np.float64:
        pairs += np.uint64(first)
        radius, angle = _polar64(key, pairs)
    else:  # _bits(key, first + i) folded: (first + i + 1) * gamma + key, wrapping
        with np.errstate(over="ignore"):
            pairs *= _GAMMA
            pairs += np.uint64(((first + 1) * int(_GAMMA) + int(key)) & _MASK64)
        radius, angle = _polar32(_mix(pairs))
    odd = start & 1  # an odd start begins with the sine of its pair
    n_cos, n_sin = (length + 1 - odd) // 2, (length + odd) // 2
    cos = np.cos(angle[odd : odd + n_cos])
    np.multiply(radius[odd : odd + n_cos], cos, out=dest[odd::2])
    sin = np.sin(angle[:n_sin], out=cos[:n_sin] if n_sin <= n_cos else None)
    np.multiply(radius[:n_sin], sin, out=dest[1 - odd :: 2])


def _run_start(offsets, lshape, gshape, strides) -> int | None:
    """The global index a box starts at, if its elements are one run of consecutive ones.

    That is when every axis after the first one longer than 1 is whole.
    """
    outer = next((a for a, n in enumerate(lshape) if n > 1), len(lshape))
    if tuple(lshape[outer + 1 :]) != tuple(gshape[outer + 1 :]):
        return None
    return _first_index(offsets, strides)


def _first_index(offsets, strides) -> int:
    """The C-order flat global index of a box's first element."""
    return sum(off * stride for off, stride in zip(offsets, strides, strict=True))


def _runs(flat: np.ndarray) -> tuple[np.ndarray, int]:
    """A box's global indices (C order) as runs of consecutive ones: their starts, length.

    One run when the box is one contiguous range; else one run per row of
    its last axis (consecutive in C order).
    """
    ravel = flat.reshape(-1)
    if int(ravel[-1]) - int(ravel[0]) == ravel.size - 1:
        return ravel[:1], ravel.size
    rows = flat.reshape(-1, flat.shape[-1])
    return rows[:, 0].copy(), rows.shape[1]


def _shift_scale(z: np.ndarray, mean: float, std: float) -> None:
    """``z * std + mean`` in place (normals of a given mean and deviation)."""
    if std != 1.0:
        z *= z.dtype.type(std)
    if mean != 0.0:
        z += z.dtype.type(mean)


def _draw(kind: str, key: np.uint64, flat: np.ndarray, dtype: np.dtype, params) -> np.ndarray:
    """The values at global indices ``flat`` (uint64 of the box's shape, left unchanged)."""
    if kind == "uniform":
        return _uniform(_bits(key, flat.reshape(-1), 0, 1), dtype)
    if kind == "normal":
        z = _normal(key, *_runs(flat), dtype)
        _shift_scale(z, *params)
        return z
    if kind == "integer":
        low, span = params
        draws = _bits(key, flat.reshape(-1), 0, 1)
        draws %= np.uint64(span)
        return draws.view(np.int64) + np.int64(low)
    raise ValueError(
        f"`kind` must be 'uniform', 'normal' or 'integer', got {kind!r}"
    )  # pragma: no cover


def _boxes(offsets, lshape, axis: int = 0, block: int = _BLOCK):
    """Sub-boxes ``(offsets, lshape, local index)`` of a chunk, in C order.

    Each box holds at most ``block`` elements: whole slabs of ``axis`` where
    they fit, otherwise one index of ``axis`` at a time, recursing inward.
    """
    if not lshape:  # a 0-d chunk is one box
        yield offsets, lshape, ()
        return
    n = lshape[axis]
    inner = math.prod(lshape[axis + 1 :])
    if axis == len(lshape) - 1 or inner * n <= block:
        step = n if inner * n <= block else max(1, block // inner)
    elif inner <= block:
        step = block // inner
    else:
        for i in range(n):
            sub_off = (*offsets[:axis], offsets[axis] + i, *offsets[axis + 1 :])
            sub_shape = (*lshape[:axis], 1, *lshape[axis + 1 :])
            for off, shape, index in _boxes(sub_off, sub_shape, axis + 1, block):
                yield off, shape, (*index[:axis], slice(i, i + 1), *index[axis + 1 :])
        return
    for start in range(0, n, step):
        stop = min(n, start + step)
        off = (*offsets[:axis], offsets[axis] + start, *offsets[axis + 1 :])
        shape = (*lshape[:axis], stop - start, *lshape[axis + 1 :])
        index = (*(slice(None),) * axis, slice(start, stop))
        yield off, shape, index


def _chunk(offsets, lshape, gshape, key, kind, dtype, params):
    """Generate one chunk (runs on the worker that will hold it).

    The work goes box by box of at most :data:`_BLOCK` elements, so the hash's
    temporaries stay small (in the CPU cache, and below the allocator's mmap
    threshold); values depend only on global indices, never on the boxes.
    Normal boxes hold twice as many elements: they draw one value per pair.
    Float32 normals of whole rows go in boxes of :data:`_PAIRS32` pairs into
    buffers each thread keeps (:func:`_scratch`).
    """
    dtype = np.dtype(dtype)
    out = np.empty(lshape, dtype=dtype)
    if out.size == 0:
        return out
    strides = _strides(gshape)
    block = 2 * _BLOCK if kind == "normal" else _BLOCK
    scratch = None
    if kind == "normal" and dtype == np.float32:
        if tuple(lshape[1:]) == tuple(gshape[1:]):  # whole rows: every box is one run
            block = 2 * _PAIRS32
        scratch = _scratch(block // 2 + 2)
    for off, shape, index in _boxes(tuple(offsets), tuple(lshape), block=block):
        view = out[(*index, Ellipsis)]  # a view, also of a 0-d chunk
        if kind == "normal" and view.flags.c_contiguous:
            start = _run_start(off, shape, gshape, strides)
            if start is not None:  # the common case: whole rows of a C-order array
                dest = view.reshape(-1)
                if scratch is not None:
                    _normal32_into(dest, key, start, scratch)
                else:
                    _normal_into(dest, key, start)
                _shift_scale(dest, *params)
                continue
        flat = _global_index(off, shape, gshape, strides)
        out[index] = _draw(kind, key, flat, dtype, params).reshape(shape)
    return out


def _chunk_on(offsets, lshape, device, *args):
    """:func:`_chunk` on the host, then copied to ``device`` on the same worker.

    The bits are computed in numpy on every device, so integers and uniforms are
    bit-identical on CPU and GPU (normals too, as the same host code draws them).
    """
    return _xp.to_device(_chunk(offsets, lshape, *args), device)


def _next_key() -> np.uint64:
    with _lock:
        key = _stream_key(_state["seed"], _state["counter"])
        _state["counter"] += 1
    return key


def _shape_from(args: tuple, name: str) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return _layout.normalize_shape(args, name)


def _make(shape, dtype, split, comm, kind, params, device=None) -> DNDarray:
    split = _layout.normalize_axis(split, len(shape), "split")
    device = _xp.sanitize_device(device)  # an unusable device fails here, before any task
    comm = _factories.sanitize_comm(comm)
    counts = _layout.balanced_counts(shape[split], comm.size) if split is not None else ()
    args = (shape, _next_key(), kind, dtype, params)
    if device.device_type == "cpu":
        return _factories.from_function(
            f"random-{kind}", _chunk, shape, dtype, split, counts, comm, args=args
        )
    meta = _xp.meta(dtype, len(shape), device)
    return _factories.from_function(
        f"random-{kind}", _chunk_on, shape, dtype, split, counts, comm, (device, *args), meta
    )


def seed(seed: int | None = None) -> None:
    """Seed the generator; ``None`` draws a fresh seed from the OS.

    Examples
    --------
    >>> import dndask as ht
    >>> ht.random.seed(7)
    >>> a = ht.random.rand(3, split=0).numpy()
    >>> ht.random.seed(7)
    >>> bool((ht.random.rand(3).numpy() == a).all())
    True
    """
    if seed is None:
        seed = secrets.randbits(63)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"`seed` must be an int or None, got {type(seed).__name__}")
    with _lock:
        _state["seed"], _state["counter"] = int(seed), 0


def get_state() -> tuple[str, int, int]:
    """``(algorithm, seed, counter)``; pass it to :func:`set_state` to replay.

    >>> import dndask as ht
    >>> ht.random.seed(3)
    >>> ht.random.get_state()
    ('splitmix64', 3, 0)
    """
    with _lock:
        return (ALGORITHM, _state["seed"], _state["counter"])


def set_state(state: tuple) -> None:
    """Restore a state from :func:`get_state`.

    >>> import dndask as ht
    >>> ht.random.set_state(("splitmix64", 3, 5))
    >>> ht.random.get_state()[2]
    5
    """
    if not isinstance(state, tuple) or len(state) != 3:
        raise TypeError(f"`state` must be a 3-tuple (algorithm, seed, counter), got {state!r}")
    algorithm, seed_, counter = state
    if algorithm != ALGORITHM:
        raise ValueError(f"`state` algorithm must be {ALGORITHM!r}, got {algorithm!r}")
    for name, value in (("seed", seed_), ("counter", counter)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ValueError(f"`state` {name} must be a non-negative int, got {value!r}")
    with _lock:
        _state["seed"], _state["counter"] = int(seed_), int(counter)


def _float_dtype(dtype) -> np.dtype:
    dtype = _types.canonical_dtype(dtype)
    if dtype not in (_types.float32, _types.float64):
        raise ValueError(f"`dtype` must be float32 or float64, got {dtype}")
    return dtype


def rand(*shape, dtype=_types.float32, split=None, comm=None, device=None) -> DNDarray:
    """Uniform samples in [0, 1) of the given shape.

    Examples
    --------
    >>> import dndask as ht
    >>> a = ht.random.rand(4, 3, split=0)
    >>> a.shape, a.dtype
    ((4, 3), dtype('float32'))
    """
    shape = _shape_from(shape, "shape")
    return _make(shape, _float_dtype(dtype), split, comm, "uniform", None, device)


def random(shape=(), dtype=_types.float64, split=None, comm=None, device=None) -> DNDarray:
    """NumPy-style uniform samples in [0, 1) (``shape`` as one tuple; float64).

    >>> import dndask as ht
    >>> ht.random.random((2, 2)).dtype
    dtype('float64')
    """
    shape = _layout.normalize_shape(shape)
    return _make(shape, _float_dtype(dtype), split, comm, "uniform", None, device)


def randn(*shape, dtype=_types.float32, split=None, comm=None, device=None) -> DNDarray:
    """Standard normal samples (float32 by default, as in Heat).

    Examples
    --------
    >>> import dndask as ht
    >>> ht.random.seed(1)
    >>> a = ht.random.randn(7, 4, 3, split=0)
    >>> a.lshape_map.tolist()[3]
    [1, 4, 3]
    """
    shape = _shape_from(shape, "shape")
    return _make(shape, _float_dtype(dtype), split, comm, "normal", (0.0, 1.0), device)


def normal(
    mean=0.0, std=1.0, shape=(), dtype=_types.float32, split=None, comm=None, device=None
) -> DNDarray:
    """Normal samples with scalar ``mean`` and ``std``.

    >>> import dndask as ht
    >>> ht.random.normal(5.0, 0.0, (3,)).numpy().tolist()
    [5.0, 5.0, 5.0]
    """
    for name, value in (("mean", mean), ("std", std)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}")
    if std < 0:
        raise ValueError(f"`std` must be non-negative, got {std}")
    params = (float(mean), float(std))
    shape = _layout.normalize_shape(shape)
    return _make(shape, _float_dtype(dtype), split, comm, "normal", params, device)


def randint(
    low, high=None, size=(), dtype=_types.int64, split=None, comm=None, device=None
) -> DNDarray:
    """Random integers in ``[low, high)`` (``[0, low)`` if ``high`` is None).

    >>> import dndask as ht
    >>> v = ht.random.randint(3, 5, size=(10,), split=0).numpy()
    >>> bool(((v >= 3) & (v < 5)).all())
    True
    """
    if high is None:
        low, high = 0, low
    for name, value in (("low", low), ("high", high)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"`{name}` must be an int, got {type(value).__name__}")
    if high <= low:
        raise ValueError(f"`high` must be greater than `low` ({low}), got {high}")
    dtype = _types.canonical_dtype(dtype)
    if dtype.kind not in "iu":
        raise ValueError(f"`dtype` must be an integer type, got {dtype}")
    info = np.iinfo(dtype)
    if low < info.min or high - 1 > info.max:
        raise ValueError(f"`low`/`high` [{low}, {high}) must fit in {dtype}")
    shape = _layout.normalize_shape(size, "size")
    return _make(shape, dtype, split, comm, "integer", (int(low), int(high) - int(low)), device)


def standard_normal(shape=(), dtype=_types.float32, split=None, comm=None, device=None) -> DNDarray:
    """Standard normal samples of ``shape`` (one tuple, as numpy's).

    >>> import dndask as ht
    >>> ht.random.standard_normal((2, 3), split=1).shape
    (2, 3)
    """
    shape = _layout.normalize_shape(shape)
    return _make(shape, _float_dtype(dtype), split, comm, "normal", (0.0, 1.0), device)


def random_sample(shape=(), dtype=_types.float64, split=None, comm=None, device=None) -> DNDarray:
    """Uniform samples in [0, 1) of ``shape``: numpy's name of :func:`random`.

    >>> import dndask as ht
    >>> ht.random.random_sample((3,)).dtype
    dtype('float64')
    """
    return random(shape, dtype=dtype, split=split, comm=comm, device=device)


def randperm(n: int, dtype=_types.int64, split=None, comm=None, device=None) -> DNDarray:
    """A random permutation of ``0 .. n-1``, the same for every number of ranks and split.

    Each element draws a 64-bit key on its own rank (a pure function of the seed
    and its index); the permutation is the keys' argsort, which Dask computes as a
    tree of partial sorts: the ``n`` indices meet on one worker before the result
    is laid out with ``split``.

    >>> import dndask as ht
    >>> sorted(ht.random.randperm(5, split=0).numpy().tolist())
    [0, 1, 2, 3, 4]
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"`n` must be an int, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"`n` must be non-negative, got {n}")
    dtype = _types.canonical_dtype(dtype)
    if dtype.kind not in "iu" or (n and np.iinfo(dtype).max < n - 1):
        raise ValueError(f"`dtype` must be an integer type that holds {n - 1}, got {dtype}")
    device = _xp.sanitize_device(device)  # before the cluster starts
    comm = _factories.sanitize_comm(comm)
    split = _layout.normalize_axis(split, 1, "split")
    keys = _make((int(n),), _types.float64, 0 if n else None, comm, "uniform", None, device)
    if n == 0:
        return _factories.zeros((0,), dtype=dtype, split=split, comm=comm, device=device)
    order = (
        keys.to_dask()
        .rechunk(-1)
        .map_blocks(_argsort_keys, dtype, dtype=dtype, meta=_xp.meta(dtype, 1, device))
    )
    return from_dask(order, split, comm, parents=(keys,))


def _argsort_keys(keys, dtype):
    """The stable argsort of a chunk of keys, in the chunk's namespace."""
    return _xp.namespace_of(keys).argsort(keys, kind="stable").astype(dtype)


def permutation(x, split=None, comm=None, device=None) -> DNDarray:
    """A permutation of ``range(x)`` for an int; a copy of ``x`` with its rows shuffled otherwise.

    A DNDarray keeps its split (its rows are gathered by a random index array).

    >>> import dndask as ht
    >>> a = ht.arange(6, split=0)
    >>> sorted(ht.random.permutation(a).numpy().tolist())
    [0, 1, 2, 3, 4, 5]
    """
    if isinstance(x, DNDarray):
        if x.ndim == 0:
            raise ValueError("`x` of `permutation` must have at least one axis")
        index = randperm(x.shape[0], comm=x.comm, device=x.device)
        return x[index]
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"`x` must be an int or a DNDarray, got {type(x).__name__}")
    return randperm(int(x), split=split, comm=comm, device=device)
