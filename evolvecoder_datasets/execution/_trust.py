"""Proving that the execution service is this user's: its runtime folder, the files in it, the peer of a socket.

The service is found by a path (``evolvecoder-<uid>/<digest>/service.sock`` under a shared temp folder when no
``XDG_RUNTIME_DIR`` is set), and a path proves nothing: another local user can make that folder first, or leave a
symbolic link where a lock or log file will be opened. So nothing here is believed because of its name:

* each folder level we make under a shared parent is made with mode 0700 and then checked, through a descriptor
  opened without following links, to be a real directory owned by this effective uid that group and others cannot
  write (read or search bits of such a folder of ours are removed: it ends 0700);
  the shared parent itself must be one nobody else can rename entries of (owned by us or root, and not writable by
  group or others unless sticky, as ``/tmp`` is);
* a file opened in the folder is opened without following links (created with ``O_EXCL``, or an existing one
  re-opened), and must be a regular file of ours with one link;
* the socket path must be a socket of ours, and the process that accepts (or makes) a connection must run as this
  effective uid (``SO_PEERCRED``), checked before a byte is sent.

A failed check raises :class:`~evolvecoder_datasets.errors.SandboxUntrusted` naming the path, its owner and mode
(or the uid found) and the fix. Standard library only: callers import this.

Example:
    >>> import tempfile
    >>> from evolvecoder_datasets.execution._trust import private_folder
    >>> folder = private_folder(tempfile.mkdtemp() + "/ecd")
    >>> oct(os.stat(folder).st_mode & 0o777)
    '0o700'
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import stat
import struct

from ..errors import SandboxUntrusted

_FIX = ("remove it (as its owner, or root), or set EVOLVECODER_SERVICE_DIR (or XDG_RUNTIME_DIR) to a folder "
        "only you own, mode 0700")  # fmt: skip
_PARENT_FIX = ("set EVOLVECODER_SERVICE_DIR (or XDG_RUNTIME_DIR) to a folder only you own, mode 0700, or make this one "
               "sticky (chmod +t) or writable by its owner only")  # fmt: skip
_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def _owner(uid: int) -> str:
    try:
        import pwd

        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _kind(st: os.stat_result) -> str:
    mode = st.st_mode
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"), (stat.S_ISREG, "a file"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISFIFO, "a FIFO")):  # fmt: skip
        if test(mode):
            return name
    return "a special file"


def _refuse(path: str, problem: str, st: os.stat_result | None = None, fix: str = _FIX,
            whose: str = "the execution service's") -> SandboxUntrusted:
    seen = "" if st is None else f" ({_kind(st)} owned by {_owner(st.st_uid)}, mode {stat.S_IMODE(st.st_mode):04o})"
    if st is not None and stat.S_ISLNK(st.st_mode):
        try:
            seen += f" pointing to {os.readlink(path)!r}"
        except OSError:
            pass
    return SandboxUntrusted(f"refusing {whose} {path!r}{seen}: {problem}; this process runs as "
                            f"{_owner(os.geteuid())}. Fix: {fix}")  # fmt: skip


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _check_private(path: str, fd: int, **say: str) -> None:
    st = os.fstat(fd)
    if not stat.S_ISDIR(st.st_mode):
        raise _refuse(path, "it is not a directory", st, **say)
    if st.st_uid != os.geteuid():
        raise _refuse(path, "it is owned by another user, who could read what is in it and answer in its place", st,
                      **say)
    if st.st_mode & 0o022:
        raise _refuse(path, "other users may write in it (it must be mode 0700)", st, **say)
    if st.st_mode & 0o055:  # ours, and nobody else could write in it (earlier versions left evolvecoder-<uid> 0755)
        os.fchmod(fd, 0o700)
        st = os.fstat(fd)
        if stat.S_IMODE(st.st_mode) & 0o077:
            raise _refuse(path, "its mode cannot be narrowed to 0700", st, **say)


def private_folder(path: str, *, create: bool = True, **say: str) -> str:
    """Make ``path`` (one level, mode 0700) unless it exists, then prove it is a real directory owned by this
    effective uid with no group or other bits; returns ``path``. A folder of ours that others may read but not
    write (``0755``, as earlier versions left ``evolvecoder-<uid>``) is narrowed to 0700 through the descriptor
    checked: nobody else can have put anything in it.

    Args:
        path (`str`): the folder; its parent must exist.
        create (`bool`, defaults to True): make it where it is missing (else a missing folder is refused).
        say: ``whose`` (``"the execution service's"``) and ``fix``: how a refusal names the folder and the remedy.

    Raises:
        SandboxUntrusted: it is a symbolic link or not a directory, another user owns it, or its mode lets group
            or others write in it.

    Example:
        >>> import tempfile
        >>> private_folder(tempfile.mkdtemp()) != ""
        True
    """
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as err:
        st = _lstat(path)
        if st is None:
            raise _refuse(path, f"it cannot be opened ({err.strerror})", **say) from None
        problem = "it is a symbolic link" if stat.S_ISLNK(st.st_mode) else "it is not a directory"
        raise _refuse(path, problem, st, **say) from None
    try:
        _check_private(path, fd, **say)
    finally:
        os.close(fd)
    return path


def safe_parent(path: str) -> str:
    """Prove that nobody but this user and root can rename or replace entries of the existing folder ``path`` (the
    shared parent of a runtime folder): owned by this effective uid or root, and not writable by group or others
    unless sticky (as ``/tmp`` is). Returns its real path, the one checked: use that one. A symbolic link on the way
    (``XDG_RUNTIME_DIR`` a link another user owns in ``/tmp``) is resolved here once and never walked again, so
    re-pointing it later cannot move what is opened, bound or chmodded under it (measured with the previous code,
    which checked and then used the path through the link: root's ``chmod 0600`` of its socket landed on a root
    file of another user's choosing).

    Raises:
        SandboxUntrusted: another user owns it, or others may write it without the sticky bit.

    Example:
        >>> safe_parent("/tmp")
        '/tmp'
    """
    path = os.path.realpath(path)
    try:
        st = os.stat(path)
    except OSError as err:
        raise _refuse(path, f"the folder above the runtime folder cannot be read ({err.strerror})") from None
    if not stat.S_ISDIR(st.st_mode):
        raise _refuse(path, "the folder above the runtime folder is not a directory", st)
    if st.st_uid not in (0, os.geteuid()):
        raise _refuse(path, "the folder above the runtime folder is another user's, who could replace it", st,
                      _PARENT_FIX)  # fmt: skip
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        raise _refuse(path, "others may rename entries of the folder above the runtime folder (writable, not "
                            "sticky)", st, _PARENT_FIX)  # fmt: skip
    return path


def open_private_file(folder: str, name: str, flags: int) -> int:
    """A descriptor of the file ``name`` in the checked ``folder``: made here (mode 0600, ``O_EXCL``) or an
    existing one, never through a symbolic link, and only a regular file of ours with one link.

    Args:
        folder (`str`): a folder :func:`private_folder` checked.
        name (`str`): the file's name in it (``start.lock``, ``service.log``).
        flags (`int`): ``os.O_RDWR``, ``os.O_WRONLY | os.O_APPEND``, ...; ``O_NOFOLLOW`` and ``O_CLOEXEC`` are
            added.

    Raises:
        SandboxUntrusted: a symbolic link, a FIFO or other non-file, another user's file or a hard link is there.

    Example:
        >>> import tempfile
        >>> fd = open_private_file(tempfile.mkdtemp(), "start.lock", os.O_RDWR)
        >>> os.close(fd)
    """
    path = os.path.join(folder, name)
    base = flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK  # a FIFO planted there must not block the open
    for _attempt in range(3):
        try:
            fd = os.open(path, base | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            pass
        try:
            fd = os.open(path, base)
            break
        except FileNotFoundError:  # removed between the two opens: make it again
            continue
        except OSError as err:  # ELOOP: a link; ENXIO: a FIFO nobody reads; others: a special file
            st = _lstat(path)
            link = err.errno == errno.ELOOP or (st is not None and stat.S_ISLNK(st.st_mode))
            raise _refuse(path, "it is a symbolic link" if link else f"it cannot be opened ({err.strerror})", st) \
                from None
    else:
        raise _refuse(path, "it keeps appearing and disappearing")
    st = os.fstat(fd)
    problem = ("it is not a regular file" if not stat.S_ISREG(st.st_mode) else
               "it is owned by another user" if st.st_uid != os.geteuid() else
               "it is a hard link to another file" if st.st_nlink != 1 else None)  # fmt: skip
    if problem is not None:
        os.close(fd)
        raise _refuse(path, problem, st)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def socket_present(path: str) -> bool:
    """Whether a socket of ours is at ``path`` (False where nothing is); anything else there is refused, never
    connected to, unlinked or bound over.

    Raises:
        SandboxUntrusted: a link, a file or another user's socket is at ``path``.

    Example:
        >>> socket_present("/nonexistent/service.sock")
        False
    """
    st = _lstat(path)
    if st is None:
        return False
    if not stat.S_ISSOCK(st.st_mode):
        raise _refuse(path, "it is not a socket", st)
    if st.st_uid != os.geteuid():
        raise _refuse(path, "the socket is another user's", st)
    return True


def process_state(pid: int) -> bytes:
    """Process ``pid``'s state letter in ``/proc`` (``b"R"``, ``b"S"``, ``b"T"``/``b"t"`` stopped by a signal or a
    tracer, ``b"Z"`` dead), ``b""`` when it is gone.

    Example:
        >>> process_state(os.getpid()) in (b"R", b"S")
        True
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return b""


def peer_credentials(sock: socket.socket) -> tuple[int, int, int]:
    """``(pid, uid, gid)`` of the process at the other end of a connected Unix socket, as the kernel recorded them
    when the connection was made (``SO_PEERCRED``), in this process's namespaces.

    Example:
        >>> a, b = socket.socketpair()
        >>> peer_credentials(a)[1] == os.geteuid()
        True
    """
    return _PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size))


def check_peer(sock: socket.socket, path: str) -> None:
    """Refuse the service answering on ``path`` unless it runs as this process's effective uid (it was started by
    a caller of this user; nobody else's process may read our programs or answer for the judge).

    Raises:
        SandboxUntrusted: the peer runs as another uid (named in the message).

    Example:
        >>> a, b = socket.socketpair()
        >>> check_peer(a, "service.sock")
    """
    pid, uid, _gid = peer_credentials(sock)
    if uid != os.geteuid():
        raise SandboxUntrusted(f"refusing the execution service on {path!r}: the process answering there (pid "
                               f"{pid}) runs as {_owner(uid)}, not as this process's {_owner(os.geteuid())}; "
                               f"nothing was sent to it. Fix: {_FIX}")  # fmt: skip
