"""Where the suite's scratch files go. The tests write, fsync and delete thousands of small files
(saves, packs, lobbies); on a memory-backed folder that costs no disk I/O, so the same checks run
in less CPU and wall time. Nothing here changes what a test checks: a folder is a folder."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile

MEMORY = "/dev/shm"


# A container's /dev/shm may be as small as 64 MiB: the suite's files (pytest keeps its last three
# runs, ~25 MB each) would fill it, so the memory folder is used only with room to spare.
ROOM_NEEDED = 1 << 30


def scratch_root() -> str | None:
    """/dev/shm when this machine has it, the suite may write there and it has ROOM_NEEDED free,
    else None (the normal temporary folder)."""
    if os.path.isdir(MEMORY) and os.access(MEMORY, os.W_OK | os.X_OK):
        fs = os.statvfs(MEMORY)
        if fs.f_bavail * fs.f_frsize >= ROOM_NEEDED:
            return MEMORY
    return None


def use_scratch_root() -> None:
    """Point this process's temporary folder, and its children's (TMPDIR), at the scratch root.
    Called once, before any test asks for a temporary folder."""
    root = scratch_root()
    if root is None:
        return
    os.environ["TMPDIR"] = root
    tempfile.tempdir = root


def scratch_dir(prefix: str) -> str:
    """A fresh folder for this test process, removed when the process ends: in memory, a folder
    left behind would hold its RAM until the machine restarts."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path
