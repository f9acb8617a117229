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


def test_a_wrong_value_in_the_file_names_the_file(tmp_path):
    config = tmp_path / "pbmserv.toml"
    config.write_text('[pbmserv]\nmax_recipients = "many"\n')
    with pytest.raises(SettingsError, match=f"max_recipients \\({config}\\)"):
        load_settings(config)


def test_the_shell_reports_a_wrong_setting_with_status_78(monkeypatch, capsys):
    """A configuration error is no usage error (2) of the command line: EX_CONFIG."""
    from pbmserv.cli.main import main

    monkeypatch.setenv("PBMSERV_LISTEN_PORT", "twenty")
    assert main(["help"]) == 78
    assert "PBMSERV_LISTEN_PORT" in capsys.readouterr().err
