"""``format=flowed`` text (RFC 3676) unwrapped into its logical lines.

Thunderbird and Apple Mail send plain text flowed: a long line is cut into lines that end in
a space (soft line breaks).  Read line by line, a soft-wrapped command lost its tail: a
challenge without its last options (a rated game), a move without its move.  This is the
RFC's decoding, section 4: quote depth (leading ``>``), space-stuffing, the signature
separator ``-- `` (never flowed), ``DelSp=yes`` (the soft break's space was added, and goes).
No maintained library does it (``formatflowed`` was last released in 2016).

>>> unflow("ploy challenge carol erin \\n--unrated\\n> old \\n> text\\n")
'ploy challenge carol erin --unrated\\n> old text\\n'
"""

from __future__ import annotations

import re

_QUOTES = re.compile(r"^>+")


def _split(line: str) -> tuple[int, str]:
    """A physical line's quote depth and its text, space-stuffing removed (RFC 3676, 4.5)."""
    quotes = _QUOTES.match(line)
    depth = len(quotes.group()) if quotes else 0
    text = line[depth:]
    return depth, text[1:] if text.startswith(" ") else text


def unflow(text: str, delsp: bool = False) -> str:
    """The logical lines of flowed ``text``: each run of lines ending in a space (of the same
    quote depth) joined into one, quoted lines written back as ``> `` per level."""
    if not text:
        return text
    lines = text.replace("\r\n", "\n").split("\n")
    end = lines.pop() if lines and lines[-1] == "" else None  # the text's last line break
    out: list[str] = []
    joined: str | None = None  # the logical line being joined, and its depth
    depth_joined = 0
    for line in lines:
        depth, body = _split(line)
        if joined is not None and depth != depth_joined:  # improperly flowed: ends here
            out.append(_write(depth_joined, joined))
            joined = None
        if body == "-- " and joined is not None:  # the signature starts a line of its own,
            out.append(_write(depth_joined, joined))  # even after a soft break (what follows
            joined = None  # it is never read as the mail's text)
        flowed = body.endswith(" ") and body != "-- "
        if flowed and delsp:
            body = body[:-1]
        joined = body if joined is None else joined + body
        depth_joined = depth
        if not flowed:
            out.append(_write(depth, joined))
            joined = None
    if joined is not None:
        out.append(_write(depth_joined, joined))
    return "\n".join(out) + ("\n" if end is not None else "")


def _write(depth: int, text: str) -> str:
    return ">" * depth + (" " if depth and text else "") + text
