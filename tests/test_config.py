"""The example config lists every setting with its default."""

from __future__ import annotations

import tomllib
from dataclasses import fields
from pathlib import Path

import pytest

from pbmserv.config import Settings, load_settings

EXAMPLE = Path(__file__).resolve().parent.parent / "deploy" / "pbmserv.toml.example"


def test_example_lists_every_setting_with_its_default():
    data = tomllib.loads(EXAMPLE.read_text())["pbmserv"]
    assert set(data) == {f.name for f in fields(Settings)}
    assert load_settings(EXAMPLE) == Settings()


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
