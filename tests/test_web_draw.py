"""The SVG drawings against the engines' positions: pieces, flags, levels, open cells, stun,
coordinates; and the page template that turns them into escaped inline SVG."""

from __future__ import annotations

import re

from pbmserv.games import get_game
from pbmserv.games.polis import PolisPosition
from pbmserv.web.app import environment
from pbmserv.web.draw import Drawing, Shape, draw


def groups(drawing: Drawing, kind: str) -> list[Shape]:
    return [s for s in drawing.shapes if s.tag == "g" and kind in str(s.attrs["class"]).split()]


def coords(drawing: Drawing) -> list[str]:
    return [s.text for s in drawing.shapes if s.attrs.get("class") == "coord"]


def svg(drawing: Drawing) -> str:
    return (
        environment()
        .from_string('{% from "macros.html.j2" import svg %}{{ svg(d) }}')
        .render(d=drawing)
    )


def test_ploy_pieces_with_their_flags_and_coordinates():
    position = get_game("ploy").new(2)
    drawing = draw(position)
    assert drawing is not None
    pieces = groups(drawing, "piece")
    assert len(pieces) == 30
    commander = next(p for p in pieces if p.attrs["data-square"] == "e1")
    assert commander.title.startswith("green commander on e1")
    flags = [c for c in commander.children if c.attrs.get("class") == "flag"]
    assert len(flags) == 4  # the commander's four flags
    assert [c.text for c in commander.children if c.tag == "text"] == ["C"]
    assert sorted(set(coords(drawing))) == sorted(set("abcdefghi") | {str(n) for n in range(1, 10)})
    assert coords(drawing).count("a") == 2  # above and below, as in the mail
    shield = next(p for p in pieces if p.attrs["data-square"] == "e3")
    assert "shield" in shield.title
    assert len([c for c in shield.children if c.attrs.get("class") == "flag"]) == 1
    four = draw(get_game("ploy").new(4))
    assert {str(g.attrs["class"]).split()[1] for g in groups(four, "piece")} == {
        "army-green",
        "army-red",
        "army-yellow",
        "army-blue",
    }


def test_pylon_marbles_stack_in_levels():
    position = get_game("pylon").new(2, {"size": 3})
    for move in ("a1", "c1", "c3"):
        position.push_text(move)
    drawing = draw(position)
    assert drawing is not None
    assert len(groups(drawing, "marble")) == 3
    assert len([s for s in drawing.shapes if s.attrs.get("class") == "point"]) == 9 - 3
    position.push_text("a3")  # the four under b2 are full: the engine puts x's marble on b2
    drawing = draw(position)
    assert drawing is not None
    assert len(groups(drawing, "marble")) == 5
    top = groups(drawing, "level-1")
    assert len(top) == 1 and top[0].attrs["data-point"] == "b2"
    assert top[0].title == "x marble on b2, level 1"
    assert "seat-1" in str(top[0].attrs["class"])
    assert [c.text for c in top[0].children if c.tag == "text"] == ["1"]
    assert drawing.shapes[-1] is top[0]  # drawn last: it covers the four below
    assert sorted(set(coords(drawing))) == ["1", "2", "3", "4", "5", "a", "b", "c", "d", "e"]
    other = get_game("pylon").new(2, {"size": 3})
    for move in ("a1", "c1", "a3", "c3"):  # no capture: b2 stays empty and playable
        other.push_text(move)
    drawing = draw(other)
    assert drawing is not None
    assert len([s for s in drawing.shapes if s.attrs.get("class") == "open"]) == 1


def test_plotto_is_laid_out_from_the_engine_cells():
    position = get_game("plotto").new(2)
    drawing = draw(position)
    assert drawing is not None
    assert not groups(drawing, "piece") and len(groups(drawing, "open")) == 1
    for text in ("a1", "a2", "b3", "a4"):
        moves = {position.format_move(m) for m in position.legal_moves()}
        move = next(m for m in sorted(moves) if m[-1] == text[-1])
        position.push_text(move)
    drawing = draw(position)
    assert drawing is not None
    pieces = groups(drawing, "piece")
    assert sorted(p.title for p in pieces) == [
        "piece 1",
        "piece 2",
        "piece 3 (neutral)",
        "piece 4 (neutral)",
    ]
    labels = [g.attrs["data-label"] for g in groups(drawing, "open")]
    assert labels == [chr(97 + i) for i in range(len(position.order()))]
    # the column ruler numbers every hex column, as the mail's does
    columns = {int(c) for c in coords(drawing)}
    assert columns == set(range(1, max(columns) + 1))


def test_polis_board_stun_and_last_move():
    start = draw(get_game("polis").new(2))
    assert start is not None and len(groups(start, "piece")) == 32
    assert len([s for s in start.shapes if "square" in str(s.attrs.get("class"))]) == 64
    empty = "........"
    position = PolisPosition.from_diagram(
        [empty, empty, empty, ".......b", "....rBr.", empty, empty, "R......."]
    )
    drawing = draw(position)
    assert drawing is not None
    chariot = next(g for g in groups(drawing, "chariot") if g.attrs["data-square"] == "f4")
    assert chariot.title == "blue chariot on f4 (stunned)"
    assert any(c.attrs.get("class") == "stun" for c in chariot.children)
    position.push_text("h5-h4")
    drawing = draw(position)
    assert drawing is not None
    last = [s for s in drawing.shapes if "last" in str(s.attrs.get("class")).split()]
    assert len(last) == 2


def test_the_svg_is_escaped_and_has_no_inline_style():
    drawing = Drawing(10, 10, 'x"><script>', [Shape("text", {"class": 'a"b'}, text="<i>&")])
    out = svg(drawing)
    assert "<script>" not in out and "<i>" not in out
    assert 'aria-label="x&#34;&gt;&lt;script&gt;"' in out
    assert 'class="a&#34;b"' in out and "&lt;i&gt;&amp;" in out
    real = svg(draw(get_game("ploy").new(2)))  # type: ignore[arg-type]
    assert "style" not in real and re.search(r"<title>green commander on e1", real)
