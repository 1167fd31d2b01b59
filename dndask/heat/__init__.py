"""Heat code, unchanged: ``import dndask.heat as ht``.

A face of adapters over the same DNDarray and graph code as :mod:`dndask`. Where
Heat 1.8 and numpy differ, it gives Heat's semantics:

- :func:`equal` returns one bool (``torch.equal``), ``eq`` is elementwise;
- the types (``ht.float32``, ``ht.int``, ...) are classes that build arrays when
  called, compare equal to numpy dtypes and form Heat's hierarchy (:mod:`.types`);
- dtypes promote as torch's (``int32 + float32 -> float32``, ``exp(int32) -> float32``);
- ``ht.random`` takes Heat's state tuples;
- arrays are :class:`DNDarray` (a subclass of the core's) with Heat's in-place
  methods (``add_``, ``pow_``, ...), aliases, and ``dtype`` a Heat type;
- ``device=`` ("cpu", "gpu", a Device) is forwarded to the core's factories (``ht.use_device``
  sets the default), and scalars are accepted where Heat takes them (``zeros_like(3)``);
- every operation that returns a DNDarray starts computing it at the call, without
  waiting, as Heat computes at the call (:mod:`._eager`): :func:`lazy` gives the core's
  laziness inside the face, :func:`blocking` makes every call wait (a task's error at
  the call, a timer around a call measures the work), :func:`wait` waits for arrays.

The namespace is declared in layers (:mod:`._namespace`): the base (:mod:`._base`: the
core's names, results as face arrays, and the elementwise functions of the operation
table), then the override table, one module per Heat submodule (:mod:`.factories`,
:mod:`.manipulations`, :mod:`.relational`, ...), each defining the names whose Heat
semantics differ. A name two layers define is an error at import. ``ht.core`` and
``ht.core.<submodule>`` are those modules.

>>> import dndask.heat as ht
>>> x = ht.int32([1, 2, 3])
>>> y = ht.exp(x)
>>> y.dtype is ht.float32, ht.equal(x, x)
(True, True)
"""

from __future__ import annotations

import types as _pytypes

import dndask as _core

from .. import base as _estimators
from . import (  # noqa: F401  (the submodules are the face's: ht.core, ht.random, ht.cluster, ...)
    _base,
    _eager,
    _extras,
    _namespace,
    arithmetics,
    classification,
    cluster,
    complex_math,
    constants,
    core,
    decomposition,
    exponential,
    factories,
    fft,
    graph,
    indexing,
    io,
    linalg,
    logical,
    manipulations,
    naive_bayes,
    preprocessing,
    printing,
    random,
    regression,
    relational,
    rounding,
    signal,
    spatial,
    statistics,
    stride_tricks,
    trigonometrics,
    types,
    utils,
)
from ._array import DNDarray, install_methods

# Heat's top-level names that live in its linalg (ht.matmul is ht.linalg.matmul)
_LINALG_TOP = (
    "cross",
    "dot",
    "lanczos",
    "matmul",
    "matrix_norm",
    "norm",
    "outer",
    "polar",
    "projection",
    "transpose",
    "vector_norm",
)

# the override table: each layer's names replace the base's; no name is in two layers
_LAYERS = (
    _namespace.layer(types),
    _namespace.layer(constants),
    _namespace.layer(factories),
    _namespace.layer(manipulations),
    _namespace.layer(arithmetics),
    _namespace.layer(relational),
    _namespace.layer(logical),
    _namespace.layer(rounding),
    _namespace.layer(statistics),
    _namespace.layer(indexing),
    _namespace.layer(signal),
    _namespace.layer(printing),
    _namespace.layer(stride_tricks),
    _namespace.layer(linalg, _LINALG_TOP),
    _namespace.layer(io),  # supports_hdf5, ... (Heat's top-level names)
    # Heat's ht.BaseEstimator, ht.is_estimator, ...: the core's estimator protocol
    _namespace.layer(
        _estimators,
        (
            "BaseEstimator",
            "ClassificationMixin",
            "ClusteringMixin",
            "RegressionMixin",
            "TransformMixin",
            "is_classifier",
            "is_clusterer",
            "is_estimator",
            "is_regressor",
            "is_transformer",
        ),
    ),
    _namespace.layer(_eager, ("blocking", "evaluation_mode", "lazy", "wait")),
    ("dndask.heat.DNDarray", {"DNDarray": DNDarray}),
)
_NAMESPACE, _OWNER = _namespace.assemble(_base.BASE, _LAYERS)
_namespace.NAMESPACE.update(_NAMESPACE)
_namespace.OWNER.update(_OWNER)

# the face's submodules (ht.factories, ht.core, ht.linalg, and any imported above)
_SUBMODULES = frozenset(
    name
    for name, value in globals().items()
    if isinstance(value, _pytypes.ModuleType)
    and value.__name__ == f"{__name__}.{name}"
    and not name.startswith("_")
)
_CLASHES = _SUBMODULES & _NAMESPACE.keys()
if _CLASHES:
    raise ImportError(f"the Heat face's names {sorted(_CLASHES)} are also submodules")

__all__ = sorted({*_NAMESPACE, *_SUBMODULES, *_base.LAZY})

globals().update(_NAMESPACE)
install_methods(_NAMESPACE, _base.ROWS)
DNDarray.copysign_ = _extras.floats_only(DNDarray.copysign_, "copysign_")  # Heat's own check


def __getattr__(name: str) -> object:
    """``ht.LshapeMap`` (the core's torch tensor class), made on first access; ``ht.comm``,
    Heat's ``COMM_WORLD`` for object collectives (:class:`._extras.ObjectComm` over the
    default comm, which starts the cluster on first use)."""
    if name in _base.LAZY:
        return getattr(_core, name)
    if name == "comm":
        return _extras.ObjectComm(_core.get_comm())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
