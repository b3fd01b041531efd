"""Writing results safely: a temporary file in the same folder, then an atomic rename."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: Path):
    """Yield a temporary path beside `path`; rename it to `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        # mkstemp makes the file private (0600); give it the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write_text(path: Path, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


@contextmanager
def atomic_dir(path: Path):
    """Yield a temporary folder beside `path`; when the block succeeds, rename it to `path`
    in one step (a reader sees the whole folder or none of it). If `path` appeared in the
    meantime (another writer finished first) the new copy is discarded."""
    import shutil

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        try:
            os.rename(tmp, path)
        except OSError:
            if not path.is_dir():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
