"""Heat's ``ht.utils.data.spherical`` over :mod:`dndask.utils.data.spherical`.

Heat's ``create_spherical_dataset`` draws ``num_samples_cluster // size`` points per
ball (``size`` the number of ranks): so does the face. ``create_clusters`` takes
Heat's torch tensors and makes float32 data, cluster by cluster (Heat shuffles each
rank's rows; the face keeps the order, so the data is the same for any rank count).
"""

from __future__ import annotations

import numbers

import numpy as np

from dndask import _comm
from dndask.heat import _adapt
from dndask.utils.data import spherical as _core

__all__ = ["create_clusters", "create_spherical_dataset"]


def create_spherical_dataset(
    num_samples_cluster, radius=1.0, offset=4.0, dtype=np.float32, random_state=1
):
    """Heat's four balls (see :func:`dndask.utils.data.spherical.create_spherical_dataset`)."""
    per_ball = max(1, num_samples_cluster // _comm.get_comm().size)
    return _adapt.face(
        _core.create_spherical_dataset(per_ball, radius, offset, np.dtype(dtype), random_state)
    )


def _tensor(value, name: str):
    if not hasattr(value, "shape") or isinstance(value, (str, numbers.Number)):
        raise TypeError(f"`{name}` must be a torch.Tensor, got {type(value).__name__}")
    return np.asarray(value.detach().cpu().numpy() if hasattr(value, "detach") else value)


def create_clusters(
    n_samples, n_features, n_clusters, cluster_mean, cluster_std, cluster_weight=None, device=None
):
    """Heat's Gaussian clusters (see :func:`dndask.utils.data.spherical.create_clusters`)."""
    _adapt.check_device(device)
    mean = _tensor(cluster_mean, "cluster_mean")
    std = _tensor(cluster_std, "cluster_std")
    weight = None if cluster_weight is None else _tensor(cluster_weight, "cluster_weight")
    return _adapt.face(_core.create_clusters(n_samples, n_features, n_clusters, mean, std, weight))
