"""dndask.heat's ``larray``: one live tensor per array, as Heat's process-local tensor.

Facts from Heat 1.8: in-place methods change the tensor ``a.larray`` returns (the same
object before and after), writing into that tensor changes the array, and the
``larray`` setter replaces the local data (its shape checked but for the split axis).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dndask.heat as ht


@pytest.mark.parametrize("split", [None, 0, 1])
def test_inplace_methods_keep_the_local_tensor(comm_of, split):
    comm = comm_of(3)
    a = ht.array(np.arange(12.0).reshape(4, 3), split=split, comm=comm)
    local = a.larray
    assert a.add_(2.0) is a and a.larray is local
    want = np.arange(12.0).reshape(4, 3) + 2.0
    np.testing.assert_array_equal(local.numpy(), want[tuple(_rank0(a))])
    a *= 2.0
    assert a.larray is local
    np.testing.assert_array_equal(a.numpy(), want * 2.0)


def _rank0(a):
    key = [slice(None)] * a.ndim
    if a.split is not None:
        key[a.split] = slice(0, a.lshape[a.split])
    return key


@pytest.mark.parametrize("split", [None, 0, 1])
def test_writes_into_the_local_tensor_change_the_array(comm_of, split):
    comm = comm_of(3)
    a = ht.zeros((5, 4), split=split, comm=comm)
    a.lloc[0, 1] = 7.0
    a.larray[1:2, 0] = 3.0
    want = np.zeros((5, 4), dtype=np.float32)
    want[0, 1], want[1, 0] = 7.0, 3.0
    np.testing.assert_array_equal(a.numpy(), want)
    assert (
        a.sum().item() == 10.0
        and a.lshape_map.tolist() == ht.zeros((5, 4), split=split, comm=comm).lshape_map.tolist()
    )
    local = a.larray
    local.copy_(torch.ones_like(local))  # reset through the tensor, then an in-place method
    a.sub_(1.0)
    assert a.larray is local and float(local.abs().sum()) == 0.0


def test_copies_do_not_share_the_local_tensor(comm_of):
    a = ht.arange(6, split=0, comm=comm_of(2))
    b = a.copy()
    a.larray.fill_(9)
    assert a.tolist() == [9, 9, 9, 3, 4, 5] and b.tolist() == [0, 1, 2, 3, 4, 5]


def test_larray_setter(comm_of):
    comm = comm_of(3)
    x = ht.arange(6 * 7 * 8, comm=comm).reshape((6, 7, 8))  # split None: the whole array
    t = torch.randn(6, 7, 8)
    x.larray = t
    assert x.dtype is ht.float32 and x.larray is t  # int32 and float32 promote to float32
    np.testing.assert_array_equal(x.numpy(), t.numpy())
    y = ht.arange(6 * 7 * 8, dtype=ht.float32, split=0, comm=comm).reshape((6, 7, 8))
    y.larray = torch.zeros(4, 7, 8)  # rank 0 holds 4 rows now; the global shape follows
    assert y.shape == (8, 7, 8) and y.lshape_map[:, 0].tolist() == [4, 2, 2]
    assert y.larray.shape == (4, 7, 8) and y.split == 0
    want = np.concatenate([np.zeros((4, 7, 8)), np.arange(2 * 56, 6 * 56).reshape(4, 7, 8)])
    np.testing.assert_array_equal(y.numpy(), want)


def test_tolist_keepsplit_is_the_local_chunk(comm_of):
    a = ht.arange(27, comm=comm_of(3)).reshape((3, 3, 3), new_split=1)
    assert (
        a.tolist(keepsplit=True)
        == a.larray.tolist()
        == np.arange(27).reshape(3, 3, 3)[:, :1].tolist()
    )
    assert a.tolist() == np.arange(27).reshape(3, 3, 3).tolist()
