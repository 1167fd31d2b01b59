"""convolve: the windows plan, values against numpy on every layout, Heat's stride and batches."""

import numpy as np
import pytest
from conftest import RANK_COUNTS, holders, skewed, values_of

import dndask as ht
import dndask.heat as hht
from dndask import _signal
from dndask._signal import convolve_batched, convolve_strided, mode_window, plan_convolution


# ------------------------------------------------------------------ planning (no cluster)
def _rebuilt(counts, m, start, stop, stride, signal):
    """What the plan's windows compute, with numpy: the outputs each rank holds."""
    displs = np.concatenate([[0], np.cumsum(counts)])
    kernel = np.arange(1.0, m + 1)
    out = []
    for w in plan_convolution(counts, m, start, stop, stride):
        if not w.count:
            continue
        parts = [signal[displs[s] + lo : displs[s] + hi] for s, lo, hi in w.pieces]
        padded = np.concatenate([np.zeros(w.left), *parts, np.zeros(w.right)])
        out.append(np.convolve(padded, kernel, "valid")[::stride][: w.count])
    return np.concatenate(out)


@pytest.mark.parametrize("counts", [[7], [3, 4], [0, 7, 0], [1, 0, 1, 5], [2, 2, 1, 1, 1]])
@pytest.mark.parametrize("m", [1, 2, 3, 6, 7])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("stride", [1, 2, 5])
def test_the_plan_computes_numpys_convolution(counts, m, mode, stride):
    signal = np.arange(1.0, 8.0) ** 2
    start, stop = mode_window(mode, 7, m)
    expected = np.convolve(signal, np.arange(1.0, m + 1), "full")[start:stop][::stride]
    np.testing.assert_array_equal(_rebuilt(counts, m, start, stop, stride, signal), expected)
    windows = plan_convolution(counts, m, start, stop, stride)
    assert sum(w.count for w in windows) == len(expected)
    # rank r's outputs end at signal rows it holds: it reads at most m - 1 rows before them
    for r, w in enumerate(windows):
        own = [p for p in w.pieces if p[0] == r]
        assert all(p[0] <= r for p in w.pieces)
        if w.count and counts[r]:
            assert own, (r, w)


def test_mode_windows_are_numpys():
    x, v = np.arange(1.0, 9.0), np.array([1.0, -1.0, 2.0, 0.5])
    full = np.convolve(x, v, "full")
    for mode in _signal.MODES:
        start, stop = mode_window(mode, 8, 4)
        np.testing.assert_array_equal(full[start:stop], np.convolve(x, v, mode))


# --------------------------------------------------------------------- values vs numpy
def _cases():
    rng = np.random.default_rng(4)
    for n, m in [(1, 1), (5, 1), (6, 2), (9, 3), (10, 4), (7, 7), (16, 9), (23, 12)]:
        yield rng.standard_normal(n), rng.standard_normal(m)


@pytest.mark.parametrize("ranks", RANK_COUNTS)
def test_convolve_matches_numpy_on_every_layout(comm_of, ranks):
    comm = comm_of(ranks)
    results, expected = [], []
    for i, (x, v) in enumerate(_cases()):
        for split in (None, 0):
            a = ht.array(x, split=split, comm=comm)
            if i % 2 and split is not None:
                a = skewed(a)  # empty ranks, and chunks shorter than the kernel
            for mode in ("full", "same", "valid"):
                for kernel in (v, ht.array(v, split=0, comm=comm)):
                    got = ht.convolve(a, kernel, mode)
                    assert got.split == split and got.comm == comm
                    results.append(got)
                    expected.append(np.convolve(x, v, mode))
                # numpy's swap: the longer operand is the signal
                results.append(ht.convolve(ht.array(v, split=0, comm=comm), a, mode))
                expected.append(np.convolve(v, x, mode))
    for got, want in zip(values_of(results), expected, strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("x", "v"),
    [
        (np.arange(-6, 9, dtype=np.int32), np.array([1, -2, 3], dtype=np.int8)),
        (np.arange(11, dtype=np.uint8), np.array([2, 1], dtype=np.uint8)),
        (np.array([True, False, True, True, False]), np.array([True, True])),
        (np.arange(9) + 1j * np.arange(9)[::-1], np.array([1j, 2.0, -1.0])),
        (np.linspace(-1, 1, 12, dtype=np.float32), np.array([0.5, -1.5], dtype=np.float32)),
    ],
    ids=["int32-int8", "uint8", "bool", "complex", "float32"],
)
def test_convolve_keeps_numpys_dtypes_and_exact_values(comm_of, x, v):
    comm = comm_of(4)
    for mode in ("full", "same", "valid"):
        got = ht.convolve(ht.array(x, split=0, comm=comm), ht.array(v, comm=comm), mode)
        want = np.convolve(x, v, mode)
        assert got.dtype == want.dtype
        if x.dtype.kind in "biu":
            np.testing.assert_array_equal(got.numpy(), want)
        else:
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_values_are_identical_on_every_layout(comm_of):
    """Each output is the same sum in the same order wherever its window lies."""
    x, v = np.random.default_rng(9).standard_normal((2, 40))
    v = v[:11]
    reference = ht.convolve(ht.array(x, comm=comm_of(1)), v).numpy()
    for ranks in (2, 3, 5):
        a = ht.array(x, split=0, comm=comm_of(ranks))
        for b in (a, skewed(a)):
            np.testing.assert_array_equal(ht.convolve(b, v).numpy(), reference)
    rows = convolve_batched(ht.array(np.stack([x, x, x]), split=0, comm=comm_of(3)), v)
    np.testing.assert_array_equal(rows.numpy()[1], reference)


def test_result_layout_follows_the_signal_and_stays_on_its_ranks(client, comm_of):
    comm = comm_of(3)
    a = ht.array(np.arange(10.0), split=0, comm=comm)
    got = ht.convolve(a, [1.0, 1.0, 1.0]).persist(wait=True)
    # each rank holds the outputs ending at its rows; the last rank also the tail of 2
    assert got.lshape_map[:, 0].tolist() == [4, 3, 5]
    assert not got.balanced
    assert holders(client, got) == [(w,) for w in comm.workers]
    np.testing.assert_array_equal(got.numpy(), np.convolve(np.arange(10.0), [1.0] * 3))
    valid = ht.convolve(a, [1.0, 1.0, 1.0], "valid")
    assert valid.lshape_map[:, 0].tolist() == [2, 3, 3]


def test_np_convolve_dispatches_and_inputs_stay_unchanged(comm_of):
    x = np.arange(8.0)
    a = ht.array(x, split=0, comm=comm_of(3))
    k = ht.array([1.0, 0.5], split=0, comm=comm_of(3))
    names = a.to_dask().name, k.to_dask().name
    got = np.convolve(a, k, mode="valid")
    assert isinstance(got, ht.DNDarray)
    np.testing.assert_array_equal(got.numpy(), np.convolve(x, [1.0, 0.5], "valid"))
    assert (a.to_dask().name, k.to_dask().name) == names
    np.testing.assert_array_equal(a.numpy(), x)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda a, c: ht.convolve(a.reshape((2, 4)), [1.0]), ValueError,
         r"`a` of `convolve` must be 1-D, got shape \(2, 4\)"),
        (lambda a, c: ht.convolve(a, np.ones((2, 2))), ValueError,
         r"`v` of `convolve` must be 1-D, got shape \(2, 2\)"),
        (lambda a, c: ht.convolve(a, []), ValueError, r"`v` of `convolve` must not be empty"),
        (lambda a, c: ht.convolve(a, [1.0], mode="middle"), ValueError,
         r"`mode` must be one of \['full', 'same', 'valid'\], got 'middle'"),
        (lambda a, c: ht.convolve(a, ["x"]), TypeError,
         r"`v` of `convolve` must be numeric, got <U1"),
        (lambda a, c: ht.convolve([1.0], [2.0]), TypeError,
         r"`convolve` needs a DNDarray operand, got list and list"),
        (lambda a, c: ht.convolve(a, ht.ones(2, comm=c)), ValueError,
         r"operands of `convolve` must share a comm"),
        (lambda a, c: convolve_strided(a, [1.0], stride=0), ValueError,
         r"`stride` must be a positive int, got 0"),
        (lambda a, c: convolve_strided(a, [1.0], stride=1.5), TypeError,
         r"`stride` must be an int, got float"),
        (lambda a, c: convolve_batched(a.reshape((2, 4), new_split=1), [1.0]), ValueError,
         r"must be split along a batch axis, not the last one \(got split=1\)"),
        (lambda a, c: convolve_batched(a.reshape((2, 4), new_split=0), np.ones((3, 2))),
         ValueError, r"the batch shapes of `a` and `v` must match, got \(2,\) and \(3,\)"),
    ],
    ids=["a-2d", "v-2d", "v-empty", "mode", "strings", "no-dndarray", "comms", "stride-0",
         "stride-float", "batched-split-last", "batched-shapes"],
)  # fmt: skip
def test_bad_input_is_a_clear_error_and_changes_nothing(comm_of, call, error, match):
    a = ht.array(np.arange(8.0), split=0, comm=comm_of(2))
    name = a.to_dask().name
    with pytest.raises(error, match=match):
        call(a, comm_of(3))
    assert a.to_dask().name == name and a.split == 0


# ---------------------------------------------------------------- stride and batches
def _rows(rows, kernels, start, stop, stride):
    """numpy: each row convolved with its kernel, positions ``start:stop:stride`` kept."""
    flat = [
        np.convolve(r, q, "full")[start:stop][::stride]
        for r, q in zip(
            rows.reshape(-1, rows.shape[-1]), kernels.reshape(-1, kernels.shape[-1]), strict=True
        )
    ]
    return np.reshape(flat, (*rows.shape[:-1], -1))


@pytest.mark.parametrize("ranks", [1, 3, 5])
def test_strided_and_batched_match_numpy(comm_of, ranks):
    comm = comm_of(ranks)
    rng = np.random.default_rng(2)
    x, k, rows = rng.standard_normal(17), rng.standard_normal(4), rng.standard_normal((6, 3, 17))
    per_row = rng.standard_normal((6, 3, 4))
    results, expected = [], []
    for mode in ("full", "same", "valid"):
        start, stop = mode_window(mode, 17, 4)
        for stride in (1, 2, 5):
            full = np.convolve(x, k, "full")[start:stop][::stride]
            results.append(
                convolve_strided(skewed(ht.array(x, split=0, comm=comm)), k, mode, stride)
            )
            expected.append(full)
            for split in (None, 0, 1):
                b = ht.array(rows, split=split, comm=comm)
                results.append(convolve_batched(b, k, mode, stride))
                expected.append(_rows(rows, np.broadcast_to(k, (6, 3, 4)), start, stop, stride))
                per = ht.array(per_row, split=2, comm=comm)
                results.append(convolve_batched(b, per, mode, stride))
                expected.append(_rows(rows, per_row, start, stop, stride))
    for got, want in zip(values_of(results), expected, strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_batched_result_keeps_the_split_and_moves_only_the_kernel_rows(client, comm_of):
    comm = comm_of(3)
    b = ht.array(np.ones((7, 5)), split=0, comm=comm)
    out = convolve_batched(b, ht.array(np.ones((7, 2)), split=1, comm=comm)).persist(wait=True)
    assert out.split == 0 and out.lshape_map[:, 0].tolist() == b.lshape_map[:, 0].tolist()
    assert holders(client, out) == [(w,) for w in comm.workers]
    np.testing.assert_array_equal(out.numpy(), np.tile([1.0, 2, 2, 2, 2, 1], (7, 1)))


# -------------------------------------------------------------------------- Heat's face
def test_heat_convolve_follows_heats_rules(comm_of):
    comm = comm_of(3)
    ones = hht.ones(5, split=0, comm=comm)
    v = hht.arange(3, comm=comm).astype(hht.float)
    # Heat's documented results
    assert hht.convolve(ones, v).tolist() == [0.0, 1.0, 3.0, 3.0, 3.0, 3.0, 2.0]
    assert hht.convolve(ones, v, mode="same").tolist() == [1.0, 3.0, 3.0, 3.0, 3.0]
    assert hht.convolve(ones, v, mode="valid").tolist() == [3.0, 3.0, 3.0]
    assert hht.convolve(ones, v, stride=2).tolist() == [0.0, 3.0, 3.0, 2.0]
    assert hht.convolve(ones, v, mode="valid", stride=2).tolist() == [3.0, 3.0]
    five = hht.convolve(1, 5)
    assert five.tolist() == [5] and five.dtype == hht.int64
    assert isinstance(five, hht.DNDarray)
    # Heat's types: Python floats are float32, operands promote by Heat's rule
    assert hht.convolve(hht.arange(6, comm=comm), [0.5, 0.5]).dtype == hht.float32
    ints = hht.convolve(hht.arange(10, split=0, comm=comm).astype(hht.int), [1, 1, 1])
    assert ints.dtype == hht.int64 and ints.split == 0
    np.testing.assert_array_equal(ints.numpy(), np.convolve(np.arange(10), [1, 1, 1]))
    # batches along the last axis, split along a batch axis
    batch = hht.array(np.arange(40.0).reshape(8, 5), split=0, comm=comm)
    out = hht.convolve(batch, hht.arange(3, comm=comm).astype(hht.float64))
    assert out.split == 0 and out.shape == (8, 7)
    np.testing.assert_allclose(
        out.numpy(), [np.convolve(r, [0.0, 1, 2]) for r in np.arange(40.0).reshape(8, 5)]
    )


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda a: hht.convolve(a, [1, 1, 1, 1], mode="same"), ValueError,
         r"mode 'same' needs an odd-sized filter, got size 4"),
        (lambda a: hht.convolve(a, [1, 1, 1], mode="same", stride=2), ValueError,
         r"`stride` must be 1 for mode 'same', got 2"),
        (lambda a: hht.convolve(a, [1, 1], stride=0), ValueError,
         r"`stride` must be a positive int, got 0"),
        (lambda a: hht.convolve(a, [1, 1], mode="wide"), ValueError,
         r"`mode` must be one of \['full', 'same', 'valid'\], got 'wide'"),
        (lambda a: hht.convolve([0, 1, "tre"], a), TypeError,
         r"non-supported type for signal: list"),
        (lambda a: hht.convolve(a, [1, "pizza"]), TypeError,
         r"non-supported type for filter: list"),
        (lambda a: hht.convolve(a, hht.eye(3)), ValueError,
         r"a 1-D signal needs a 1-D filter, got shapes \(8,\) and \(3, 3\)"),
        (lambda a: hht.convolve(a.reshape((2, 4)).resplit(1), [1.0]), ValueError,
         r"the signal must be distributed along a batch axis"),
        (lambda a: hht.convolve(a.reshape((2, 4)), hht.ones((3, 2))), ValueError,
         r"the batch shapes of the signal and the filter must match"),
    ],
    ids=["same-even", "same-stride", "stride-0", "mode", "signal-strings", "filter-strings",
         "filter-2d", "batch-split-last", "batch-shapes"],
)  # fmt: skip
def test_heat_convolve_bad_input(comm_of, call, error, match):
    a = hht.arange(8, split=0, comm=comm_of(2)).astype(hht.float)
    name = a.to_dask().name
    with pytest.raises(error, match=match):
        call(a)
    assert a.to_dask().name == name
