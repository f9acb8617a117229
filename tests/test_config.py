"""Settings: the example config lists every setting with its default; every setting also comes
from the environment (PBMSERV_<NAME>), checked, with an error that names it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pbmserv.config import Settings, SettingsError, load_settings

EXAMPLE = Path(__file__).resolve().parent.parent / "deploy" / "pbmserv.toml.example"


def test_example_lists_every_setting_with_its_default():
    """All but data_dir, which is absolute there: an operator command run from another
    directory than the server's would otherwise look for the store in the wrong place."""
    data = tomllib.loads(EXAMPLE.read_text())["pbmserv"]
    assert set(data) == set(Settings.defaults())
    assert load_settings(EXAMPLE) == Settings(data_dir=Path("/var/lib/pbmserv/data"))


def test_environment_and_unknown_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("PBMSERV_DATABASE_URL", "postgresql+psycopg://x@/y")
    monkeypatch.setenv("PBMSERV_ADMINS", "alice,bob")
    settings = load_settings()
    assert settings.url == "postgresql+psycopg://x@/y"
    assert settings.admins == ["alice", "bob"]
    bad = tmp_path / "bad.toml"
    bad.write_text("[pbmserv]\nnosuch = 1\n")
    with pytest.raises(ValueError, match="nosuch"):
        load_settings(bad)


SAMPLES = {
    "data_dir": ("/srv/pbm", Path("/srv/pbm")),
    "listen_port": ("2600", 2600),
    "lmtp": ("true", True),
    "accept_recipients": ("a@x.org, b@x.org", ["a@x.org", "b@x.org"]),
    "nag_days": ("2.5", 2.5),
    "outbox": ("smtp", "smtp"),
    "relay_password": ("s3cret", "s3cret"),
    "now": ("2026-11-01T12:00:00+00:00", "2026-11-01T12:00:00+00:00"),
    "web_base_url": ("https://pbm.example.org", "https://pbm.example.org"),
}


@pytest.mark.parametrize("name", sorted(Settings.defaults()))
def test_every_setting_comes_from_the_environment(name, monkeypatch):
    default = Settings.defaults()[name]
    text, value = SAMPLES.get(name, (None, None))
    if text is None:  # a value of the setting's own kind that is not its default
        if isinstance(default, bool):
            text, value = str(not default).lower(), not default
        elif isinstance(default, int | float):
            text, value = str(default + 7), default + 7
        elif isinstance(default, list):
            text, value = "x,y", ["x", "y"]
        elif isinstance(default, Path):
            text, value = "elsewhere", Path("elsewhere")
        else:
            text, value = "changed", "changed"
    monkeypatch.setenv(f"PBMSERV_{name.upper()}", text)
    assert getattr(load_settings(), name) == value


def test_the_environment_beats_the_file_and_arguments_beat_both(tmp_path, monkeypatch):
    config = tmp_path / "pbmserv.toml"
    config.write_text('[pbmserv]\nlisten_port = 2700\nserver_name = "from-file"\n')
    monkeypatch.setenv("PBMSERV_CONFIG", str(config))
    assert load_settings().listen_port == 2700
    monkeypatch.setenv("PBMSERV_LISTEN_PORT", "2800")
    settings = load_settings()
    assert (settings.listen_port, settings.server_name) == (2800, "from-file")
    assert load_settings(listen_port=2900).listen_port == 2900


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("PBMSERV_LISTEN_PORT", "twenty", "listen_port (environment PBMSERV_LISTEN_PORT)"),
        ("PBMSERV_LMTP", "perhaps", "lmtp (environment PBMSERV_LMTP)"),
        ("PBMSERV_OUTBOX", "pigeon", "outbox must be 'maildir' or 'smtp'"),
        ("PBMSERV_NOW", "tomorrow", "now (environment PBMSERV_NOW): Value error, not an ISO-8601"),
    ],
)
def test_a_wrong_value_is_a_clear_error(variable, value, message, monkeypatch):
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_settings()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("javascript:alert(1)", "must be an absolute http or https URL"),
        ("games.example.org", "must be an absolute http or https URL"),
        ("ftp://games.example.org", "must be an absolute http or https URL"),
        ("https://", "must be an absolute http or https URL"),
        ("https://games.example.org:port", "must be an absolute http or https URL"),
        ("https://me:secret@games.example.org", "must be an absolute http or https URL"),
        ("https://games.example.org ", "has spaces around it"),
        ("https://host/pbm", "must be the root of a host, with no path"),
        ("https://host/pbm/", "serve them at the root of a host of their own"),
        ("https://host/?x=1", "must be the root of a host"),
    ],
)
def test_web_base_url_is_an_http_url_of_the_root_of_a_host(value, message, monkeypatch, tmp_path):
    """Anything was taken and mailed as the link of every board (``javascript:alert(1)``, a
    name with no scheme), and a path prefix gave pages whose root-absolute links broke."""
    monkeypatch.setenv("PBMSERV_WEB_BASE_URL", value)
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert "web_base_url (environment PBMSERV_WEB_BASE_URL): Value error" in str(raised.value)
    assert message in str(raised.value)
    config = tmp_path / "pbmserv.toml"
    config.write_text(f'[pbmserv]\nweb_base_url = "{value}"\n')
    monkeypatch.delenv("PBMSERV_WEB_BASE_URL")
    with pytest.raises(SettingsError, match="web_base_url"):
        load_settings(config)
    for good in ("", "https://games.example.org", "http://127.0.0.1:8080/", "https://[::1]:81"):
        assert Settings(web_base_url=good).web_base_url == good


def test_a_wrong_value_in_the_file_names_the_file(tmp_path):
    config = tmp_path / "pbmserv.toml"
    config.write_text('[pbmserv]\nmax_recipients = "many"\n')
    with pytest.raises(SettingsError, match=f"max_recipients \\({config}\\)"):
        load_settings(config)


def test_a_wrong_secret_setting_is_named_but_not_repeated(tmp_path):
    """A relay password written as a number is a wrong type: the error must not print it."""
    config = tmp_path / "pbmserv.toml"
    config.write_text("[pbmserv]\nrelay_password = 12345\ndatabase_url = 7\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(config)
    assert "relay_password" in str(caught.value) and "database_url" in str(caught.value)
    assert "12345" not in str(caught.value) and "got 7" not in str(caught.value)


def test_the_shell_reports_a_wrong_setting_with_status_78(monkeypatch, capsys):
    """A configuration error is no usage error (2) of the command line: EX_CONFIG."""
    from pbmserv.cli.main import main

    monkeypatch.setenv("PBMSERV_LISTEN_PORT", "twenty")
    assert main(["help"]) == 78
    assert "PBMSERV_LISTEN_PORT" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "PBMSERV_LISTEN_PORT",
            "-5",
            "listen_port (environment PBMSERV_LISTEN_PORT): Value "
            "error, must be from 1 to 65535, got '-5'",
        ),
        ("PBMSERV_LISTEN_PORT", "0", "must be from 1 to 65535"),
        (
            "PBMSERV_WEB_PORT",
            "99999",
            "web_port (environment PBMSERV_WEB_PORT): Value error, must be from 0 to 65535",
        ),
        ("PBMSERV_RELAY_PORT", "70000", "relay_port"),
        (
            "PBMSERV_WORKERS",
            "-3",
            "workers (environment PBMSERV_WORKERS): Value error, must be 0 or more",
        ),
        ("PBMSERV_MAX_RECIPIENTS", "0", "max_recipients"),
        (
            "PBMSERV_NAG_DAYS",
            "0",
            "nag_days (environment PBMSERV_NAG_DAYS): Value error, must be more than 0",
        ),
        ("PBMSERV_FORFEIT_DAYS", "nan", "forfeit_days"),
        ("PBMSERV_INBOX_RETENTION_DAYS", "-1", "inbox_retention_days"),
        ("PBMSERV_ARGON2_MEMORY_KIB", "4", "argon2_memory_kib"),
    ],
)
def test_a_value_out_of_range_is_a_clear_error(variable, value, message, monkeypatch):
    """Only the type was checked: a port of -5 or 99999 was a traceback at bind, and
    ``workers = -3`` was taken."""
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert message in str(raised.value)


def test_the_ranges_keep_what_is_documented(tmp_path):
    assert load_settings(web_port=0, workers=0, max_stranger_answers_per_day=0).web_port == 0
    config = tmp_path / "pbmserv.toml"
    config.write_text("[pbmserv]\nworkers = -3\n")
    with pytest.raises(SettingsError, match=f"workers \\({config}\\): Value error"):
        load_settings(config)
    with pytest.raises(SettingsError, match="smtp_timeout"):
        Settings(smtp_timeout=0)


def test_a_misspelt_variable_or_another_table_is_warned_of(tmp_path, monkeypatch, capsys):
    """``PBMSERV_LISTEN_PROT`` was silently ignored, and so was a table but ``[pbmserv]``."""
    monkeypatch.setenv("PBMSERV_LISTEN_PROT", "2600")
    for used in ("PBMSERV_PASSWORD", "PBMSERV_TEST_DATABASE_URL", "PBMSERV_UPDATE_GOLDEN"):
        monkeypatch.setenv(used, "x")
    config = tmp_path / "pbmserv.toml"
    config.write_text("listen_port = 2700\n[pbmserv]\nworkers = 2\n[pbmsrv]\nworkers = 3\n")
    monkeypatch.setenv("PBMSERV_CONFIG", str(config))
    settings = load_settings()
    assert (settings.listen_port, settings.workers) == (2525, 2)
    assert capsys.readouterr().err.splitlines() == [
        f"pbmserv: warning: {config}: only the table [pbmserv] is read; ignored: listen_port, "
        "[pbmsrv]",
        "pbmserv: warning: the environment variable PBMSERV_LISTEN_PROT is no pbmserv setting, "
        "ignored (did you mean PBMSERV_LISTEN_PORT?)",
    ]
