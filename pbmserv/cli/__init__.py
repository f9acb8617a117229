"""The shell: ``pbmserv`` and the per-game scripts, and the operator's commands.

A shell command lives a fraction of a second and allocates most of its objects while importing:
with the default thresholds the cyclic garbage collector would walk those same objects dozens
of times, a third of the start-up.  So the shell collects rarely (:data:`SHELL_GC`); ``serve``,
which runs for days, goes back to :data:`SERVER_GC`.
"""

from __future__ import annotations

import gc

SHELL_GC = (100_000, 50, 100)
SERVER_GC = gc.get_threshold()
gc.set_threshold(*SHELL_GC)
