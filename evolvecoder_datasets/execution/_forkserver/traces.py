"""Traces a program leaves on disk and in System V IPC, and their removal: never following a link.

``remove_traces`` (after every job, in the server; before every isolated test, in the solution process), the
link-safe folder remover ``_rmtree``, the snapshot of what a program wrote while it loaded (put back before each
test) and :class:`_Traces`, which runs all of it between the tests of a solution process.
"""

from __future__ import annotations

import os

from . import libc
from .pristine import _BaseException, _close, _len, _read, _write, pin_builtins

pin_builtins(globals())

_IPC_TABLES = (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl"))
_TRACE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


def remove_traces(uid: int, folders=_TRACE_DIRS, keep: str | None = None, *, ipc: bool = True) -> int:
    """Remove what a job's uid left behind: System V IPC objects and entries in the shared scratch folders.

    Runs in the server after every job, so the next program (another model's, another problem's) starts from
    nothing the last one made, and in the solution process before every test of isolated mode. Files are matched by
    owner: the uid is the sandbox's own, so this never touches a file of anyone else, even where ``/tmp`` is the
    host's (isolation ``none``); ``keep`` is spared. Returns how many were removed.
    """
    removed = 0
    for table, call in _IPC_TABLES if ipc else ():
        try:
            with open(f"/proc/sysvipc/{table}", "rb") as fh:
                header, *rows = fh.read().split(b"\n")
        except OSError:
            continue
        cols = header.split()
        try:
            id_col = cols.index(b"shmid" if table == "shm" else b"msqid" if table == "msg" else b"semid")
            uid_cols = [cols.index(b"uid"), cols.index(b"cuid")]
        except ValueError:
            continue
        fn = getattr(libc._LIBC, call, None) if libc._LIBC is not None else None
        for row in rows:
            fields = row.split()
            if _len(fields) <= max(id_col, *uid_cols) or not any(int(fields[c]) == uid for c in uid_cols):
                continue
            if fn is not None:  # IPC_RMID is 0: semctl(id, 0, IPC_RMID), shmctl/msgctl(id, IPC_RMID, NULL)
                ident = int(fields[id_col])
                removed += (fn(ident, 0, 0) if table == "sem" else fn(ident, 0, None)) == 0
    # Only C-level calls below: in a solution process the program may have rebound builtins (isinstance, str ...)
    # that os.path and shutil would call.
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.path == keep:
                continue
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                _rmtree(entry.path)
                removed += 1
            except OSError:
                continue
    return removed


_SNAPSHOT_ENTRIES, _SNAPSHOT_BYTES = 1024, 16 << 20


def _snapshot_folders(folders, uid: int, keep: str) -> dict:
    """What ``uid`` owns in each of ``folders`` (recursively; ``keep`` excluded), as ``{folder: [(relative path,
    kind, mode, data)]}`` for the folders that hold anything: the files a program wrote while it loaded.

    Bounded (1,024 entries, 16 MiB of file data): past that the rest is not put back, and a test sees the folder
    as the last test left it, less what it added at the top.
    """
    found: dict = {}
    total = 0
    for folder in folders:
        entries: list = []
        todo = [("", folder)]
        while todo and _len(entries) < _SNAPSHOT_ENTRIES:
            rel, path = todo.pop()
            try:
                listing = list(os.scandir(path))
            except OSError:
                continue
            for entry in listing:
                if entry.path == keep or _len(entries) >= _SNAPSHOT_ENTRIES:
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                    if st.st_uid != uid:
                        continue
                    name = rel + "/" + entry.name if rel else entry.name
                    if entry.is_symlink():
                        entries.append((name, "l", 0, os.readlink(entry.path)))
                    elif entry.is_dir(follow_symlinks=False):
                        entries.append((name, "d", st.st_mode & 0o7777, None))
                        todo.append((name, entry.path))
                    elif entry.is_file(follow_symlinks=False) and total + st.st_size <= _SNAPSHOT_BYTES:
                        fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
                        try:
                            data = _read(fd, st.st_size + 1)
                        finally:
                            _close(fd)
                        total += _len(data)
                        entries.append((name, "f", st.st_mode & 0o7777, data))
                except OSError:
                    continue
        if entries:
            found[folder] = sorted(entries, key=lambda e: e[0].count("/"))  # folders before what they hold
    return found


def _restore_folder(folder: str, entries: list) -> None:
    """Put back what :func:`_snapshot_folders` recorded in ``folder`` (emptied of the uid's entries just before)."""
    for name, kind, mode, data in entries:
        path = folder + "/" + name
        try:
            if kind == "d":
                os.mkdir(path, mode)
            elif kind == "l":
                os.symlink(data, path)
            else:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
                try:
                    view = memoryview(data)
                    while view:
                        view = view[_write(fd, view):]
                finally:
                    _close(fd)
        except OSError:
            continue


def _writable_by(folder: str, uid) -> bool:
    """Whether ``uid`` (its own group, no others: the solution child drops supplementary groups) can add entries to
    ``folder``, from its owner and mode; True where no uid is dropped to or the folder cannot be read."""
    if uid is None:
        return True
    try:
        st = os.stat(folder)
    except OSError:
        return True
    mode = st.st_mode
    return bool(mode & 0o002 or (st.st_uid == uid and mode & 0o200) or (st.st_gid == uid and mode & 0o020))


def _mtimes(folders) -> tuple:
    """Change time, size and link count of each of ``folders`` (what moves when an entry is added or removed): a
    folder whose figures did not move since the last look has nothing new to clean.

    The inode change time, not the modification time: a program that owns a folder can set its modification time
    back (``os.utime``) to hide a file it left for the next test, but no program sets a change time. The size and
    link count because a change time may be stamped at the scheduler's tick (tmpfs gave 21 distinct times for 40
    quick changes here): a folder on tmpfs grows by 20 bytes per entry, and one gains a link per subfolder.
    """
    out = []
    for folder in folders:
        try:
            st = os.stat(folder)
            out.append((st.st_ctime_ns, st.st_size, st.st_nlink))
        except OSError:
            out.append(None)
    return tuple(out)


def _rmtree(path: str) -> bool:
    """Remove folder ``path`` and everything under it, never following a symbolic link, whatever its depth. Returns
    whether ``path`` is gone.

    ``shutil.rmtree`` without ``shutil``: every module this server imports is in the image each test's fork copies.
    Folders are opened with ``O_NOFOLLOW`` and emptied through their fds, so a link planted anywhere in the tree
    (the folder itself included) is removed as a link, not followed. A folder nested deeper than
    ``_RM_DEPTH`` below the top is moved up to the top (a ``renameat``, which follows no link either) and emptied
    on a later pass, so no nesting a program builds holds more than ``_RM_DEPTH`` fds open or outlasts the remover;
    each pass removes at least the folders it moved, and the passes are bounded by the entries there are.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        try:
            os.unlink(path)  # a link or a file where the folder was: the entry only
        except OSError:
            pass
        return not os.path.lexists(path)
    try:
        moved = [0]
        for _ in range(1 << 16):
            if not _empty_folder(fd, fd, moved):
                break
    finally:
        _close(fd)
    try:
        os.rmdir(path)
    except OSError:
        pass
    return not os.path.lexists(path)


_RM_DEPTH = 32


def _empty_folder(fd: int, top: int, moved: list, depth: int = 0) -> bool:
    """Remove what folder ``fd`` holds; folders ``_RM_DEPTH`` levels down are moved up into ``top`` instead of
    entered. Returns whether anything was left for another pass (a moved folder)."""
    try:
        names = [(e.name, e.is_dir(follow_symlinks=False)) for e in os.scandir(fd)]
    except OSError:
        return False
    again = False
    for name, is_dir in names:
        try:
            if not is_dir:
                os.unlink(name, dir_fd=fd)
                continue
            if depth >= _RM_DEPTH:
                moved[0] += 1
                os.rename(name, f".ecd-deep-{moved[0]}", src_dir_fd=fd, dst_dir_fd=top)
                again = True
                continue
            try:
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except PermissionError:  # a folder its owner made unreadable: the server may open it up again
                os.chmod(name, 0o700, dir_fd=fd)
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            try:
                again = _empty_folder(inner, top, moved, depth + 1) or again
            finally:
                _close(inner)
            os.rmdir(name, dir_fd=fd)
        except OSError:
            continue
    return again


class _Traces:
    """What a test may leave for the next one on disk, and its removal before each test (run by S, as the job's uid,
    so a link a program planted leads nowhere it could not go itself).

    Whatever the previous test left in the work folder (every test's cwd, HOME and TMPDIR), ``/tmp``, ``/var/tmp``
    or ``/dev/shm`` is removed, looked for only where a folder's change time moved (a ``stat`` each, and only in the
    folders this uid can write: under bubblewrap the work folder alone). Files the program wrote while it loaded are
    part of the state every test starts from: where there are any, their folder is put back as it was before each
    test (a test may change a file inside a folder it did not add to, which no change time of the top folder shows).
    """

    __slots__ = ("uid", "base", "folders", "seen", "loaded", "first")

    def __init__(self, job_uid: int | None) -> None:
        """``job_uid``: the job's uid (cleared only where this process runs as that uid, never as root)."""
        uid = job_uid if os.getuid() != 0 and os.getuid() == job_uid else None
        self.uid, self.base, self.first = uid, os.getcwd(), True
        self.folders = tuple(f for f in (*_TRACE_DIRS, self.base) if os.access(f, os.W_OK | os.X_OK)) \
            if uid is not None else ()  # fmt: skip
        self.seen = _mtimes(self.folders)
        self.loaded = _snapshot_folders(self.folders, uid, keep=self.base) if uid is not None else {}

    def clear(self) -> None:
        """Remove what the last test left (nothing to do before the first)."""
        first, self.first = self.first, False
        if self.uid is None:
            return
        try:
            now = _mtimes(self.folders)
            changed = () if now == self.seen and not self.loaded else tuple(
                f for f, a, b in zip(self.folders, self.seen, now) if a != b or (f in self.loaded and not first))
            if changed:
                remove_traces(self.uid, changed, keep=self.base, ipc=False)
                for folder in changed:
                    if folder in self.loaded:
                        _restore_folder(folder, self.loaded[folder])
                now = _mtimes(self.folders)
            self.seen = now
        except _BaseException:  # noqa: BLE001 - defence in depth only: never stop the tests over it
            pass
