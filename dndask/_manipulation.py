"""Shape manipulation of DNDarrays: each result keeps the one-chunk-per-rank invariant."""

from __future__ import annotations


def reshape(a, *shape, new_split=None):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`reshape` is not implemented yet")


def transpose(a, axes=None):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`transpose` is not implemented yet")


def swapaxes(a, axis1, axis2):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`swapaxes` is not implemented yet")


def moveaxis(a, source, destination):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`moveaxis` is not implemented yet")


def expand_dims(a, axis):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`expand_dims` is not implemented yet")


def squeeze(a, axis=None):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`squeeze` is not implemented yet")


def concatenate(arrays, axis=0):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`concatenate` is not implemented yet")


def stack(arrays, axis=0):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`stack` is not implemented yet")


def vstack(arrays):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`vstack` is not implemented yet")


def hstack(arrays):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`hstack` is not implemented yet")


def flip(a, axis=None):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`flip` is not implemented yet")


def roll(a, shift, axis=None):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`roll` is not implemented yet")


def pad(a, pad_width, mode="constant", constant_values=0):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`pad` is not implemented yet")


def repeat(a, repeats, axis=None):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`repeat` is not implemented yet")


def tile(a, reps):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`tile` is not implemented yet")


def flatten(a):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`flatten` is not implemented yet")


def ravel(a):
    """SKELETON: to be implemented."""
    raise NotImplementedError("`ravel` is not implemented yet")
