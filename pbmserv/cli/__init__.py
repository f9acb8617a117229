"""The shell: ``pbmserv`` and the per-game scripts, and the operator's commands."""
