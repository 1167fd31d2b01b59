"""Paths, save modes, and the file operations a save or load runs on a worker.

A save writes under a temporary name next to the target (:func:`temp_name`);
:func:`commit` moves it to the target at the end and :func:`remove` clears it
after a failure. :func:`check_target`, :func:`check_exists` and :func:`stamp`
look at the files; they all run on rank 0's worker (see ``_tasks.on_rank0``),
so the files only need to be visible to the workers, not to the driver.
"""

from __future__ import annotations

import errno
import os
import shutil
import uuid

MODES = ("w-", "w")
# What a save writes: one file, or a zarr store (a folder).
KINDS = ("file", "zarr")
# Files whose presence makes a folder a zarr store (v2 array, v2 group, v3 node).
_ZARR_MARKERS = (".zarray", ".zgroup", "zarr.json")


def as_path(path: object) -> str:
    """``path`` as an absolute string, resolved against the driver's working folder."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"`path` must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"`path` must be a text path, got {type(path).__name__}")
    return os.path.abspath(path)


def check_mode(mode: object) -> None:
    if mode not in MODES:
        raise ValueError(
            f"`mode` must be 'w-' (refuse an existing file) or 'w' (overwrite), got {mode!r}"
        )


def stamp(path: str) -> tuple[int, int, int]:
    """Identity of a file's current version: a rewritten file gets new graph keys."""
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns


def check_unchanged(path: str, loaded: tuple[int, int, int], block_shape=None, lshape=None) -> None:
    """Refuse to read a rank's block from a file that changed since it was loaded.

    ``loaded`` is :func:`stamp` at load time: a save that replaced the file
    (or a program that rewrote it) changes it. A block of the wrong shape
    (a dataset resized in place) is refused too; the array's shape would lie.
    """
    hint = "loads are lazy (each rank reads when the array is computed): load it again"
    if not os.path.lexists(path):
        raise FileNotFoundError(f"`path` {path!r} was removed since it was loaded; {hint}")
    now = stamp(path)
    if now != tuple(loaded):
        raise RuntimeError(f"`path` {path!r} changed since the array was loaded from it; {hint}")
    if block_shape is not None and tuple(block_shape) != tuple(lshape):
        raise RuntimeError(
            f"`path` {path!r} changed since the array was loaded from it: a block read back "
            f"with shape {tuple(block_shape)}, expected {tuple(lshape)}; {hint}"
        )


def check_exists(path: str) -> None:
    if not os.path.exists(path):
        raise FileNotFoundError(f"`path` {path!r} does not exist")


def is_zarr_store(path: str) -> bool:
    """Whether ``path`` is a folder holding zarr metadata at its top."""
    return os.path.isdir(path) and any(os.path.isfile(os.path.join(path, m)) for m in _ZARR_MARKERS)


def check_replaceable(target: str, kind: str) -> None:
    """Refuse to replace what a save of ``kind`` must never destroy.

    A file save replaces only a file (a folder there raises
    IsADirectoryError); a zarr save replaces only a zarr store (anything
    else raises FileExistsError). Nothing is checked where ``target`` is absent.
    """
    if not os.path.lexists(target):
        return
    if kind == "file" and os.path.isdir(target):
        raise IsADirectoryError(
            f"`path` {target!r} is a folder; a save replaces only a file, never a folder"
        )
    if kind == "zarr" and not is_zarr_store(target):
        what = "a folder that is not a zarr store" if os.path.isdir(target) else "not a folder"
        raise FileExistsError(
            f"`path` {target!r} exists and is {what}; mode='w' replaces only a zarr store"
        )


def _check_writable(target: str, folder: str) -> None:
    """Create and remove a probe file next to ``target``: PermissionError naming it if refused.

    A probe rather than ``os.access``: it also sees read-only file systems and
    is not fooled by a root user's permission bypass.
    """
    probe = f"{temp_name(target)}-probe"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        reason = exc.strerror
    else:
        os.close(fd)
        os.remove(probe)
        return
    raise PermissionError(
        f"`path` {target!r} cannot be written: the folder {folder!r} refuses new files ({reason})"
    )


def check_target(target: str, mode: str, kind: str = "file") -> None:
    """Refuse a save before any work.

    A missing or read-only folder, an existing target under 'w-', and under
    'w' a target the save must not replace (see :func:`check_replaceable`).
    """
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"`path` {target!r}: the folder {folder!r} does not exist")
    if mode == "w-" and os.path.lexists(target):
        raise FileExistsError(f"`path` {target!r} exists; pass mode='w' to overwrite it")
    check_replaceable(target, kind)
    _check_writable(target, folder)


def temp_name(target: str) -> str:
    folder, base = os.path.split(target)
    return os.path.join(folder, f".{base}.dndask-tmp-{uuid.uuid4().hex[:12]}")


def remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def commit(tmp: str, target: str, mode: str, kind: str = "file") -> None:
    """Move the finished temporary file or folder to the target name.

    Checks again what is at the target now (it may have changed while the
    ranks wrote): a folder never replaces or is replaced unless both are zarr stores.
    """
    if not os.path.lexists(target):
        os.rename(tmp, target)
        return
    if mode == "w-":
        raise FileExistsError(f"`path` {target!r} appeared while saving; nothing was written")
    check_replaceable(target, kind)
    if kind == "file":
        os.replace(tmp, target)  # atomic; the target is a file or a link
        return
    old = f"{tmp}-old"
    os.rename(target, old)
    try:
        os.rename(tmp, target)
    except BaseException:
        os.rename(old, target)
        raise
    remove(old)
