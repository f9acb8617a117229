"""Game records (issue 17, point 5): ``export`` from shell and mail, the versioned JSON record
and its documentation, replay, and the JSON attachment on the last mail of a game."""

from __future__ import annotations

import json
import mailbox
import re
from email import message_from_bytes, policy
from pathlib import Path

import pytest

from pbmserv.domain import record
from pbmserv.mail.sender import deliver_pending, make_sink

DOC = Path(__file__).parent.parent / "docs" / "record-format.md"


def _json_of(body: str) -> dict:
    return json.loads(body[body.index("{") :])


def test_export_text_and_json_from_shell_and_mail(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice d7-e6")
    both = shell.ok("polis export 101")
    assert both.subject == "Polis Board 101 record"
    assert "Players: alice (blue), bob (red)\n" in both.body
    assert "   1. alice        d7-e6\n" in both.body
    data = _json_of(both.body)
    assert [m["move"] for m in data["moves"]] == ["d7-e6"]
    assert data["players"][1] == {"seat": 1, "userid": "bob", "label": "red"}
    by_mail = shell.ok("polis export 101 text", channel="mail", sender="bob@example.org")
    assert "JSON" not in by_mail.body and "Status: active" in by_mail.body
    only_json = shell.ok("polis export 101 json", channel="mail", sender="bob@example.org")
    assert _json_of(only_json.body) == data
    assert shell("polis export 101 pgn").status == 2
    assert shell("polis export 999").status == 1


def test_every_field_of_the_json_record_is_documented(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice d7-e6")
    data = _json_of(shell.ok("polis export 101 json").body)
    doc = DOC.read_text()
    assert f"`version`: {record.VERSION}" in doc
    keys = set(data) | set(data["players"][0]) | set(data["moves"][0])
    for key in keys:
        assert re.search(rf"^\s*- `{key}`", doc, re.M), f"{key} is not documented in {DOC}"


def test_replay_refuses_what_it_cannot_read(shell):
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    data = _json_of(shell.ok("polis export 101 json").body)
    with pytest.raises(record.RecordError):
        record.replay({**data, "format": "pgn"})
    with pytest.raises(record.RecordError):
        record.replay({**data, "version": record.VERSION + 1})
    assert record.replay(data).serialize() == data["position"]


def test_the_last_mail_of_a_game_carries_the_json_record(shell, settings, clock, tmp_path):
    settings.outbox, settings.maildir = "maildir", tmp_path / "Maildir"
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice d7-e6")
    shell.ok("polis move 101 bob pw-bob b2-c3")
    shell.ok("polis resign 101 alice pw-alice")
    assert deliver_pending(shell.sessions, settings, make_sink(settings), clock.now) > 0
    box = mailbox.Maildir(settings.maildir_path)
    mails = [message_from_bytes(box.get_bytes(k), policy=policy.default) for k in box.iterkeys()]
    last = [m for m in mails if m["Subject"] == "Polis Board 101"]
    others = [m for m in mails if m["Subject"] != "Polis Board 101"]
    assert last and others
    assert all(not list(m.iter_attachments()) for m in others)
    for mail in last:
        assert mail.get_content_type() == "multipart/mixed"
        assert "Game won by bob." in mail.get_body(("plain",)).get_content()
        [attachment] = list(mail.iter_attachments())
        assert attachment.get_content_type() == "application/json"
        assert attachment.get_filename() == "polis-101.json"
        data = json.loads(attachment.get_content())
        assert data["status"] == "finished" and data["winners"] == ["bob"]
        assert [m["move"] for m in data["moves"]] == ["d7-e6", "b2-c3", "resign"]
        assert record.replay(data).serialize() == data["position"]


def test_the_text_record_writes_its_times_as_the_board_mails_do(shell):
    """The text record, for people, gave 'Started: 2026-11-01T12:00:00.000003+00:00' (seconds,
    microseconds and offset) where every board mail says '2026-11-01 12:00 UTC'; the JSON
    record keeps the exact time."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob")
    shell.ok("polis move 101 alice pw-alice d7-e6")
    shell.ok("polis move 101 bob pw-bob b2-c3")
    shell.ok("polis resign 101 alice pw-alice")
    text = shell.ok("polis export 101 text").body
    started = re.search(r"^Started: (.*)$", text, re.M)
    finished = re.search(r"^Finished: (.*)$", text, re.M)
    assert started and finished, text
    for when in (started[1], finished[1]):
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", when), when
    data = _json_of(shell.ok("polis export 101 json").body)
    assert data["started"].startswith(started[1][:10] + "T")  # the JSON keeps ISO 8601


def test_the_text_records_result_names_the_players_as_the_board_mail_does(shell):
    """'export' wrote "Result: red resigned" (the engine's reason, by seat colour) where the
    board mail says "alice resigned.": the text record names the players (after a swap, the
    seat's player now); the JSON record keeps the engine's words."""
    shell.signup("alice", "bob")
    shell.ok("polis challenge alice bob -swap")
    shell.ok("polis move 101 alice pw-alice d7-e6")
    shell.ok("polis move 101 bob pw-bob swap")  # bob now plays blue, alice red
    resigned = shell.ok("polis move 101 alice pw-alice resign").body
    assert "alice resigned." in resigned
    export = shell.ok("polis export 101").body
    assert "Result: alice resigned\n" in export
    assert _json_of(export)["result"] == "red resigned"


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        ("blue has no legal move", "alice has no legal move"),
        ("the red chariot reached rank 8", "the red (bob) chariot reached rank 8"),
        ("x and o share the most marbles, 3-3", "bob and alice share the most marbles, 3-3"),
        ("line of four for player 1", "line of four for player 1 (alice)"),
        ("drawn: 100 moves in a row without a capture", None),
    ],
)
def test_a_reason_names_each_seat_by_its_player(reason, said):
    from pbmserv.render.results import named_reason

    seats = {"blue": "alice", "red": "bob", "o": "alice", "x": "bob", "1": "alice"}
    assert named_reason(reason, list(seats.items())) == (said or reason)
