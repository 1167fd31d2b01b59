"""Paths, save modes, and the file operations a save or load runs on a worker.

A save writes under a temporary name next to the target (:func:`temp_name`);
:func:`commit` moves it to the target at the end and :func:`remove` clears it
after a failure. :func:`check_target`, :func:`check_exists` and :func:`stamp`
look at the files; they all run on rank 0's worker (see ``_tasks.on_rank0``),
so the files only need to be visible to the workers, not to the driver.
"""

from __future__ import annotations

import os
import shutil
import uuid

MODES = ("w-", "w")


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


def check_exists(path: str) -> None:
    if not os.path.exists(path):
        raise FileNotFoundError(f"`path` {path!r} does not exist")


def check_target(target: str, mode: str) -> None:
    """Refuse a save before any work: a missing folder, or an existing target under 'w-'."""
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"`path` {target!r}: the folder {folder!r} does not exist")
    if mode == "w-" and os.path.lexists(target):
        raise FileExistsError(f"`path` {target!r} exists; pass mode='w' to overwrite it")


def temp_name(target: str) -> str:
    folder, base = os.path.split(target)
    return os.path.join(folder, f".{base}.dndask-tmp-{uuid.uuid4().hex[:12]}")


def remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def commit(tmp: str, target: str, mode: str) -> None:
    """Move the finished temporary file or folder to the target name."""
    if not os.path.lexists(target):
        os.rename(tmp, target)
        return
    if mode == "w-":
        raise FileExistsError(f"`path` {target!r} appeared while saving; nothing was written")
    if os.path.isfile(target) and os.path.isfile(tmp):
        os.replace(tmp, target)  # atomic
        return
    old = f"{tmp}-old"
    os.rename(target, old)
    try:
        os.rename(tmp, target)
    except BaseException:
        os.rename(old, target)
        raise
    remove(old)
