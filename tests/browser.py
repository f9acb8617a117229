"""What the browser tests share: Chromium, started with its environment.

Chromium is a tool of the test, not a part of pbmserv: under ``faketime -f '+120d' make test``
it runs on the real clock (libfaketime in a browser stalls its page loads), while the server it
reads from keeps the moved calendar.
"""

from __future__ import annotations

import os
from typing import Any


def browser_env() -> dict[str, str]:
    """The test's environment without libfaketime's preload and settings."""
    return {
        key: value
        for key, value in os.environ.items()
        if key != "LD_PRELOAD" and not key.startswith("FAKETIME")
    }


def launch(pw: Any, executable: str) -> Any:
    """Chromium from ``executable``, headless, as every browser test starts it."""
    return pw.chromium.launch(
        executable_path=executable,
        args=["--no-sandbox", "--disable-dev-shm-usage"],
        env=browser_env(),
    )
