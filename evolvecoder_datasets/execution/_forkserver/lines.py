"""The result pipe: the lines a solution process and its tests' processes write, and how the server reads them.

Every line starts with the run's random nonce, then a tag and ASCII fields (numbers, status words, base64 text,
``-`` for none): ``L`` (the program loaded), ``R`` (a test's result), ``V`` (a one-probe test's value, followed by
its raw wire bytes), ``D`` (a process S waited for ended), ``O`` (a stdin/stdout case's output), ``U`` and ``X``
(the rest is unexecuted, or ends with one status). :class:`_Reporter` writes them; ``_split_frames`` and the token
readers (``_text``, ``_finite``, ``_wait_status``, ``_a2b_strict``) are the server's side, which trusts none of it
(see ``reading._Results._apply``).
"""

from __future__ import annotations

import binascii

from .pristine import _b2a, _len, _type, _write, _writev, pin_builtins

pin_builtins(globals())

STATUSES = ("pass", "fail", "error", "timeout", "memory", "crash", "syntax_error", "unexecuted")
MAX_MESSAGE = 300


_a2b = binascii.a2b_base64  # taken before any program runs: S reads its tests after the program did


def _a2b_strict(data: bytes) -> bytes:
    try:
        return _a2b(data, strict_mode=True)
    except TypeError:  # pragma: no cover - Python 3.10 has no strict mode
        return _a2b(data)


_STATUS_BYTES = {"value": b"value", "pass": b"pass", "fail": b"fail", "error": b"error", "crash": b"crash",
                 "memory": b"memory", "timeout": b"timeout"}


class _Reporter:
    """Writes verdict lines ``<nonce> <TAG> <field> ...`` to the result pipe.

    Fields are ASCII tokens (numbers, status words, base64 text, ``-`` for none) assembled without ``json`` or
    any other module a program could have rebound. Writes under 4 KiB are atomic.
    """

    __slots__ = ("fd", "prefix", "bprefix")

    def __init__(self, fd: int, nonce: str) -> None:
        self.fd, self.prefix, self.bprefix = fd, nonce + " ", nonce.encode("ascii")

    def result(self, idx: int, status: str, message: str, payload: bytes | None, cpu: float) -> None:
        """The ``R`` line of one test, built in a single formatting step and written in one ``write``: it is written
        by every forked grandchild, where each temporary object may dirty (so copy) a page (a page fault costs
        3-5 µs here; the general path below cost ~25 of them per test)."""
        text = _b2a(message.encode("utf-8", "replace"), newline=False) if message else b"="
        line = b"%b R %d %b %b %b %b\n" % (self.bprefix, idx, _STATUS_BYTES.get(status) or status.encode("ascii"),
                                           text, payload or b"-", b"0" if cpu == 0.0 else b"%a" % cpu)  # fmt: skip
        if _len(line) <= 4096:  # one write of at most PIPE_BUF bytes is whole and atomic
            try:
                if _write(self.fd, line) == _len(line):
                    return
            except InterruptedError:
                pass
            except OSError:
                return
        self._write_all(line)

    def value(self, idx: int, ident: int, data: bytes) -> None:
        """A one-probe test's value: a ``V`` line (test, the value's id, a byte count), then ``data`` (its wire
        encoding) raw, in one ``writev``. The grandchild writes no base64 and builds no line around its value: each
        object it makes may dirty a page (the server, which copies nothing, builds the payload)."""
        head = b"%b V %d %x %d\n" % (self.bprefix, idx, ident, _len(data))
        try:
            n = _writev(self.fd, (head, data))
        except InterruptedError:
            n = 0
        except OSError:
            return
        if n < _len(head) + _len(data):
            self._write_all((head + data)[n:])

    def send(self, *fields) -> None:
        parts = [self.prefix]
        for field in fields:
            t = _type(field)
            if field is None:
                parts.append("-")
            elif t is str:
                parts.append(_b2a(field.encode("utf-8", "replace"), newline=False).decode("ascii") or "=")
            elif t is bytes:  # already an ASCII token
                parts.append(field.decode("ascii"))
            else:
                parts.append(repr(field))
            parts.append(" ")
        parts[-1] = "\n"
        self._write_all("".join(parts).encode("ascii"))

    def done(self, idx: int, wait_status: int, cpu: float, killed: str | None) -> None:
        """The ``D`` line the solution child writes after each grandchild it waited for (one formatting step)."""
        self._write_all(b"%b D %d %d %a %b\n" % (self.bprefix, idx, wait_status, cpu,
                                                  killed.encode("ascii") if killed else b"-"))  # fmt: skip

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                n = _write(self.fd, view)
            except InterruptedError:
                continue
            except OSError:
                return
            view = view[n:]


def _text(token: bytes) -> str:
    return "" if token in (b"-", b"=") else binascii.a2b_base64(token).decode("utf-8", "replace")


def _finite(token: bytes) -> float:
    """A CPU mark or count read from S: a finite, non-negative number, else ``ValueError`` (a malformed line)."""
    value = float(token)
    if not 0.0 <= value < 1e9:  # NaN compares false too
        raise ValueError("not a finite non-negative number")
    return value


def _wait_status(token: bytes) -> int:
    """A wait status read from S: an int a real ``waitpid`` can return (16 bits), else ``ValueError``."""
    value = int(token)
    if not 0 <= value < 1 << 16:
        raise ValueError("not a wait status")
    return value


def _split_frames(data: bytes, prefix: bytes, max_size: int, *, frames: bool = True) -> tuple[list, bytes]:
    """The complete ``(line, raw)`` items of ``data`` whose line starts with ``prefix``, and what is left unfinished.

    ``raw`` is None for a plain line; a ``V`` line (see :meth:`_Reporter.value`) is followed by its byte count of
    raw bytes, which may hold anything (line ends included). A ``V`` line whose count is malformed or over
    ``max_size`` is no line; one whose bytes have not all come is left, with them, for the next read. Without
    ``frames`` (fast mode, stdio, S-supervised tests) every item is a plain line, a ``V`` one included.
    """
    frame = prefix + b"V "
    if not frames or frame not in data:
        *lines, rest = data.split(b"\n")
        return [(line, None) for line in lines if line.startswith(prefix)], rest
    items, pos = [], 0
    while True:
        end = data.find(b"\n", pos)
        if end < 0:
            break
        line, raw = data[pos:end], None
        pos = end + 1
        if line.startswith(frame):
            try:
                size = int(line.rsplit(b" ", 1)[1])
            except (ValueError, IndexError):
                continue
            if not 0 <= size <= max_size:
                continue
            if _len(data) - pos < size:
                pos = end - _len(line)  # its bytes are still coming: read the line again then
                break
            raw, pos = data[pos : pos + size], pos + size
        elif not line.startswith(prefix):
            continue
        items.append((line, raw))
    return items, data[pos:]
