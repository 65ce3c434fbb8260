"""Bootstrap of the ``unshare`` isolation: build the sandbox's filesystem from a mount plan, pivot into it, exec.

Started by :func:`evolvecoder_datasets.execution.isolation.unshare_command` as the first process of fresh mount, PID,
network, IPC and UTS namespaces (root inside them: the real root, or root of a new user namespace). Stdlib only, run
as ``python -I -S -B _mountns.py CHDIR OWN_USERNS N KIND DEST SOURCE SIZE_MB ... -- COMMAND...`` (``OWN_USERNS``
is ``1`` when ``unshare`` made a user namespace for a non-root caller; then N mount steps of ``mount_plan()``, in
order, four arguments each). Only ``ctypes`` is imported beyond builtins, to keep the start cheap. The steps are
the ones bubblewrap performs for the same plan: a tmpfs root,
read-only binds (submounts included, each remounted read-only), symlinks, 0755 folders, private tmpfs, a minimal
``/dev`` and a fresh ``/proc``; then ``pivot_root`` into it and detach the host's tree.

Everything is imported before the first ``pivot_root``: the interpreter's own files are out of reach until the
tree is built. Any failing step ends this process with status 111 before anything is exec'd: nothing runs with less isolation than
planned. Afterwards this process stays as the namespace's PID 1 (reaping orphans, as bubblewrap's init does) and the
command runs as its child, in a new session, with ``no_new_privs`` set and, when this is root of a user namespace
rather than the real root, without capabilities.
"""

import ctypes
import os
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_PRIVATE = 1024, 2048, 4096, 16384, 1 << 18
MS_RELATIME, MS_STRICTATIME = 1 << 21, 1 << 24
MNT_DETACH = 2
ST_TO_MS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC), (os.ST_NOATIME, MS_NOATIME),
            (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME))
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 38, 24
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 1
# pivot_root has no glibc wrapper: its syscall number per architecture.
PIVOT_ROOT = {"x86_64": 155, "amd64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41, "loongarch64": 41,
              "ppc64le": 203, "ppc64": 203, "s390x": 217, "i386": 217, "i686": 217, "armv7l": 218}  # fmt: skip
DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")
DEV_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
             "stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx"}  # fmt: skip
# Covered read-only inside a fresh /proc, as bubblewrap does: host-wide knobs a root inside could otherwise turn.
PROC_COVERED = ("sys", "sysrq-trigger", "irq", "bus")
NEW, OLD = "/newroot", "/oldroot"

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]


def _b(text):
    return None if text is None else os.fsencode(text)


def _check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source, target, fstype, flags, data=None):
    _check(_libc.mount(_b(source), _b(target), _b(fstype), flags, _b(data)), f"mount {source} on {target}")


def umount(target):
    _check(_libc.umount2(_b(target), MNT_DETACH), f"umount {target}")


def pivot_root(new_root, put_old):
    number = PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        raise OSError(f"pivot_root: unknown syscall number on {os.uname().machine}")
    _check(_libc.syscall(ctypes.c_long(number), _b(new_root), _b(put_old)), f"pivot_root {new_root}")


def _mount_points_under(path):
    """Mount points at or below ``path`` (from mountinfo, octal escapes undone), outermost first."""
    with open(f"{OLD}/proc/self/mountinfo", "rb") as fh:
        points = [_unescape(line.split()[4]) for line in fh]
    prefix = path.rstrip("/") + "/"
    return sorted({p for p in points if p == path or p.startswith(prefix)}, key=len)


def _unescape(field):
    """A mountinfo path: the kernel writes space, tab, newline and backslash as ``\\ooo`` octal escapes."""
    out, i = bytearray(), 0
    while i < len(field):
        if field[i] == 0x5C and field[i + 1 : i + 4].isdigit() and len(field[i + 1 : i + 4]) == 3:
            out.append(int(field[i + 1 : i + 4], 8))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return os.fsdecode(bytes(out))


def _remount_read_only(path):
    # Keep the flags the kernel may lock (in a user namespace it refuses to drop nosuid/nodev/noexec or to change
    # the atime mode). statvfs reports them with its own bits: ST_RELATIME is 4096, MS_RELATIME is 1 << 21.
    have = os.statvfs(path).f_flag
    kept = sum(ms for st, ms in ST_TO_MS if have & st)
    if not kept & (MS_NOATIME | MS_RELATIME):
        kept |= MS_STRICTATIME
    mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | kept)


def _make_target(source, target):
    os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
    if os.path.isdir(source):
        os.makedirs(target, mode=0o755, exist_ok=True)
    elif not os.path.lexists(target):
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))


def bind(source, target, *, read_only):
    old = OLD + source
    if not os.path.lexists(old):
        raise FileNotFoundError(f"bind source {source} does not exist")
    _make_target(old, target)
    mount(old, target, None, MS_BIND | MS_REC)
    if read_only:
        for point in _mount_points_under(target):
            _remount_read_only(point)


def tmpfs(target, size_mb, mode="0755"):
    os.makedirs(target, mode=0o755, exist_ok=True)
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode},size={max(1, size_mb)}m")


def dev(target):
    tmpfs(target, 1)
    for node in DEV_NODES:
        if os.path.exists(f"{OLD}/dev/{node}"):
            _make_target(f"{OLD}/dev/{node}", f"{target}/{node}")
            mount(f"{OLD}/dev/{node}", f"{target}/{node}", None, MS_BIND)
    for name, link in DEV_LINKS.items():
        os.symlink(link, f"{target}/{name}")
    for folder in ("shm", "pts"):
        os.makedirs(f"{target}/{folder}", mode=0o755, exist_ok=True)
    # A private devpts instance (its own pseudo-terminals, none of the host's), as bubblewrap mounts it.
    mount("devpts", f"{target}/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")


def proc(target):
    os.makedirs(target, mode=0o755, exist_ok=True)
    mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in PROC_COVERED:
        path = f"{target}/{name}"
        # Already read-only for us (as root of a user namespace, the host's root owns them): nothing to cover.
        if os.path.exists(path) and os.access(path, os.W_OK):
            mount(path, path, None, MS_BIND | MS_REC)
            _remount_read_only(path)


def apply(kind, dest, source, size_mb):
    target = NEW + dest
    if kind in ("ro", "rw"):
        bind(source, target, read_only=kind == "ro")
    elif kind == "tmpfs":
        tmpfs(target, size_mb)
    elif kind == "dir":
        os.makedirs(target, mode=0o755, exist_ok=True)
        os.chmod(target, 0o755)
    elif kind == "symlink":
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        os.symlink(source, target)
    elif kind == "dev":
        dev(target)
    elif kind == "proc":
        proc(target)
    else:
        raise ValueError(f"unknown mount step {kind!r}")


def _capabilities_to_drop(own_userns):
    """Every capability when this runs as root of a user namespace made for a non-root caller, none otherwise.

    Root of a user namespace owns this mount namespace: with its capabilities a program could remount the read-only
    binds writable and change the caller's own files (its virtualenv, this package). Emptied, the bounding set leaves
    the command uid 0 inside with no capabilities after exec, which is what bubblewrap gives a non-root caller. A
    root caller keeps them, as under bubblewrap: the server needs them to drop each solution to its own uid. (Root
    of a container's own user namespace counts as root here: its uid drop works, and is worth more than the caps.)
    """
    if not own_userns:
        return []
    with open("/proc/sys/kernel/cap_last_cap") as fh:
        return list(range(int(fh.read()) + 1))


def loopback_up():
    """Bring up the new network namespace's own ``lo`` (bubblewrap does too): a program may talk to itself over
    127.0.0.1, never to the host, whose loopback is another namespace's."""
    fd = _libc.socket(2, 2, 0)  # AF_INET, SOCK_DGRAM
    if fd < 0:
        _check(fd, "socket")
    try:
        request = ctypes.create_string_buffer(b"lo", 40)  # struct ifreq: the name, then a union (flags: a short)
        _check(_libc.ioctl(fd, ctypes.c_ulong(SIOCGIFFLAGS), request), "ioctl(SIOCGIFFLAGS, lo)")
        flags = int.from_bytes(request.raw[16:18], sys.byteorder) | IFF_UP
        ctypes.memmove(ctypes.addressof(request) + 16, flags.to_bytes(2, sys.byteorder), 2)
        _check(_libc.ioctl(fd, ctypes.c_ulong(SIOCSIFFLAGS), request), "ioctl(SIOCSIFFLAGS, lo)")
    finally:
        os.close(fd)


def build(mounts):
    """Build the planned tree and make it the root; the host's tree is detached (unreachable) afterwards."""
    os.umask(0o022)
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing below propagates back to the host
    # A scratch root on top of /tmp (in this mount namespace only) holds the new root and, after the first pivot,
    # the host's tree under /oldroot, from which the binds take their sources.
    tmpfs("/tmp", 1)
    os.mkdir("/tmp" + NEW)
    os.mkdir("/tmp" + OLD)
    pivot_root("/tmp", "/tmp" + OLD)
    os.chdir("/")
    tmpfs(NEW, 4)
    for step in mounts:
        apply(*step)
    umount(OLD)
    os.chdir(NEW)
    pivot_root(".", ".")
    umount(".")
    os.chdir("/")
    mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def main():
    try:
        chdir, own_userns, count, rest = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3]), sys.argv[4:]
        mounts = [(rest[i], rest[i + 1], rest[i + 2], int(rest[i + 3])) for i in range(0, 4 * count, 4)]
        if rest[4 * count] != "--" or len(rest) == 4 * count + 1:
            raise ValueError("expected -- COMMAND after the mount steps")
        argv = rest[4 * count + 1 :]
        caps = _capabilities_to_drop(own_userns)
        loopback_up()
        build(mounts)
        os.chdir(chdir)
    except Exception as err:  # noqa: BLE001 (any failing step, whatever it raised: refuse to run anything)
        sys.stderr.write(f"ecd-mountns: cannot build the sandbox: {err}\n")
        sys.stderr.flush()
        os._exit(111)
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            for cap in caps:
                _check(_libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"prctl(CAPBSET_DROP, {cap})")
            _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    # PID 1 of the namespace: hold none of the command's pipes, reap every orphan, leave with the command's status.
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    while True:
        try:
            done, status = os.wait()
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            continue
        if done == pid:
            code = os.waitstatus_to_exitcode(status)
            os._exit(code if code >= 0 else 128 - code)  # a signal death reads 128 + signal, as with bubblewrap


if __name__ == "__main__":
    main()
