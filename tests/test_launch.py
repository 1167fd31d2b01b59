"""Pure launch rules: launcher detection, worker order, GPU assignment, world size."""

from __future__ import annotations

import pytest

from dndask import _launch


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"OMPI_COMM_WORLD_SIZE": "6", "OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_LOCAL_RANK": "1"},
         ("openmpi", 6, 5, 1)),
        ({"PMI_SIZE": "4", "PMI_RANK": "0", "MPI_LOCALRANKID": "0"}, ("mpich", 4, 0, 0)),
        ({"PMI_SIZE": "4", "PMI_RANK": "3"}, ("mpich", 4, 3, None)),
        ({"PMIX_SIZE": "3", "PMIX_RANK": "2", "PMIX_LOCAL_RANK": "0"}, ("pmix", 3, 2, 0)),
        ({"SLURM_NTASKS": "8", "SLURM_PROCID": "7", "SLURM_LOCALID": "3"}, ("slurm", 8, 7, 3)),
        # Open MPI wins over the Slurm variables it runs inside
        ({"SLURM_NTASKS": "8", "SLURM_PROCID": "0", "OMPI_COMM_WORLD_SIZE": "2",
          "OMPI_COMM_WORLD_RANK": "1"}, ("openmpi", 2, 1, None)),
    ],
)  # fmt: skip
def test_detect_launch(environ, expected):
    assert tuple(_launch.detect_launch(environ)) == expected


def test_no_launch_detected():
    assert _launch.detect_launch({}) is None
    assert _launch.detect_launch({"SLURM_NTASKS": "1", "SLURM_PROCID": "0"}) is None  # a job step
    assert _launch.detect_launch({"PMI_SIZE": "4"}) is None  # no rank: not a launched process


def test_detect_launch_rejects_garbage():
    with pytest.raises(ValueError, match="`PMI_SIZE` must be an int, got 'x'"):
        _launch.detect_launch({"PMI_SIZE": "x", "PMI_RANK": "0"})
    with pytest.raises(ValueError, match=r"`PMI_RANK` must be in \[0, 3\], got 4"):
        _launch.detect_launch({"PMI_SIZE": "4", "PMI_RANK": "4"})


def test_worker_order_is_numeric():
    names = ["dask_mpi-10", "dask_mpi-2", "dask_mpi-9", 3, "7", "alpha"]
    ordered = sorted(names, key=lambda n: _launch.worker_order_key(n, "addr"))
    assert ordered == [3, "7", "dask_mpi-2", "dask_mpi-9", "dask_mpi-10", "alpha"]


def test_visible_gpus():
    assert _launch.visible_gpus({}, 0) == []
    assert _launch.visible_gpus({}, 3) == ["0", "1", "2"]
    assert _launch.visible_gpus({"CUDA_VISIBLE_DEVICES": "1, 3"}, 4) == ["1", "3"]
    assert _launch.visible_gpus({"CUDA_VISIBLE_DEVICES": ""}, 4) == []
    assert _launch.visible_gpus({"CUDA_VISIBLE_DEVICES": "-1"}, 4) == []


@pytest.mark.parametrize(
    ("node_ranks", "gpus", "expected"),
    [
        # one node, 4 GPUs: scheduler and client get none, workers one each
        ([0, 1, 2, 3, 4, 5], ["0", "1", "2", "3"], {2: "0", 3: "1", 4: "2", 5: "3"}),
        # a second node of the same job: all its ranks are workers
        ([6, 7, 8, 9], ["0", "1", "2", "3"], {6: "0", 7: "1", 8: "2", 9: "3"}),
        # more workers than GPUs share round-robin
        ([2, 3, 4], ["0", "1"], {2: "0", 3: "1", 4: "0"}),
        # CUDA_VISIBLE_DEVICES restricted by the batch system
        ([4, 5], ["2", "3"], {4: "2", 5: "3"}),
        # ranks listed out of order
        ([5, 1, 3], ["0", "1"], {3: "0", 5: "1"}),
        # a node holding only the scheduler and the client needs no GPU
        ([0, 1], [], {}),
    ],
)
def test_assign_gpus(node_ranks, gpus, expected):
    assert _launch.assign_gpus(node_ranks, gpus) == expected


def test_assign_gpus_without_gpus_is_a_clear_error():
    with pytest.raises(
        ValueError,
        match=r"`gpu=True` needs a GPU for every worker, but the node of MPI ranks \[2, 3\] has none",
    ):
        _launch.assign_gpus([0, 1, 2, 3], [])


@pytest.mark.parametrize("size", [1, 2])
def test_world_too_small(size):
    with pytest.raises(
        ValueError, match=f"`mpi=True` needs at least 3 MPI ranks .* got {size}; launch with"
    ):
        _launch.check_world_size(size)
    _launch.check_world_size(3)


def test_missing_interface():
    assert _launch.missing_interface("eth0", [("n0", 0, None), ("n1", 2, None)]) is None
    reports = [("n0", 0, None), ("n0", 1, None), ("n1", 2, ["lo"]), ("n2", 4, []),
               ("n1", 3, ["lo"])]  # fmt: skip
    assert _launch.missing_interface("ib0", reports) == (
        "`interface` 'ib0' has no IPv4 address on nodes n1 (MPI ranks 2, 3; it has lo); "
        "n2 (MPI rank 4; it has none)"
    )
