"""The one advisory file lock (``fcntl.flock``): one writer at a time on a journal or a sync
folder; the file names its holder and goes on release."""

from __future__ import annotations

import fcntl
import os
import sys
from contextlib import suppress
from pathlib import Path


class LockHeld(Exception):
    """The lock is held by another process; :attr:`holder` is what that process wrote."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"{path} is held by {holder}")
        self.path, self.holder = path, holder


class FileLock:
    """An exclusive, non-blocking lock on ``path`` (mode 0600) naming its holder inside;
    :meth:`acquire` (or ``with``) raises :class:`LockHeld` when another process holds it.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.lock")
    >>> with FileLock(path):
    ...     FileLock(path).acquire()
    Traceback (most recent call last):
    toolkit._core.lock.LockHeld: ...
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock at once or raise :class:`LockHeld`; write who holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 400, 0).decode("utf-8", "replace").strip()
                if holder.isdigit():  # a bare process id, as an older toolkit wrote it
                    holder = f"process {holder}"
                os.close(fd)
                raise LockHeld(self.path, holder or "another process") from None
            if self._names(fd):
                break
            os.close(fd)  # its holder removed the file as it let go: lock the path's file
        os.ftruncate(fd, 0)
        command = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))
        os.pwrite(fd, f"process {os.getpid()} ({command[:200]})\n".encode(), 0)
        self._fd = fd

    def _names(self, fd: int) -> bool:
        """Whether :attr:`path` still names the open file ``fd``."""
        try:
            return os.path.samestat(os.fstat(fd), os.stat(self.path))
        except OSError:
            return False

    def release(self) -> None:
        """Release the lock and remove its file (releasing twice is harmless)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            if self._names(fd):
                with suppress(OSError):
                    self.path.unlink()  # while held: no one else has it locked
            os.close(fd)  # closing the descriptor releases the lock

    def __del__(self) -> None:
        self.release()

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
