"""One mail in, one answer out: the answers to every command line of a mail, as one text.

A section per command line says what it did or why not; a board is drawn once, in the last
section that shows it (earlier sections say what they did in one line and where the board is);
then the lines that looked like commands but are none, then what was ignored.  Mailman's
replies are the model (results, unprocessed, ignored; the mail itself quoted once).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pbmserv.commands import registry
from pbmserv.commands.dispatch import DONE, Answer
from pbmserv.commands.grammar import mask_unread, split_words
from pbmserv.games import all_games
from pbmserv.render import subjects
from pbmserv.render.templates import fill

RULE = "=" * 72
# lines of the mail quoted back under an error: enough to see what was sent, too few to carry
# a mail's text to any address as ours (its commands and the lines not understood are shown
# apart, whole); a sender no account has confirmed gets none of it (see :func:`assemble`)
QUOTED_LINES = 10
QUOTED_CHARS = 500  # of one line quoted back (a line of 2,000 boards was echoed twice)
# The most text one answer carries (UTF-8 bytes; the mail holds it twice, plain and HTML).  Ten
# boards of a long game (a command shows at most ten) take 30-70 KB; ten commands asking for
# the most could reach a megabyte, and an address nobody confirmed gets five answers a day.
MAX_ANSWER_BYTES = 128 * 1024


def _is_ignored(note: str) -> bool:
    """Parser notes that say something was left out (others only say how it was read)."""
    return "ignored" in note or "left out" in note


def game_word_hint(lines: Sequence[str]) -> str:
    """What a line that starts with a game's command misses (``move 101 alice ...``,
    ``games alice``): the game's name first.  A newcomer who left it out was told only that
    the line was no command.  Only the command word is repeated, never the line."""
    for line in lines:
        words = split_words(line)
        if words and registry.game_command(words[0]):
            verb, names = words[0].lower(), [g.name for g in all_games()]
            return fill(
                f"'{verb}' is a command of each game: write the game's name before it, as in "
                f"'{names[0]} {verb} ...' (the games: {', '.join(names)})."
            )
    return ""


def tail_sections(
    not_understood: Sequence[str],
    notes: Sequence[str],
    mask: Callable[[str], str],
    *,
    hint: bool = True,
) -> str:
    """The closing sections: lines not understood, what was ignored, how the mail was read.

    A line not understood is shown as :func:`pbmserv.commands.grammar.mask_unread` masks it
    (the rule of the mail's kept copy), then by the mail's ``mask`` (its known passwords),
    and with ``hint`` what a game's command without its game misses (:func:`game_word_hint`)."""
    out = ""
    if not_understood:
        out += (
            "\nLines not understood (they look like commands but are none: nothing was\n"
            "done with them, and nobody else sees them):\n"
        )
        out += "".join(f"  {mask(mask_unread(line))}\n" for line in not_understood)
        said = game_word_hint(not_understood) if hint else ""
        out += f"\n{said}\n" if said else ""
    ignored = [n for n in notes if _is_ignored(n)]
    other = [n for n in notes if not _is_ignored(n)]
    if ignored:
        out += "\nIgnored:\n" + "".join(f"  {n}\n" for n in ignored)
    if other:
        out += "\nNotes on reading your mail:\n" + "".join(f"  {n}\n" for n in other)
    return out


def quote_mail(subject: str, text: str, mask: Callable[[str], str]) -> str:
    """The sender's mail, quoted once (its first ``QUOTED_LINES`` lines, a note says how many
    more there were), every password masked (only the lines quoted are masked: masking reads
    each line alone).  A mail with no text is not quoted: its Subject was its command line,
    shown above it, and a heading over nothing read as an answer cut off."""
    if not text.strip():
        return ""
    parts = text.rstrip("\n").split("\n", QUOTED_LINES)
    head = "\n".join(parts[:QUOTED_LINES])
    lines = mask(head).splitlines()[:QUOTED_LINES]
    quoted = "\n".join(("> " + cut_quoted_line(x)).rstrip() for x in lines)
    if len(parts) > QUOTED_LINES:
        quoted += f"\n[{parts[QUOTED_LINES].count(chr(10)) + 1:,} more lines not quoted]"
    head = fill(f"Your mail (Subject: {cut_quoted_line(mask(subject))}):")  # a long one wraps
    return f"{head}\n{quoted}\n"


def cut_quoted_line(line: str) -> str:
    """A line quoted back (masked already), cut after ``QUOTED_CHARS`` characters, with
    ' [...]' where it was cut: the answer to a mail of a few long lines is no longer than the
    mail.

    >>> cut_quoted_line("polis move 101 alice ******** a7-a6")
    'polis move 101 alice ******** a7-a6'
    >>> cut_quoted_line("polis move 101 alice ******** " + "a7-a6 " * 200)[-12:]
    '-a6 a7 [...]'
    """
    return line if len(line) <= QUOTED_CHARS else line[:QUOTED_CHARS] + " [...]"


def _section_body(items: list[Answer], index: int, drawn_in: dict[str, int]) -> str:
    parts = []
    for item in items:
        later = drawn_in.get(item.board or "", index)
        if item.board and later != index and item.summary:
            parts.append(
                f"{fill(item.summary)}\n({item.board} is drawn under command {later + 1}.)\n"
            )
        else:
            parts.append(item.body)
    return "\n".join(parts)


def assemble(
    results: list[tuple[str, list[Answer]]],
    *,
    subject: str,
    text: str,
    not_understood: Sequence[str],
    notes: Sequence[str],
    mask: Callable[[str], str],
    stranger: bool = False,
) -> Answer:
    """The one answer to a mail whose command lines gave ``results`` (line, its answers).

    A refusal quotes the mail's first lines, except to a ``stranger`` (an address no account
    has confirmed): anyone can forge it, and the quote would carry any text (spam) to any
    mailbox as ours.  He is shown his command lines and the lines not understood, as anyone."""
    answers = [a for _, items in results for a in items]
    status = max((a.status for a in answers), default=DONE)
    refused = sum(1 for _, items in results if any(a.status != DONE for a in items))
    if len(results) == 1:
        line, items = results[0]
        body = "\n".join(a.body for a in items)
        if refused:
            body += f"\nYour command was:\n  {cut_quoted_line(mask(line))}\n"
            quoted = "" if stranger else quote_mail(subject, text, mask)
            body += f"\n{quoted}" if quoted else ""
        head = items[0].subject if len(items) == 1 else items[-1].subject
        return Answer(head, body + tail_sections(not_understood, notes, mask), status)
    drawn_in: dict[str, int] = {}
    for index, (_, items) in enumerate(results):
        for item in items:
            if item.board:
                drawn_in[item.board] = index
    count = len(results)
    body = f"Your mail held {count} command lines; here is what each of them did.\n"
    for index, (line, items) in enumerate(results):
        body += f"\n{RULE}\n{index + 1}. {cut_quoted_line(mask(line))}\n{RULE}\n\n"
        body += _section_body(items, index, drawn_in)
    quoted = quote_mail(subject, text, mask) if refused and not stranger else ""
    if quoted:
        body += f"\n{RULE}\n\n" + quoted
    body += tail_sections(not_understood, notes, mask)
    heads = sorted({a.subject for a in answers})
    # one subject when every section is about the same board
    head = heads[0] if len(heads) == 1 else subjects.answers(count, refused)
    return Answer(head, body, status)


def bounded(body: str, most: int | None = None) -> str:
    """``body`` cut at a line's end to at most ``most`` bytes (UTF-8; default
    ``MAX_ANSWER_BYTES``), with a note that says so: whatever a mail asks for, a forged sender
    never makes us mail more than this."""
    most = MAX_ANSWER_BYTES if most is None else most
    data = body.encode("utf-8", "replace")
    if len(data) <= most:
        return body
    note = (
        f"\n[The rest of this answer ({{left:,}} bytes) is left out: an answer carries at most "
        f"{most // 1024} KB. Ask for less in one mail.]\n"
    )
    head = data[: most - len(note) - 16].decode("utf-8", "ignore")  # (the count's digits)
    head = head[: head.rfind("\n") + 1] or head
    left = len(data) - len(head.encode("utf-8", "replace"))
    return head + note.format(left=left)
