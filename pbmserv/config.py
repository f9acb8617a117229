"""Settings: defaults, then a TOML file (``--config`` or ``PBMSERV_CONFIG``), then environment.

Every setting is listed in ``deploy/pbmserv.toml.example`` with its default, and every setting
can also be given as the environment variable ``PBMSERV_<NAME>`` (``PBMSERV_LISTEN_PORT=2526``;
lists as ``a,b``).  pydantic-settings checks every value: a wrong one is a :class:`SettingsError`
that names the setting, where it came from and what is expected.  There is no global settings
object: the CLI loads one :class:`Settings` and passes it down.
"""

from __future__ import annotations

import os
import tomllib
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any

from pydantic import ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from pbmserv.clock import Clock, make_clock, parse_instant

CommaList = Annotated[list[str], NoDecode]  # "a,b" in the environment, a list in TOML


class SettingsError(ValueError):
    """A setting is unknown or has a value of the wrong kind."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PBMSERV_", extra="forbid")

    data_dir: Path = Path("data")
    database_url: str = ""  # empty: sqlite file <data_dir>/pbmserv.sqlite3
    server_name: str = "pbmserv"
    server_address: str = "pbmserv@localhost"  # From: of every mail we send
    mail_domain: str = "localhost"
    # SMTP/LMTP listener
    listen_host: str = "127.0.0.1"
    listen_port: int = 2525
    lmtp: bool = False
    accept_recipients: CommaList = ["pbmserv@localhost"]
    max_message_bytes: int = 1_000_000
    max_recipients: int = 20
    smtp_timeout: int = 300
    max_commands_per_mail: int = 10
    max_answers_per_day: int = 50
    # outbound delivery: "maildir" (default) or "smtp"
    outbox: str = "maildir"
    maildir: Path = Path("")  # empty: <data_dir>/Maildir
    relay_host: str = "127.0.0.1"
    relay_port: int = 25
    relay_starttls: bool = False
    relay_username: str = ""
    relay_password: str = ""
    # accounts
    admins: CommaList = []
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

    @field_validator("accept_recipients", "admins", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value

    @field_validator("outbox")
    @classmethod
    def _outbox(cls, value: str) -> str:
        if value not in ("maildir", "smtp"):
            raise ValueError(f"outbox must be 'maildir' or 'smtp', not {value!r}")
        return value

    @field_validator("now")
    @classmethod
    def _instant(cls, value: str) -> str:
        if value:
            parse_instant(value)  # ValueError names the expected form
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only the arguments: :func:`load_settings` adds the environment and the file, so that
        ``Settings(...)`` in a test means exactly what it says."""
        return (init_settings,)

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


class _TableSource(PydanticBaseSettingsSource):
    """Values read from the config file, below the environment."""

    def __init__(self, settings_cls: type[BaseSettings], table: dict[str, Any]) -> None:
        super().__init__(settings_cls)
        self.table = table

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return self.table.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self.table)


def _read_table(path: str) -> dict[str, Any]:
    """The ``[pbmserv]`` table of a TOML file (or the whole file); unknown keys are an error."""
    if not path:
        return {}
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    table = data.get("pbmserv", data)
    unknown = set(table) - set(Settings.model_fields)
    if unknown:
        raise SettingsError(f"unknown settings in {path}: {', '.join(sorted(unknown))}")
    return dict(table)


def _explain(exc: ValidationError, path: str) -> SettingsError:
    problems = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"])
        env = f"PBMSERV_{name.upper()}"
        where = f"environment {env}" if env in os.environ else (path or "argument")
        problems.append(f"{name} ({where}): {error['msg']}, got {error.get('input')!r}")
    return SettingsError("invalid settings: " + "; ".join(problems))


def load_settings(path: str | os.PathLike[str] | None = None, **overrides: Any) -> Settings:
    """Build the settings from defaults, the config file, the environment and ``overrides``."""
    name = str(path or os.environ.get("PBMSERV_CONFIG") or "")
    table = _read_table(name)

    class FromFile(Settings):
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            return (init_settings, env_settings, _TableSource(settings_cls, table))

    try:
        loaded = FromFile(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        raise _explain(exc, name) from None
    return Settings.model_construct(**loaded.model_dump())
