"""The server's own directories and files (the data directory, the SQLite store, the Maildir)
are made readable by their owner only.

The store holds password hashes and mail addresses, the Maildir every answer.  The systemd
unit runs with ``UMask=0077``, but ``make run`` and a shell's ``pbmserv`` run with the user's
umask (usually 0022), which left the store readable by every local user.  So the modes are set
where the files are made, not left to the umask (a process-wide umask would be a side effect on
every thread and on whoever imports us).  What exists already is left as the operator made it.
"""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def private_dir(path: Path) -> Path:
    """Create ``path`` and its missing parents with mode 0700; existing ones are left alone
    (the working directory, or a directory the operator made on purpose)."""
    missing: list[Path] = []
    step = path
    while not step.exists() and step != step.parent:
        missing.append(step)
        step = step.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:  # another process made it meanwhile: it is its to set
            continue
        directory.chmod(PRIVATE_DIR)  # mkdir's mode went through the umask
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty with mode 0600 (and its directory, see :func:`private_dir`)
    unless it exists: a program that opens it next keeps that mode (SQLite gives it to its
    ``-wal`` and ``-shm`` files too)."""
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE)
    except FileExistsError:
        return path
    os.close(fd)
    return path
