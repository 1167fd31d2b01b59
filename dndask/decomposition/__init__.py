"""Decompositions of DNDarrays, with scikit-learn's estimator conventions.

What lives where:

- :mod:`._pca`: :class:`PCA` and :class:`IncrementalPCA` (samples in rows).
- :mod:`._dmd`: :class:`DMD` and :class:`DMDc`, the dynamic mode decomposition without
  and with control (snapshots in columns, Heat's convention for them).

DMD and DMDc's parameter protocol (``get_params``/``set_params``) is
:class:`dndask._estimator.BaseEstimator`, the class :mod:`dndask.base` exports to the
algorithm layer.

Fitted attributes end in ``_`` and are DNDarrays (counts such as ``n_components_`` and
``n_modes_`` are ints).
"""

from __future__ import annotations

from ._dmd import DMD, DMDc
from ._pca import PCA, IncrementalPCA

__all__ = ["DMD", "DMDc", "IncrementalPCA", "PCA"]
