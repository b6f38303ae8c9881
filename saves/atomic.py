"""Writes that a crash cannot tear, and the per-profile lock that keeps two writers in line.

`write_atomic` puts the new bytes in a temporary file beside the target, flushes and fsyncs it,
renames it over the target and fsyncs the folder: after a crash or kill at any instant the
target holds either the old bytes or the new ones, never a mixture. A failed write (a full disk)
removes its temporary file and leaves the old file as it was.

Setting `RIDGE_SAVE_FSYNC=0` skips the two fsyncs. A killed process still loses nothing (the
operating system keeps what was written); only a power cut or kernel crash could. The locking and
kill tests that do not concern power loss use it to stay fast on slow disks; players should not.
"""
from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

from saves.errors import SaveError

TEMP_SUFFIX = ".tmp"
FSYNC = os.environ.get("RIDGE_SAVE_FSYNC", "1") != "0"

try:  # POSIX
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                return False
            raise
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # Windows
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


def temp_name(target: str) -> str:
    """A hidden temporary name beside `target`, unique to this process and call."""
    return f".{target}.{os.getpid()}-{os.urandom(4).hex()}{TEMP_SUFFIX}"


def is_temp_of(name: str, target: str) -> bool:
    """True when `name` is a temporary file made for `target` by `temp_name`."""
    return name.startswith(f".{target}.") and name.endswith(TEMP_SUFFIX)


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new entry in `folder` durable (a no-op where folders cannot be opened)."""
    if not FSYNC:
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
          (stat.S_ISFIFO, "a pipe"), (stat.S_ISSOCK, "a socket"))


def write_target(path: Path) -> Path:
    """Where a write to `path` lands. A symlink is written through: the file it points to is
    replaced (atomically) and the link itself stays. Anything else that exists and is not a
    regular file (a device such as /dev/full, a pipe, a folder) is refused, because replacing
    it by rename would destroy it."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise SaveError(f"could not write {path}: {exc.strerror or exc}", path=path) from None
    if stat.S_ISLNK(st.st_mode):
        real = Path(os.path.realpath(path))
        try:
            st = os.stat(real)
        except FileNotFoundError:
            return real  # a dangling link: its target is created, the link then resolves
        except OSError as exc:
            raise SaveError(f"could not write {path}: {exc.strerror or exc}", path=path) from None
        path = real
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise SaveError(f"{path} is {kind}, not a regular file; it was not replaced", path=path)
    return path


NEW_FILE_MODE = 0o600  # a new save file is the player's alone


def write_atomic(path: Path, data: bytes | str, *, new_mode: int = NEW_FILE_MODE) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new file whole
    (a symlink is written through and kept; a device or other special file is refused). The
    new file keeps the permissions of the one it replaces; a file that did not exist gets
    `new_mode` (less the umask)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = write_target(path)
    try:
        mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = None
    tmp = path.with_name(temp_name(path.name))
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                     new_mode if mode is None else 0o600)
        try:
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(fd, mode)  # what it replaces decides, not the umask
            _write_all(fd, data)
            if FSYNC:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        reason = exc.strerror or str(exc)
        raise SaveError(f"could not write {path}: {reason}; the file on disk is unchanged",
                        path=path) from None
    fsync_dir(path.parent)


def write_requested(path: Path, data: str, *, force: bool, ours: Callable[[bytes], bool],
                    save_dir: Path | None = None, what: str = "the output") -> None:
    """Write a file a player asked for (an export) at `path`: never through a symlink, never
    over anything but a regular file, never inside `save_dir`, and over an existing file only
    when `ours(first bytes)` says Ridge wrote it or `force` is given. Atomic, mode kept."""
    path = Path(path)
    if save_dir is not None:
        try:
            inside = Path(os.path.realpath(path.parent)).is_relative_to(os.path.realpath(save_dir))
        except OSError:
            inside = False
        if inside:
            raise SaveError(f"{path}: inside the save folder {save_dir}; write {what} somewhere else", path=path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise SaveError(f"could not write {path}: {exc.strerror or exc}", path=path) from None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise SaveError(f"{path} is a symbolic link; Ridge does not write through links: name the file itself",
                            path=path)
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
            raise SaveError(f"{path} is {kind}, not a regular file; it was not replaced", path=path)
        if not force:
            from engine.bounds import read_regular

            try:
                head = read_regular(path, 4096, head=True)
            except OSError:
                head = b""
            if not ours(head):
                raise SaveError(f"{path} already exists and Ridge did not write it; it was left as it is "
                                "(pass --force to replace it)", path=path)
    write_atomic(path, data, new_mode=0o666)


def write_new(folder: Path, name: str, text: str) -> Path:
    """Write `text` as `folder/name`, or as `name` with -2, -3 ... before its suffix when that
    exists already: a report written again never replaces the last one. Returns the path."""
    make_dir(folder)
    path = folder / name
    n = 2
    while path.exists():
        path = folder / f"{Path(name).stem}-{n}{Path(name).suffix}"
        n += 1
    write_atomic(path, text)
    return path


def make_dir(folder: Path) -> None:
    """Create `folder` (and parents) durably if it is missing."""
    if folder.is_dir():
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SaveError(f"could not create the folder {folder}: {exc.strerror or exc}",
                        path=folder) from None
    fsync_dir(folder.parent)


class FileLock:
    """An exclusive lock on `path` (created if missing), across processes, held in a `with` block.

    Waits up to `timeout` seconds, then raises SaveError. The operating system drops the lock if
    the holder dies, so a killed process never leaves a profile locked.
    """

    def __init__(self, path: Path, timeout: float = 30.0):
        self.path = path
        self.timeout = timeout
        self._fd: int | None = None

    def __enter__(self) -> FileLock:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, NEW_FILE_MODE)
        except OSError as exc:
            raise SaveError(f"could not open the lock file {self.path}: {exc.strerror or exc}",
                            path=self.path) from None
        deadline = time.monotonic() + self.timeout
        delay = 0.0002
        try:
            while not _try_lock(fd):
                if time.monotonic() > deadline:
                    raise SaveError(f"{self.path.name}: another Ridge has held this profile for "
                                    f"{self.timeout:g} s; close it and try again", path=self.path)
                time.sleep(delay)
                delay = min(delay * 2, 0.001)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def __exit__(self, *exc_info: object) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                _unlock(fd)
            finally:
                os.close(fd)
