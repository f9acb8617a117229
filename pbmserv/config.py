"""Settings: defaults, then a TOML file (``--config`` or ``PBMSERV_CONFIG``), then environment.

Every setting is listed in ``deploy/pbmserv.toml.example`` with its default, and every setting
can also be given as the environment variable ``PBMSERV_<NAME>`` (``PBMSERV_LISTEN_PORT=2526``;
lists as ``a,b``).  Every value is checked against the type of its field: a wrong one is a
:class:`SettingsError` that names the setting, where it came from and what is expected.  (This
is a plain dataclass, not pydantic-settings: importing pydantic cost a shell command more than
the rest of its work.)  There is no global settings
object: the CLI loads one :class:`Settings` and passes it down.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import MISSING, dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any

from pbmserv.clock import Clock, make_clock, parse_instant

ENV_PREFIX = "PBMSERV_"
TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
FALSE = frozenset({"0", "false", "f", "no", "n", "off"})


class SettingsError(ValueError):
    """A setting is unknown or has a value of the wrong kind."""


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
    # worker processes `pbmserv serve` starts beside the listener, each with a core of its own
    # (more than one pays on PostgreSQL only: SQLite has one writer); 0: a thread of the server
    workers: int = 1
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
    # processed mails (kept with passwords masked) and the records of sent mails (their texts
    # dropped) are deleted after this
    inbox_retention_days: int = 30
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

    def __post_init__(self) -> None:
        checked = _checked({f.name: getattr(self, f.name) for f in fields(self)}, {})
        for name, value in checked.items():
            setattr(self, name, value)

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Every setting's name and default value."""
        out: dict[str, Any] = {}
        for item in fields(cls):
            if item.default_factory is not MISSING:
                out[item.name] = item.default_factory()
            else:
                out[item.name] = item.default
        return out

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


def _checked(values: dict[str, Any], sources: dict[str, str]) -> dict[str, Any]:
    """``values`` converted to their settings' types; SettingsError names every wrong one and
    where it came from (``sources``: a file, an environment variable, else an argument)."""
    kinds = {f.name: f.type for f in fields(Settings)}
    unknown = set(values) - set(kinds)
    if unknown:
        raise SettingsError(f"unknown settings: {', '.join(sorted(unknown))}")
    out, problems = {}, []
    for name, value in values.items():
        try:
            out[name] = _check(name, str(kinds[name]), value)
        except ValueError as exc:
            where = sources.get(name, "argument")
            problems.append(f"{name} ({where}): {exc}, got {value!r}")
    if problems:
        raise SettingsError("invalid settings: " + "; ".join(problems))
    return out


def _check(name: str, kind: str, value: Any) -> Any:
    """``value`` as the setting's type (``kind`` is the annotation's text); ValueError says why."""
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in TRUE | FALSE:
            return value.strip().lower() in TRUE
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise ValueError("Input should be a valid boolean")
    if kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise ValueError("Input should be a valid integer")
    if kind == "float":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
        raise ValueError("Input should be a valid number")
    if kind == "Path":
        if isinstance(value, str | Path):
            return Path(value)
        raise ValueError("Input should be a valid path")
    if kind == "list[str]":
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return list(value)
        raise ValueError("Input should be a list of strings")
    if not isinstance(value, str):
        raise ValueError("Input should be a valid string")
    if name == "outbox" and value not in ("maildir", "smtp"):
        raise ValueError(f"Value error, outbox must be 'maildir' or 'smtp', not {value!r}")
    if name == "now" and value:
        try:
            parse_instant(value)
        except ValueError as exc:
            raise ValueError(f"Value error, {exc}") from None
    return value


def _read_table(path: str) -> dict[str, Any]:
    """The ``[pbmserv]`` table of a TOML file (or the whole file); unknown keys are an error."""
    if not path:
        return {}
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    table = data.get("pbmserv", data)
    unknown = set(table) - {f.name for f in fields(Settings)}
    if unknown:
        raise SettingsError(f"unknown settings in {path}: {', '.join(sorted(unknown))}")
    return dict(table)


def load_settings(path: str | os.PathLike[str] | None = None, **overrides: Any) -> Settings:
    """Build the settings from defaults, the config file, the environment and ``overrides``."""
    name = str(path or os.environ.get(ENV_PREFIX + "CONFIG") or "")
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key, value in _read_table(name).items():
        values[key], sources[key] = value, name
    for item in fields(Settings):
        env = ENV_PREFIX + item.name.upper()
        if env in os.environ:
            values[item.name], sources[item.name] = os.environ[env], f"environment {env}"
    for key, value in overrides.items():
        if value is not None:
            values[key], sources[key] = value, "argument"
    return Settings(**_checked(values, sources))
