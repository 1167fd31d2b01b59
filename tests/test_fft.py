"""dndask.fft against scipy.fft (and torch for Heat's dtype rule) on 1-5 ranks, every split.

The pure planner is tested without the cluster: steps, result layout and the
bytes its relayouts move (each element at most twice).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.fft
import torch
from conftest import received_bytes, splits_of, values_of

import dndask as ht
from dndask._fft import plan_fft
from dndask._fft._plan import Relayout, Stage

RNG = np.random.default_rng(20261206)
NAMES_1D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
REAL_INPUT = {"rfft", "ihfft"}


def data(shape, dtype) -> np.ndarray:
    values = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * RNG.standard_normal(shape)
    return values.astype(dtype)


def input_dtype(name: str, dtype) -> np.dtype:
    """The real counterpart for transforms that need a real input."""
    dtype = np.dtype(dtype)
    if name in REAL_INPUT and dtype.kind == "c":
        return np.dtype(np.float32 if dtype == np.complex64 else np.float64)
    return dtype


def tol(dtype) -> float:
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def check_all(cases) -> None:
    """``(result, expected, split)`` triples: split, dtype, balanced or kept counts, values."""
    results = [r for r, _, _ in cases]
    for got, (result, expected, split) in zip(values_of(results), cases, strict=True):
        assert result.split == split
        assert result.shape == expected.shape
        assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
        scale = max(1.0, float(np.abs(expected).max(initial=0)))
        np.testing.assert_allclose(got, expected, rtol=0, atol=tol(expected.dtype) * scale)


# ======================================================== pure planning


def test_plan_along_other_axes_is_local():
    plan = plan_fft("fft", (8, 6), 0, (4, 4), 2, (1,), (6,), np.dtype("complex128"))
    assert plan.steps == (Stage("fft", (1,), (6,)),)
    assert plan.moved == 0 and plan.counts is None and plan.split == 0


def test_plan_along_split_moves_each_element_at_most_twice():
    # relayout to the free axis 1 and back: every element not on its rank moves twice
    plan = plan_fft("fft", (8, 6, 4), 0, (2, 2, 2, 2), 4, (0, 2), (8, 4), np.dtype("float32"))
    assert [type(s).__name__ for s in plan.steps] == ["Relayout", "Stage", "Relayout"]
    assert plan.steps[0] == Relayout(1) and plan.steps[2] == Relayout(0)
    out_bytes = 8 * 6 * 4 * 8  # complex64 after the transform
    in_bytes = 8 * 6 * 4 * 4
    assert plan.moved <= in_bytes + out_bytes
    assert plan.dtype == np.complex64 and plan.counts == (2, 2, 2, 2)


@pytest.mark.parametrize(
    ("kind", "order"),
    [
        ("fft", ["Stage", "Relayout", "Stage", "Relayout"]),
        ("rfft", ["Stage", "Relayout", "Stage", "Relayout"]),
        ("irfft", ["Relayout", "Stage", "Relayout", "Stage"]),
    ],
)
def test_plan_over_every_axis_splits_the_transform_in_two(kind, order):
    plan = plan_fft(kind, (6, 4), 0, (3, 3), 2, (0, 1), (6, 4), np.dtype("complex128"))
    assert [type(s).__name__ for s in plan.steps] == order
    # a real-to-complex stage comes first, a complex-to-real one last
    stages = [s for s in plan.steps if isinstance(s, Stage)]
    if kind == "rfft":
        assert stages[0].kind == "rfft"
    if kind == "irfft":
        assert stages[-1].kind == "irfft"
    assert plan.moved <= 2 * 6 * 4 * 16


def test_plan_of_a_1d_split_array_gathers_and_spreads_back():
    plan = plan_fft("fft", (10,), 0, (5, 5), 2, (0,), (10,), np.dtype("complex128"))
    assert plan.steps[0] == Relayout(None) and plan.steps[-1] == Relayout(0)
    assert plan.moved == 5 * 16 * 2


# ======================================================== values


@pytest.mark.parametrize("n", [2, 5])
@pytest.mark.parametrize("split", splits_of(3))
def test_1d_transforms_every_axis(comm_of, n, split):
    comm = comm_of(n)
    cases = []
    for dtype in (np.float64, np.complex64):
        for name in NAMES_1D:
            values = data((5, 4, 6), input_dtype(name, dtype))
            x = ht.array(values, split=split, comm=comm)
            for axis in (0, 1, 2):
                fn = getattr(ht.fft, name)
                cases.append((fn(x, axis=axis), getattr(scipy.fft, name)(values, axis=axis), split))
            cases.append(
                (
                    fn(x, n=7, axis=split or 0),
                    getattr(scipy.fft, name)(values, n=7, axis=split or 0),
                    split,
                )
            )
    check_all(cases)


@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("split", splits_of(3))
def test_nd_transforms(comm_of, n, split):
    comm = comm_of(n)
    cases = []
    for dtype in (np.float32, np.complex128):
        for name in NAMES_1D:
            values = data((6, 5, 4), input_dtype(name, dtype))
            x = ht.array(values, split=split, comm=comm)
            for suffix, kwargs in (
                ("2", {}),
                ("2", {"axes": (0, 1)}),
                ("n", {}),
                ("n", {"axes": (0, 2), "s": (7, 6)}),
                ("n", {"s": (3, 4)}),
            ):
                fname = name + suffix
                expected = getattr(scipy.fft, fname)(values, **kwargs)
                cases.append((getattr(ht.fft, fname)(x, **kwargs), expected, split))
    check_all(cases)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_2d_arrays_transformed_over_both_axes(comm_of, split):
    comm = comm_of(3)
    cases = []
    for name in NAMES_1D:
        values = data((7, 6), input_dtype(name, np.complex128))
        x = ht.array(values, split=split, comm=comm)
        for fname, kwargs in ((name + "2", {}), (name + "n", {"s": (4, 9)})):
            cases.append(
                (
                    getattr(ht.fft, fname)(x, **kwargs),
                    getattr(scipy.fft, fname)(values, **kwargs),
                    split,
                )
            )
    check_all(cases)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_1d_split_arrays(comm_of, n):
    comm = comm_of(n)
    values = data((9,), np.complex128)
    x = ht.array(values, split=0, comm=comm)
    y = ht.fft.fft(x, n=12)
    check_all(
        [
            (y, scipy.fft.fft(values, n=12), 0),
            (ht.fft.ifft(y), scipy.fft.ifft(scipy.fft.fft(values, n=12)), 0),
        ]
    )
    assert y.lshape_map[:, 0].tolist() == list(
        ht.array(np.zeros(12), split=0, comm=comm).lshape_map[:, 0].tolist()
    )


def test_empty_ranks_and_uneven_counts(comm_of):
    comm = comm_of(5)
    values = data((3, 4), np.float64)
    x = ht.array(values, split=0, comm=comm)  # ranks 3 and 4 hold nothing
    cases = [
        (ht.fft.fft(x, axis=1), scipy.fft.fft(values, axis=1), 0),
        (ht.fft.fft(x, axis=0), scipy.fft.fft(values, axis=0), 0),
        (ht.fft.rfft2(x), scipy.fft.rfft2(values), 0),
        (ht.fft.irfftn(ht.fft.rfftn(x), s=(3, 4)), values, 0),
    ]
    check_all(cases)
    # a local transform keeps the counts it was given
    y = ht.fft.fft(x, axis=1)
    assert y.lshape_map[:, 0].tolist() == [1, 1, 1, 0, 0]


def test_round_trips_and_norms(comm_of):
    comm = comm_of(4)
    values = data((8, 6), np.float64)
    x = ht.array(values, split=1, comm=comm)
    cases = []
    for norm in (None, "backward", "ortho", "forward"):
        cases.append((ht.fft.fftn(x, norm=norm), scipy.fft.fftn(values, norm=norm), 1))
        cases.append((ht.fft.irfftn(ht.fft.rfftn(x, norm=norm), s=(8, 6), norm=norm), values, 1))
        cases.append((ht.fft.hfft(x, norm=norm), scipy.fft.hfft(values, norm=norm), 1))
    check_all(cases)


def test_heat_dtype_rule_for_integers_matches_torch(comm_of):
    comm = comm_of(2)
    values = np.arange(12).reshape(3, 4)
    y = ht.fft.fft(ht.array(values, split=0, comm=comm), axis=0)
    expected = torch.fft.fft(torch.from_numpy(values), dim=0).numpy()
    assert y.dtype == expected.dtype == np.complex64
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5)


@pytest.mark.parametrize("split", [None, 0])
def test_frequencies_and_shifts(comm_of, split):
    comm = comm_of(3)
    cases = []
    for n, d in ((10, 0.1), (7, 2.0), (1, 1.0)):
        cases.append(
            (
                ht.fft.fftfreq(n, d, split=split, comm=comm),
                np.fft.fftfreq(n, d).astype(np.float32),
                split,
            )
        )
        cases.append(
            (
                ht.fft.rfftfreq(n, d, dtype=np.float64, split=split, comm=comm),
                np.fft.rfftfreq(n, d),
                split,
            )
        )
    for shape in ((5, 4), (6, 3)):
        for s in splits_of(2):
            values = data(shape, np.float64)
            x = ht.array(values, split=s, comm=comm)
            for axes in (None, 0, 1, (0, 1)):
                cases.append((ht.fft.fftshift(x, axes=axes), np.fft.fftshift(values, axes=axes), s))
                cases.append(
                    (ht.fft.ifftshift(x, axes=axes), np.fft.ifftshift(values, axes=axes), s)
                )
    check_all(cases)


def test_moved_bytes_match_the_plan(client, comm_of):
    comm = comm_of(4)
    values = data((64, 32), np.complex128)
    x = ht.array(values, split=0, comm=comm).persist(wait=True)
    plan = plan_fft("fft", x.shape, 0, x.distribution.counts, 4, (0,), (64,), x.dtype)
    since = time.time()
    y = ht.fft.fft(x, axis=0).persist(wait=True)
    moved = received_bytes(client, since)
    # the plan's bytes, plus at most a little per message
    assert plan.moved <= moved <= plan.moved + 4 * 4 * 2 * 4096
    assert plan.moved == 2 * values.nbytes * 3 // 4
    np.testing.assert_allclose(y.numpy(), scipy.fft.fft(values, axis=0), rtol=1e-10, atol=1e-9)


# ======================================================== bad inputs


def test_bad_inputs(comm_of):
    comm = comm_of(2)
    x = ht.array(data((4, 3), np.float64), split=0, comm=comm)
    c = ht.array(data((4, 3), np.complex128), split=0, comm=comm)
    with pytest.raises(TypeError, match="`x` of `fft` must be a DNDarray"):
        ht.fft.fft(np.ones(3))
    with pytest.raises(TypeError, match="`x` of `rfft` must be real, got complex128"):
        ht.fft.rfft(c)
    with pytest.raises(ValueError, match=r"`axis` must be in \[-2, 1\]"):
        ht.fft.fft(x, axis=2)
    with pytest.raises(TypeError, match="`axis` must be None or an int"):
        ht.fft.fft(x, axis=(0, 1))
    with pytest.raises(ValueError, match="`s` of `fftn` must have at most 2 entries"):
        ht.fft.fftn(x, s=(1, 2, 3))
    with pytest.raises(ValueError, match="`s` and `axes` of `fft2` must have the same length"):
        ht.fft.fft2(x, s=(2,), axes=(0, 1))
    with pytest.raises(ValueError, match="`n` must be positive, got 0"):
        ht.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="`norm` must be None, 'backward', 'ortho' or 'forward'"):
        ht.fft.fft(x, norm="both")
    with pytest.raises(ValueError, match="`axes` of `fftn` must not repeat an axis"):
        ht.fft.fftn(x, axes=(0, 0))
    with pytest.raises(ValueError, match="`n` of `fftfreq` must be an int"):
        ht.fft.fftfreq(10.5)
    with pytest.raises(NotImplementedError, match="complex `d`"):
        ht.fft.fftfreq(10, 1j)
    with pytest.raises(TypeError, match="`dtype` of `rfftfreq` must be a float or complex type"):
        ht.fft.rfftfreq(10, dtype=np.int32)
    with pytest.raises(ValueError, match="`split` of `fftfreq` must be None or 0"):
        ht.fft.fftfreq(10, split=1)
