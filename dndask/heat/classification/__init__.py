"""Heat's ``ht.classification`` (a package, as Heat's: ``from heat.classification.
kneighborsclassifier import KNeighborsClassifier`` works through the shim)."""

from dndask.heat.classification import kneighborsclassifier
from dndask.heat.classification.kneighborsclassifier import KNeighborsClassifier

__all__ = ["KNeighborsClassifier", "kneighborsclassifier"]
