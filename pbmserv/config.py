"""Settings: defaults, then a TOML file (``--config`` or ``PBMSERV_CONFIG``), then environment.

Every setting is listed in ``deploy/pbmserv.toml.example`` with its default.  There is no global
settings object: the CLI loads one :class:`Settings` and passes it down.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any

from pbmserv.clock import Clock, make_clock, parse_instant


@dataclass
class Settings:
    data_dir: Path = Path("data")
    database_url: str = ""  # empty: sqlite file <data_dir>/pbmserv.sqlite3
    server_name: str = "pbmserv"
    server_address: str = "pbmserv@localhost"  # From: of every mail we send
    mail_domain: str = "localhost"
    # SMTP/LMTP listener
    listen_host: str = "127.0.0.1"
    listen_port: int = 2525
    lmtp: bool = False
    accept_recipients: list[str] = field(default_factory=lambda: ["pbmserv@localhost"])
    max_message_bytes: int = 1_000_000
    max_recipients: int = 20
    smtp_timeout: int = 300
    max_commands_per_mail: int = 10
    # caps on what unauthenticated or failing mail can cause (an authenticated command from
    # the player's confirmed address is always executed and answered): see README "Security"
    max_answers_per_day: int = 50  # answers to a player's confirmed address
    max_stranger_answers_per_day: int = 5  # answers to an address no account has confirmed
    max_mails_per_recipient_per_day: int = 20  # answers and confirmation mails to one address
    max_challenges_per_day: int = 20  # challenges asked for by mail, per challenger
    max_signup_addresses: int = 3  # addresses one signup or change address may give
    token_hours: int = 48  # confirmation and password reset codes expire after this
    unconfirmed_account_days: int = 3  # accounts without a confirmed address are then removed
    outbox_lease_minutes: int = 10  # a mail left 'sending' this long by a dead sender is resent
    inbox_retention_days: int = 30  # processed mails (kept with passwords masked) are deleted
    # outbound delivery: "maildir" (default) or "smtp"
    outbox: str = "maildir"
    maildir: Path = Path("")  # empty: <data_dir>/Maildir
    relay_host: str = "127.0.0.1"
    relay_port: int = 25
    relay_starttls: bool = False
    relay_username: str = ""
    relay_password: str = ""
    # accounts
    admins: list[str] = field(default_factory=list)
    argon2_time_cost: int = 2
    argon2_memory_kib: int = 19456
    auth_slowdown_after: int = 3  # failures before answers are slowed down
    auth_lockout_after: int = 8  # failures before the key is refused for a while
    auth_window_minutes: int = 15
    auth_lockout_minutes: int = 60
    # clocks
    nag_days: float = 7.0
    forfeit_days: float = 21.0
    # read-only web pages (pbmserv.web), served on listen_host by `pbmserv serve`
    web_enabled: bool = True
    web_port: int = 8080  # 0: any free port
    web_base_url: str = ""  # empty: http://<listen_host>:<web_port>; used for board mail links
    # test hook: an ISO-8601 instant the clock starts at (empty: the system clock)
    now: str = ""

    @property
    def url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'pbmserv.sqlite3').resolve()}"

    @cached_property
    def clock(self) -> Clock:
        """The time source of everything this process does (see :mod:`pbmserv.clock`)."""
        return make_clock(self.now)

    @property
    def maildir_path(self) -> Path:
        return self.maildir if str(self.maildir) not in ("", ".") else self.data_dir / "Maildir"


_ENV = {
    "PBMSERV_DATA_DIR": "data_dir",
    "PBMSERV_DATABASE_URL": "database_url",
    "PBMSERV_LISTEN_PORT": "listen_port",
    "PBMSERV_WEB_PORT": "web_port",
    "PBMSERV_ADMINS": "admins",
    "PBMSERV_NOW": "now",
}


def _coerce(name: str, value: Any) -> Any:
    kind = {f.name: f.type for f in fields(Settings)}[name]
    if kind == "Path":
        return Path(value)
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "bool":
        return value if isinstance(value, bool) else str(value).lower() in ("1", "true", "yes")
    if kind == "list[str]":
        return list(value) if isinstance(value, list) else [v for v in str(value).split(",") if v]
    return value


def load_settings(path: str | os.PathLike[str] | None = None, **overrides: Any) -> Settings:
    """Build the settings from defaults, the config file, the environment and ``overrides``."""
    settings = Settings()
    known = {f.name for f in fields(Settings)}
    path = path or os.environ.get("PBMSERV_CONFIG")
    if path:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
        data = data.get("pbmserv", data)
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown settings in {path}: {', '.join(sorted(unknown))}")
        for key, value in data.items():
            setattr(settings, key, _coerce(key, value))
    for env, key in _ENV.items():
        if os.environ.get(env):
            setattr(settings, key, _coerce(key, os.environ[env]))
    for key, value in overrides.items():
        if value is not None:
            setattr(settings, key, _coerce(key, value))
    if settings.now:
        try:
            parse_instant(settings.now)
        except ValueError as exc:
            raise ValueError(f"setting now (PBMSERV_NOW): {exc}") from None
    return settings
