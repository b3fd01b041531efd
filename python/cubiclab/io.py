"""Writing results all or nothing: a temporary file or folder beside the target, moved into
place in one step.

A temporary name carries its writer's process id (``.summary.json.<pid>.<random>.tmp``), so
that the leftovers of a killed writer are told from a running one's and removed by the next
writer of the same target.
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def clean_leftovers(path: Path) -> list[Path]:
    """Remove the temporaries that writers of `path` left when they were killed (their
    process is gone), putting back a folder that a killed replacement had set aside; return
    what was removed."""
    path = Path(path)
    if not path.parent.is_dir():
        return []
    pattern = re.compile(rf"\.{re.escape(path.name)}\.(\d+)\.[a-z0-9_]{{8}}\.tmp")  # see _prefix, mkstemp
    removed = []
    for leftover in path.parent.iterdir():
        m = pattern.fullmatch(leftover.name)
        if not m or _alive(int(m.group(1))):
            continue
        if (leftover / _ASIDE).is_dir() and not path.exists():
            # Killed between the two renames of a replacement without an atomic swap.
            os.rename(leftover / _ASIDE, path)
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)
        removed.append(leftover)
    return removed


def _prefix(path: Path) -> str:
    return f".{path.name}.{os.getpid()}."


@contextmanager
def atomic_path(path: Path):
    """Yield a temporary path beside `path`; rename it to `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(path)
    fd, tmp = tempfile.mkstemp(prefix=_prefix(path), suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        # mkstemp makes the file private (0600); give it the mode a plain open() would.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write_text(path: Path, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


_RENAME_EXCHANGE = 2  # linux/fs.h: swap two names atomically
_ASIDE = "replaced"  # where a replacement without a swap keeps the old folder meanwhile


def _exchange(a: Path, b: Path) -> bool:
    """Swap the folders `a` and `b` in one step (Linux renameat2 RENAME_EXCHANGE); False where
    the system or the file system cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd = -100
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


@contextmanager
def atomic_dir(path: Path, replace: bool = False):
    """Yield a fresh temporary folder beside `path`; when the block succeeds, move it to
    `path` in one step, so that a reader sees the whole folder or none of it and an
    interrupted block leaves `path` as it was.

    If `path` exists: with `replace`, it is swapped for the new folder in one step (where the
    file system cannot swap, it is renamed aside first and removed after); without, the new
    copy is discarded (another writer finished first)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(path)
    tmp = Path(tempfile.mkdtemp(prefix=_prefix(path), suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        try:
            os.rename(tmp, path)
        except OSError:
            if not path.is_dir():
                raise
            if replace and not _exchange(tmp, path):
                aside = Path(tempfile.mkdtemp(prefix=_prefix(path), suffix=".tmp", dir=path.parent))
                os.rename(path, aside / _ASIDE)
                os.rename(tmp, path)
                shutil.rmtree(aside, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def writable_folder(path: Path, what: str) -> Path:
    """Create the folder `path` (and its parents) if missing and check that a file can be
    written in it, so that a command refuses a bad output place before it does any work.
    Raise ValueError naming `what` (the option, e.g. "--out") on a file where the folder
    should be, a folder that cannot be created, or one that cannot be written."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{what} '{path}' is a file; expected a folder (or a path where one can be created)")
    try:
        path.mkdir(parents=True, exist_ok=True)
        # A real write, not os.access: root passes access checks that a read-only mount refuses.
        fd, probe = tempfile.mkstemp(prefix=".cubiclab-probe.", suffix=".tmp", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise ValueError(f"{what} '{path}' is not a writable folder: {e.strerror or e}") from None
    return path


# ---- named files: a target to write, an input to read ------------------------------------


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def check_file_target(path, what: str) -> Path:
    """`path` as a file target the caller may replace atomically (a temporary file beside it,
    then a rename): missing, or a regular file, in an existing folder. A device, FIFO, folder,
    socket or symbolic link is refused, since a rename would replace it rather than write
    into it; `what` names the option in the error."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ValueError(f"{what} is {path!r}; allowed: the name of a regular file to write")
    p = Path(path)
    try:
        mode = os.lstat(p).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise ValueError(f"{what} '{p}': {e.strerror}") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise ValueError(f"{what} '{p}' is {_kind(mode)}; allowed: a new or regular file "
                         "(it would be replaced, not written into)")
    parent = p.parent
    if not parent.is_dir():
        raise ValueError(f"{what}: cannot create '{p}': folder '{parent}' does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{what}: cannot create '{p}': folder '{parent}' is not writable")
    return p


#: The largest input file read whole (a trace, a scenario): 256 MiB.
MAX_INPUT_BYTES = 256 << 20


def open_input_file(path, what: str) -> int:
    """A descriptor open for reading on the regular file `path`. Opened without blocking (a
    FIFO is refused, never waited on) and checked after opening, so a device, folder or FIFO
    is refused by what it is; `what` names the key or option in the error. The caller
    closes it."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ValueError(f"{what} is {path!r}; allowed: the name of a regular file")
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ValueError(f"{what}: no such file '{p}'") from None
    except OSError as e:
        raise ValueError(f"{what} '{p}': {e.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ValueError(f"{what} '{p}' is not a file ({_kind(mode)}); allowed: a regular file")
    return fd


def read_input_file(path, what: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file `path` (see `open_input_file`), at most `limit` of them."""
    fd = open_input_file(path, what)
    p = Path(path)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise ValueError(f"{what} '{p}' is {size:,} bytes; allowed: at most {limit:,} bytes")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:  # grew while read
        raise ValueError(f"{what} '{p}' is more than {limit:,} bytes; allowed: at most {limit:,} bytes")
    return data
