"""HTML to plain text, as a reader of the mail sees it, in time linear in its size.

html.parser looks for the end of a tag, comment or marked section that has none up to the end
of the mail, once for each: its time grew with the square of their number (200 KB of "<a"
took 44 s, 1 MB of "<!--a>" 380 s).  So the markup is read first here (:func:`markup_read`),
once from start to end: html.parser is given only tags that end, and no comment, declaration
or marked section at all.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from pbmserv.commands.grammar import split_words

# ``white-space: pre`` (and ``pre-wrap``, ``pre-line``) keep line breaks as ``<pre>`` does
_PRE_STYLE = re.compile(r"white-space\s*:\s*pre", re.I)
_VERBATIM = "\x01"  # marks the text of a line inside ``<pre>``: its blanks are kept


class _HtmlToText(HTMLParser):
    """Plain text from HTML: scripts and styles dropped, blocks on lines, quotes marked."""

    BLOCKS = frozenset(
        {
            "p",
            "div",
            "br",
            "tr",
            "li",
            "ul",
            "ol",
            "table",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "pre",
            "hr",
            "dt",
            "dd",
            "section",
            "article",
            "header",
            "footer",
        }  # fmt: skip
    )
    # (and what a browser never shows: an iframe's, noembed's and noframes' text)
    SKIP = frozenset({"script", "style", "head", "title", "template", "noscript"})
    SKIP |= {"iframe", "noembed", "noframes"}
    VOID = frozenset(
        {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}
        | {"track", "wbr"}
    )  # (elements without an end tag)

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0
        # every open element, and whether it keeps its text's line breaks and blanks (<pre>,
        # white-space:pre): an end tag closes its own element only, never an outer one.  The
        # positions of each name and the count of verbatim ones keep every tag O(1) amortised
        # (a hostile mail of 60,000 nested tags and 60,000 stray end tags took 58 s)
        self.open: list[tuple[str, bool]] = []
        self.where: dict[str, list[int]] = {}
        self.verbatim = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skip += 1
            return
        if tag not in self.VOID:
            verbatim = tag == "pre" or bool(_PRE_STYLE.search(dict(attrs).get("style") or ""))
            self.where.setdefault(tag, []).append(len(self.open))
            self.open.append((tag, verbatim))
            self.verbatim += verbatim
        if tag == "blockquote":
            self.parts.append("\n\x00+\n")
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        opened = self.where.get(tag)
        if opened:  # close it, and what was left open inside it
            start = opened[-1]
            while len(self.open) > start:
                name, verbatim = self.open.pop()
                self.where[name].pop()
                self.verbatim -= verbatim
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "blockquote":
            self.parts.append("\n\x00-\n")
        elif tag in self.BLOCKS and tag != "br":
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        data = data.replace(_VERBATIM, "")
        if self.verbatim:  # a board, a command per line: its lines stay lines, its columns too
            lines = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            self.parts.append("\n".join(_VERBATIM + line.expandtabs() for line in lines))
        else:
            self.parts.append(re.sub(r"\s+", " ", data))

    def text(self) -> str:
        depth = 0
        lines: list[str] = []
        for raw in "".join(self.parts).split("\n"):
            if raw == "\x00+":
                depth += 1
                continue
            if raw == "\x00-":
                depth = max(0, depth - 1)
                continue
            if _VERBATIM in raw:
                line = raw.replace(_VERBATIM, "").rstrip()
                line = line if line.strip() else ""
            else:
                line = " ".join(split_words(raw))
            if line and depth:
                line = "> " * depth + line
            if line or (lines and lines[-1]):
                lines.append(line)
        return "\n".join(lines).strip("\n")


# A comment ends at "-->" or "--!>", and one that never ends runs to the end of the text, as
# browsers read them (html.parser's "-- >" ended one, and showed the rest of it, a command
# the reader never saw); "<!-->" and "<!--->" are empty ones.  A marked section
# ("<![CDATA[ ... ]]>", Word's "<![if ...]>") ends as html.parser ends it; any other "<!" or
# "<?" at its first ">".
_COMMENT_END = re.compile(r"--!?>")
_SECTION = re.compile(r"<!\[\s*([a-zA-Z][-_.a-zA-Z0-9]*)?")
_SECTION_ENDS = {"cdata": re.compile(r"\]\s*\]\s*>"), "if": re.compile(r"\]\s*>")}
_SECTIONS = {"temp": "cdata", "ignore": "cdata", "include": "cdata", "rcdata": "cdata"}
_SECTIONS |= {"else": "if", "endif": "if", "cdata": "cdata", "if": "if"}
# in a tag, outside a quoted value: its end, a "<" (no tag: text), or a quoted value's start
_IN_TAG = re.compile(r"[<>]|=\s*([\"'])")
_TAG_START = re.compile(r"</?[a-zA-Z]|</")
_RAW_TEXT = re.compile(r"<(script|style)[\s/>]", re.I)  # (html.parser's CDATA content)
_OUT, _DOUBLE, _SINGLE = 0, 1, 2


class _Next:
    """The first match of ``pattern`` starting at or after a position, for positions that
    only grow: each part of the text is searched once."""

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self.text, self.pattern = text, pattern
        self.found: re.Match[str] | None = None
        self.searched = -1  # the position the last search started from
        self.none = False  # no match from self.searched on

    def at_or_after(self, pos: int) -> re.Match[str] | None:
        if self.none and pos >= self.searched:
            return None
        if self.found is not None and self.found.start() >= pos:
            return self.found
        self.searched = pos
        self.found = self.pattern.search(self.text, pos)
        self.none = self.found is None
        return self.found


class _Markup:
    """One pass over an HTML text: see :func:`markup_read`."""

    def __init__(self, html: str) -> None:
        self.html = html
        self.out: list[str] = []
        self.comment_ends = _Next(html, _COMMENT_END)
        self.section_ends = {kind: _Next(html, end) for kind, end in _SECTION_ENDS.items()}
        self.closes = _Next(html, re.compile(">"))
        self.raw_ends = {
            name: _Next(html, re.compile(rf"</{name}(?=[\s/>])[^<>]*>", re.I))
            for name in ("script", "style")
        }
        # (position, state) where the reading of a tag that never ended has been: another
        # reading that gets there in the same state goes on alike, and never ends either
        self.failed = bytearray(3 * (len(html) + 2))

    def read(self) -> str:
        html, pos = self.html, 0
        while (i := html.find("<", pos)) >= 0:
            self.out.append(html[pos:i])
            end = self._markup_end(i)
            if end is None:  # no markup, or one that never ends: text
                self.out.append("&lt;")
                pos = i + 1
            else:
                pos = end
        self.out.append(html[pos:])
        return "".join(self.out)

    def _markup_end(self, i: int) -> int | None:
        """Where the markup starting at ``i`` ends (what it keeps is in ``self.out``)."""
        html = self.html
        if html.startswith("<!--", i):
            if html.startswith(">", i + 4) or html.startswith("->", i + 4):
                return i + 5 + (html[i + 4] == "-")
            found = self.comment_ends.at_or_after(i + 4)
            return len(html) if found is None else found.end()
        if html.startswith("<![", i):
            name = _SECTION.match(html, i)
            kind = _SECTIONS.get(((name and name.group(1)) or "").lower())
            found = (
                self.section_ends[kind].at_or_after(i + 3) if kind else self.closes.at_or_after(i)
            )
            return None if found is None else found.end()
        if html.startswith(("<!", "<?"), i):  # a declaration, a processing instruction
            found = self.closes.at_or_after(i)
            return None if found is None else found.end()
        if _TAG_START.match(html, i) is None:
            return None
        end = self._tag_end(i)
        if end is None:
            return None
        # html.parser is given the tag with its quoted values' "<" and ">" as references
        self.out.append("<" + html[i + 1 : end - 1].replace("<", "&lt;").replace(">", "&gt;") + ">")
        raw = _RAW_TEXT.match(html, i)
        if (
            raw is not None and html[end - 2] != "/"
        ):  # a script or style: its text up to its end tag is no markup
            close = self.raw_ends[raw.group(1).lower()].at_or_after(end)
            stop = len(html) if close is None else close.start()
            self.out.append(html[end:stop].replace("<", "&lt;"))
            return stop if close is None else self._raw_close(close)
        return end

    def _raw_close(self, close: re.Match[str]) -> int:
        self.out.append(close.group())
        return close.end()

    def _tag_end(self, i: int) -> int | None:
        """The end of the tag starting at ``i`` (past its ">"), or None when a "<" outside a
        quoted value, or the end of the text, comes first."""
        html, failed = self.html, self.failed
        pos, state, passed = i + 1, _OUT, []
        while True:
            key = pos * 3 + state
            if failed[key]:
                break
            passed.append(key)
            if state == _OUT:
                found = _IN_TAG.search(html, pos)
                if found is None or found.group() == "<":
                    break
                if found.group() == ">":
                    return found.end()
                pos, state = found.end(), _DOUBLE if found.group(1) == '"' else _SINGLE
            else:
                close = html.find('"' if state == _DOUBLE else "'", pos)
                if close < 0:
                    break
                pos, state = close + 1, _OUT
        for key in passed:
            failed[key] = 1
        return None


def markup_read(html: str) -> str:
    """``html`` as html.parser is given it, read once in linear time: comments, declarations,
    processing instructions and marked sections that end are dropped (none is shown); a tag's
    quoted values may hold "<" and ">"; a script's or style's text is no markup; a comment
    without its end hides the rest, as in a browser; the start of other markup that never ends
    (a "<" before a tag's ">") is text."""
    return _Markup(html).read()


def html_to_text(html: str) -> str:
    """Readable plain text from an HTML body (stdlib only)."""
    parser = _HtmlToText()
    html = markup_read(html)
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # noqa: BLE001 - html.parser is lenient, but never fail a mail on it
        return re.sub(r"<[^>]*>", " ", html)
    return parser.text()
