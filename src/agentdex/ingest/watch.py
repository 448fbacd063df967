"""Change notices for the resident's no-change check: most noted paths need no ``stat``.

:class:`agentdex.ingest.manifest.KeptCheck` answers every search of a resident.
It used to ``stat`` each noted path (10,704 at 1 GB: 45-90 ms of system calls on
this machine, longer than a rare word's search, which then waited for it: the
rare class's growth 250 MB -> 1 GB). Linux tells a process that asks (inotify)
when anything in a watched directory changes, synchronously with the change's
system call: a write that returned before a search began is already queued when
the search's check reads the queue. So the check watches the folders that hold
the noted paths, and between two full passes only reads that queue and ``stat``\\ s
what a notice cannot vouch for:

* every watched folder, by its path: the same device and inode as when it was
  watched (a folder, or one above it, renamed, replaced or re-pointed by a link is
  another inode there: the path would now name other files);
* a noted path that is missing, a link, a file with more than one name (written
  through another folder, no notice comes here), or in a folder not watched.

Anything queued sends the check back to its full pass (which is what a queued
notice usually means: an agent appended to its transcript). Folders are watched only
on local file systems (:data:`LOCAL`): a network or FUSE file system changed by
another machine sends no notice. Anywhere else (no inotify, another OS, the watch
limit reached) :func:`watch` returns None and every check is a full pass, as before.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

#: file systems whose every change passes this kernel (a notice comes for each)
LOCAL = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs"})

# inotify(7)
_MODIFY, _ATTRIB = 0x2, 0x4
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF = 0x400, 0x800
_ONLYDIR = 0x01000000
_NONBLOCK, _CLOEXEC = 0o4000, 0o2000000
#: everything that can change a noted path's ``stat`` (the folder's own mtime too)
MASK = (
    _MODIFY
    | _ATTRIB
    | _MOVED_FROM
    | _MOVED_TO
    | _CREATE
    | _DELETE
    | _DELETE_SELF
    | _MOVE_SELF
    | _ONLYDIR
)


class Watch:
    """Folders watched for changes; what a notice cannot vouch for is ``stat``\\ ed.

    Made by :func:`watch` *before* a full pass over the noted paths: a change after
    that pass began is queued here. :meth:`quiet` is then True only while nothing
    was queued since the last call and every path in :attr:`unwatched` and every
    watched folder still ``stat``\\ s as it did."""

    __slots__ = ("fd", "folders", "unwatched")

    def __init__(
        self,
        fd: int,
        folders: list[tuple[str, int, int]],
        unwatched: list[tuple[str, int, int, int]],
    ) -> None:
        self.fd = fd
        #: (path, st_dev, st_ino) of each watched folder
        self.folders = folders
        #: the noted states (as given to :func:`watch`) of the paths stat-ed at every check
        self.unwatched = unwatched

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        self.close()

    def drained(self) -> bool:
        """Read the queue empty: True when nothing had been queued."""
        empty = True
        while True:
            try:
                if not os.read(self.fd, 1 << 16):
                    return empty
            except BlockingIOError:
                return empty
            except OSError:
                return False
            empty = False

    def folders_in_place(self) -> bool:
        """Does every watched folder's path still name the folder watched?"""
        stat = os.stat
        for path, dev, ino in self.folders:
            try:
                st = stat(path)
            except OSError:
                return False
            if st.st_ino != ino or st.st_dev != dev:
                return False
        return True


def _libc() -> Any:
    from agentdex.index.memory import libc

    lib = libc()
    if lib is None or not hasattr(lib, "inotify_init1"):
        return None
    return lib


def _mounts() -> list[tuple[str, str]]:
    """(mount point, file system type) of this process's mounts, longest point first."""
    try:
        with open("/proc/self/mountinfo", "rb") as handle:
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        head, sep, tail = line.partition(" - ")
        fields = head.split(" ")
        if not sep or len(fields) < 5 or not tail:
            continue
        point = _unescape(fields[4])
        found.append((point, tail.split(" ", 1)[0]))
    found.sort(key=lambda item: len(item[0]), reverse=True)
    return found


def _unescape(text: str) -> str:
    """A mountinfo field: spaces, tabs, newlines and backslashes are written as octal."""
    if "\\" not in text:
        return text
    import re

    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _fs_type(real: str, mounts: list[tuple[str, str]]) -> str | None:
    for point, kind in mounts:
        if real == point or real.startswith(point.rstrip("/") + "/") or point == "/":
            return kind
    return None


def watch(states: Iterable[tuple[str, int, int, int]], missing: int, file: int) -> Watch | None:
    """A :class:`Watch` over the folders of ``states`` (``(path, kind, size, mtime)``, the
    kinds ``missing`` and ``file`` as named; a noted folder is watched itself), or None
    when no folder can be watched here (the check then stats every path)."""
    if not sys.platform.startswith("linux"):
        return None
    lib = _libc()
    if lib is None:
        return None
    fd = lib.inotify_init1(_NONBLOCK | _CLOEXEC)
    if fd < 0:
        return None
    mounts = _mounts()
    folders: dict[str, tuple[int, int] | None] = {}  # path -> (dev, ino), None: unwatchable
    unwatched: list[tuple[str, int, int, int]] = []
    try:
        for state in states:
            path, kind = state[0], state[1]
            if kind == missing:
                unwatched.append(state)
                continue
            folder = os.path.dirname(path) if kind == file else path
            if folder not in folders:
                folders[folder] = _add(lib, fd, folder, mounts)
            if folders[folder] is None or (kind == file and not _plain_file(path)):
                unwatched.append(state)
    except BaseException:
        os.close(fd)
        raise
    kept = [(path, ident[0], ident[1]) for path, ident in folders.items() if ident is not None]
    if not kept:
        os.close(fd)
        return None
    return Watch(fd, kept, unwatched)


def _add(lib: Any, fd: int, folder: str, mounts: list[tuple[str, str]]) -> tuple[int, int] | None:
    """Watch ``folder``: its (device, inode), or None when it cannot be (not there, not a
    local file system, the watch limit, or it was replaced while being watched)."""
    try:
        before = os.stat(folder)
        if _fs_type(os.path.realpath(folder), mounts) not in LOCAL:
            return None
    except OSError:
        return None
    if lib.inotify_add_watch(fd, os.fsencode(folder), MASK) < 0:
        return None
    try:
        after = os.stat(folder)
    except OSError:
        return None
    if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
        return None
    return after.st_dev, after.st_ino


def _plain_file(path: str) -> bool:
    """Is ``path`` itself a file of one name (a change to it is noticed in its folder)?"""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    from stat import S_ISREG

    return S_ISREG(st.st_mode) and st.st_nlink == 1
