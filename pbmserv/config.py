"""Settings: defaults, then a TOML file (``--config`` or ``PBMSERV_CONFIG``), then environment.

Every setting is listed in ``deploy/pbmserv.toml.example`` with its default, and every setting
can also be given as the environment variable ``PBMSERV_<NAME>`` (``PBMSERV_LISTEN_PORT=2526``;
lists as ``a,b``).  Every value is checked against the type of its field and the range that
means something (:data:`RANGES`): a wrong one is a :class:`SettingsError` that names the
setting, where it came from and what is expected.  A ``PBMSERV_`` variable that is no setting
(a misspelt one) and the parts of the file outside ``[pbmserv]`` are ignored, with a warning
on stderr.  (This
is a plain dataclass, not pydantic-settings: importing pydantic cost a shell command more than
the rest of its work.)  There is no global settings
object: the CLI loads one :class:`Settings` and passes it down.
"""

from __future__ import annotations

import os
import sys
import tomllib
from dataclasses import MISSING, dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pbmserv.clock import Clock, make_clock, parse_instant

ENV_PREFIX = "PBMSERV_"
TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
FALSE = frozenset({"0", "false", "f", "no", "n", "off"})
# PBMSERV_ variables that are read but are no settings (the rest are misspelt settings)
NOT_SETTINGS = frozenset({"CONFIG", "PASSWORD", "UPDATE_GOLDEN", "CHROMIUM", "STRESS_MOVES"})
NOT_SETTINGS_PREFIX = "TEST_"  # the test suite's own (PBMSERV_TEST_DATABASE_URL)

# The smallest and largest value that means something (None: no bound); 0 where it is
# documented: web_port 0 is any free port, workers 0 a worker thread, caps 0 "none".
PORT = (1, 65535)
RANGES: dict[str, tuple[float | None, float | None]] = {
    "listen_port": PORT,
    "relay_port": PORT,
    "web_port": (0, 65535),
    "web_request_timeout": (1, 3600),
    "web_max_connections": (1, 100_000),
    "max_message_bytes": (1, None),
    "max_recipients": (1, None),
    "smtp_timeout": (1, None),
    "smtp_max_connections": (1, 100_000),
    "smtp_max_connections_per_host": (1, 100_000),
    "max_commands_per_mail": (1, None),
    "workers": (0, None),
    "max_answers_per_day": (0, None),
    "max_stranger_answers_per_day": (0, None),
    "max_mails_per_recipient_per_day": (0, None),
    "max_challenges_per_day": (0, None),
    "max_signup_addresses": (0, None),
    "max_messages_per_pair_per_day": (0, None),
    "max_messages_per_recipient_per_day": (0, None),
    "token_hours": (1, None),
    "unconfirmed_account_days": (1, None),
    "outbox_lease_minutes": (1, None),
    "inbox_retention_days": (1, None),
    "stale_mail_days": (1, None),
    "argon2_time_cost": (1, None),
    "argon2_memory_kib": (8, None),  # argon2's minimum for one lane
    "auth_slowdown_after": (1, None),
    "auth_lockout_after": (1, None),
    "auth_window_minutes": (1, None),
    "auth_lockout_minutes": (1, None),
    "auth_owner_failures_per_day": (0, None),
    "auth_owner_lockout_minutes": (1, None),
}
POSITIVE = frozenset({"nag_days", "forfeit_days"})  # more than 0


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
    smtp_timeout: int = 300  # seconds a session may wait between two commands, then closed
    # sessions open at once (more are answered 421 and closed): the listener shares the
    # process, and its file descriptors, with the web pages and the store
    smtp_max_connections: int = 100
    # from one client address (Postfix delivers over up to 20 connections by default)
    smtp_max_connections_per_host: int = 20
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
    max_signup_addresses: int = 3  # addresses the signup and change address lines of one mail give
    # mails carrying a player's own text (message, chat) to one address: from one player, and
    # from all players together; capped even for an authenticated player
    max_messages_per_pair_per_day: int = 10
    max_messages_per_recipient_per_day: int = 30
    token_hours: int = 48  # confirmation and password reset codes expire after this
    unconfirmed_account_days: int = 3  # accounts without a confirmed address are then removed
    outbox_lease_minutes: int = 10  # a mail left 'sending' this long by a dead sender is resent
    # processed mails (kept with passwords masked) and the records of sent mails (their texts
    # dropped) are deleted after this
    inbox_retention_days: int = 30
    # a mail dated more than this many days before it came is taken for a replay and not run
    # (its sender is told); mail delayed in queues (Postfix gives up after 5 days) still runs;
    # so is one dated this far after it came, and one with no Date (pbmserv.mail.replay)
    stale_mail_days: int = 14
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
    auth_owner_failures_per_day: int = 20  # from the owner's address; then slowed down...
    auth_owner_lockout_minutes: int = 60  # ...holding it off this long at most (unlock code)
    # clocks
    nag_days: float = 7.0
    forfeit_days: float = 21.0
    # read-only web pages (pbmserv.web), served on listen_host by `pbmserv serve`
    web_enabled: bool = True
    web_port: int = 8080  # 0: any free port
    # empty: http://<listen_host>:<web_port>; used for board mail links; an http(s) URL of the
    # root of a host (the pages cannot be served under a path prefix)
    web_base_url: str = ""
    # seconds a connection has to send a request's head, after it opened or after the last
    # answer (else it is closed), and how many may be open at once (more are closed at once):
    # the pages share the process, and its file descriptors, with the mail gateway
    web_request_timeout: int = 10
    web_max_connections: int = 100
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


SECRET_SETTINGS = frozenset({"relay_password", "database_url"})
"""Settings whose value may hold a password: an error about one never repeats it."""


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
            got = "its value is not shown" if name in SECRET_SETTINGS else f"got {value!r}"
            problems.append(f"{name} ({where}): {exc}, {got}")
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
            return _in_range(name, value)
        if isinstance(value, str):
            try:
                number = int(value.strip())
            except ValueError:
                pass
            else:
                return _in_range(name, number)
        raise ValueError("Input should be a valid integer")
    if kind == "float":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return _in_range(name, float(value))
        if isinstance(value, str):
            try:
                real = float(value.strip())
            except ValueError:
                pass
            else:
                return _in_range(name, real)
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
    if name == "web_base_url" and value:
        _check_base_url(value)
    return value


def _check_base_url(value: str) -> None:
    """``web_base_url`` goes into every board mail as a link: an absolute http(s) URL of the
    root of a host.  The pages link to ``/boards/...`` and ``/static/...`` from the root, so
    behind a proxy under a path prefix they would break: a path is refused, not half served."""
    url = urlsplit(value)
    try:
        host = url.hostname if url.port is None or url.port >= 0 else None
    except ValueError:  # a port that is no number
        host = None
    if url.scheme.lower() not in ("http", "https") or not host or url.username is not None:
        raise ValueError(
            "Value error, web_base_url must be an absolute http or https URL, such as "
            "https://games.example.org, or empty"
        )
    if value != value.strip():
        raise ValueError("Value error, web_base_url has spaces around it")
    if url.path not in ("", "/") or url.query or url.fragment:
        raise ValueError(
            "Value error, web_base_url must be the root of a host, with no path: the pages "
            "link from the root (/boards/..., /static/...), so serve them at the root of a "
            "host of their own (https://pbm.example.org), not under a path prefix"
        )


def _in_range(name: str, value: float) -> Any:
    """``value`` if it means something for setting ``name``; ValueError says what does."""
    if name in POSITIVE and not value > 0:  # (also NaN)
        raise ValueError("Value error, must be more than 0")
    low, high = RANGES.get(name, (None, None))
    if (low is not None and value < low) or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"{low} or more"
        raise ValueError(f"Value error, must be {span}")
    return value


def _warn(text: str) -> None:
    print(f"pbmserv: warning: {text}", file=sys.stderr, flush=True)


def _read_table(path: str) -> dict[str, Any]:
    """The ``[pbmserv]`` table of a TOML file (or the whole file); unknown keys are an error."""
    if not path:
        return {}
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise SettingsError(f"cannot read the config file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise SettingsError(
            f"the config file {path} is not UTF-8 text (line {line}): save it as UTF-8"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"the config file {path} is not valid TOML: {exc}") from None
    table = data.get("pbmserv", data)
    if table is not data:
        ignored = [f"[{key}]" if isinstance(value, dict) else key for key, value in data.items()]
        ignored.remove("[pbmserv]")
        if ignored:
            _warn(f"{path}: only the table [pbmserv] is read; ignored: {', '.join(ignored)}")
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
    _warn_unknown_variables()
    for key, value in overrides.items():
        if value is not None:
            values[key], sources[key] = value, "argument"
    return Settings(**_checked(values, sources))


def _warn_unknown_variables() -> None:
    """A misspelt ``PBMSERV_LISTEN_PROT`` was silently ignored: say so (it is no error, as an
    environment may hold variables for another version of pbmserv)."""
    settings = {ENV_PREFIX + item.name.upper() for item in fields(Settings)}
    for name in sorted(os.environ):
        rest = name.removeprefix(ENV_PREFIX)
        if rest == name or name in settings or rest in NOT_SETTINGS:
            continue
        if rest.startswith(NOT_SETTINGS_PREFIX):
            continue
        from difflib import get_close_matches  # lazy: only for a misspelt variable

        close = get_close_matches(name, sorted(settings), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        _warn(f"the environment variable {name} is no pbmserv setting, ignored{hint}")
