"""The shell: ``pbmserv`` and the per-game scripts, and the operator's commands.

The installed scripts start here, not in :mod:`pbmserv.cli.main`: a shell command lives a
fraction of a second and allocates most of its objects while importing, and with the collector
on, those same objects would be walked again and again (a third of the start-up).  So the
imports run with the collector off; then the objects they made are frozen (the collector
never walks them again: they live as long as the process) and collection resumes as usual, for
the command and for ``serve``, which runs for days.
"""

from __future__ import annotations

import gc
import importlib
import sys
from types import ModuleType


def _shell() -> ModuleType:
    gc.disable()
    try:
        shell = importlib.import_module("pbmserv.cli.main")  # with the collector off
    finally:
        gc.freeze()
        gc.enable()
    return shell


def pbmserv_main() -> None:
    """``pbmserv ...``"""
    sys.exit(_shell().main())


def ploy_main() -> None:
    sys.exit(_shell().main(["ploy", *sys.argv[1:]], prog_name="ploy"))


def pylon_main() -> None:
    sys.exit(_shell().main(["pylon", *sys.argv[1:]], prog_name="pylon"))


def plotto_main() -> None:
    sys.exit(_shell().main(["plotto", *sys.argv[1:]], prog_name="plotto"))


def polis_main() -> None:
    sys.exit(_shell().main(["polis", *sys.argv[1:]], prog_name="polis"))
