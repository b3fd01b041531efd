"""What made a result: cubiclab's version, the simulator build, the source commit when run
from a git checkout, the command line and the machine. Reports and claims files carry it so
that a number can be traced to the code and the host that produced it."""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def _commit() -> str:
    """The git commit of the source tree cubiclab runs from ("+dirty" with local changes),
    or "not a git checkout" (an installed wheel)."""
    src = Path(__file__).resolve().parent
    try:
        rev = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10)
        if rev.returncode != 0:
            return "not a git checkout"
        dirty = subprocess.run(["git", "-C", str(src), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return rev.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "not a git checkout"


def provenance() -> dict:
    """{version, build, commit, command, machine}: `build` is the version with a hash of the
    compiled simulator (the cache's key part, `sweep.code_version`)."""
    import cubiclab
    from cubiclab.sweep import code_version

    return {
        "version": cubiclab.__version__,
        "build": code_version(),
        "commit": _commit(),
        "command": shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv and sys.argv[0] else "python",
        "machine": f"{platform.node()}: {platform.system()} {platform.release()}, {platform.machine()}, "
                   f"{os.cpu_count()} CPUs, Python {platform.python_version()}",
    }
