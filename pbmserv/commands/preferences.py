"""Account settings about challenges and time: accept, reject, limit, seek, vacation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import click

from pbmserv.commands.common import call_login, whole_number
from pbmserv.commands.common import text as _text
from pbmserv.commands.common import user as _user
from pbmserv.commands.dispatch import Refused, answer
from pbmserv.commands.spec import Arg, Call, Command, Kind
from pbmserv.domain import accounts, clocks, deadlines
from pbmserv.render import subjects
from pbmserv.render.templates import fill
from pbmserv.store.models import User


def _accept(call: Call, accepts: bool) -> None:
    word: subjects.ServerTopic = "accept" if accepts else "reject"
    req, user_id = call.req, call_login(call)
    with req.sessions() as session, session.begin():
        user = _user(session, user_id)
        user.accepts_challenges = accepts
        if not accepts:
            user.seeking = 0
        userid = user.userid
    text = "accepts challenges" if accepts else "does not accept challenges any more"
    answer(call.ctx, subjects.server(word), f"{userid} {text}.\n")


def accept_command(call: Call) -> None:
    _accept(call, True)


def reject_command(call: Call) -> None:
    _accept(call, False)


def _count(word: str, usage: str, *, none_ok: bool) -> int | None:
    if none_ok and word.lower() in ("none", "off", "0"):
        return None
    count = whole_number(word)
    if count is None or count > 1000:
        raise click.UsageError(f"'{word}' is not a number of games; usage: {usage}")
    return count


def limit_command(call: Call) -> None:
    req, usage = call.req, call.usage
    user_id = call_login(call)
    limit = _count(call.args["count"], usage, none_ok=True)
    with req.sessions() as session, session.begin():
        user = _user(session, user_id)
        user.game_limit = limit
        active = accounts.active_games(session, user)
        userid = user.userid
    if limit is None:
        text = f"{userid} takes any number of games (now {active} active)."
    elif active < limit:
        text = f"{userid} takes at most {accounts.active_count(limit)} (now {active} active)."
    else:  # a limit below what he plays ends nothing: it holds off new games
        text = (
            f"{userid} takes at most {accounts.active_count(limit)}. He has {active} active now, "
            "so challenges to him are refused until he is under the limit."
        )
    answer(call.ctx, subjects.server("limit"), fill(text) + "\n")


def seek_command(call: Call) -> None:
    req, usage = call.req, call.usage
    user_id = call_login(call)
    count = _count(call.args["count"], usage, none_ok=False) or 0
    with req.sessions() as session, session.begin():
        user = _user(session, user_id)
        user.seeking = count
        if count:
            user.accepts_challenges = True
        userid, limit = user.userid, user.game_limit
        active = accounts.active_games(session, user)
    text = (
        f"{userid} seeks {count} more game{'' if count == 1 else 's'}: shown in the standings "
        "of every game; each new game counts one off."
        if count
        else f"{userid} seeks no games."
    )
    room = None if limit is None else max(limit - active, 0)
    if count and room is not None and room < count:  # (the limit refuses them in silence)
        held = f"His limit of {accounts.active_count(limit or 0)} ({active} active now)"
        text += (
            f" {held} refuses every challenge until he is under it: raise it with 'limit'."
            if room == 0
            else f" {held} lets only {room} more start for now."
        )
    answer(call.ctx, subjects.server("seek"), fill(text) + "\n")


def vacation_command(call: Call) -> None:
    req, usage = call.req, call.usage
    user_id = call_login(call)
    words = [call.args["days"]] if call.args.get("days") else []
    now = req.now
    allowance = clocks.VACATION_DAYS_PER_YEAR
    with req.sessions() as session, session.begin():
        user = _user(session, user_id)
        current = deadlines.on_vacation(user, now)
        if user.vacation_year != now.year:  # a new year: only what spills into it counts
            user.vacation_year, user.vacation_used = now.year, _used_in(user, now.year)
        if words:
            word = words[0].lower()
            if word != "off":
                try:
                    days = float(word)
                except ValueError:
                    days = 0.0
                if not 0 < days <= allowance:
                    raise click.UsageError(f"give 1 to {allowance} days or 'off'; usage: {usage}")
            if current:  # give back what is left of the running vacation (of this year's)
                assert user.vacation_until is not None
                left = _within(now, user.vacation_until, now.year)
                user.vacation_used = max(0.0, (user.vacation_used or 0.0) - left)
                user.vacation_until = now
            if word == "off" and not current:
                raise Refused(f"{user.userid} is not on vacation")
            if word != "off":
                until = now + timedelta(days=days)
                this_year = _within(now, until, now.year)  # the rest is next year's
                if (user.vacation_used or 0.0) + this_year > allowance + 1e-9:
                    left = allowance - (user.vacation_used or 0.0)
                    raise Refused(
                        f"{user.userid} has {_days(left)} vacation days left in {now.year} "
                        f"(of {allowance})"
                    )
                user.vacation_used = (user.vacation_used or 0.0) + this_year
                user.vacation_until = until
        lines = [_vacation_status(user, now)]
    answer(call.ctx, subjects.server("vacation"), _text(lines))


def _within(start: datetime, end: datetime, year: int) -> float:
    """The days of ``start`` to ``end`` that fall in ``year``: a vacation over New Year counts
    each day in its own year (42 days taken on 25 December counted all in the old year, and
    the new year gave 42 more while it ran on)."""
    first = datetime(year, 1, 1, tzinfo=UTC)
    last = datetime(year + 1, 1, 1, tzinfo=UTC)
    seconds = (min(end, last) - max(start, first)).total_seconds()
    return max(0.0, seconds / deadlines.DAY)


def _used_in(user: User, year: int) -> float:
    """The vacation days ``user`` has used in ``year``: those counted for it, or, for the
    year after the one counted, the days of his last vacation that ran on into it."""
    if user.vacation_year == year:
        return user.vacation_used or 0.0
    if user.vacation_year == year - 1 and user.vacation_until is not None:
        return _within(datetime(year, 1, 1, tzinfo=UTC), user.vacation_until, year)
    return 0.0


def _vacation_status(user: User, now: datetime) -> str:
    allowance = clocks.VACATION_DAYS_PER_YEAR
    used = _used_in(user, now.year)
    if deadlines.on_vacation(user, now):
        assert user.vacation_until is not None
        state = f"{user.userid} is on vacation until {user.vacation_until:%Y-%m-%d %H:%M} UTC"
    elif deadlines.protected(user, now):
        state = f"{user.userid} is back from vacation (no forfeits for {deadlines.GRACE_DAYS} days)"
    else:
        state = f"{user.userid} is not on vacation"
    spill = 0.0
    if deadlines.on_vacation(user, now) and user.vacation_until is not None:
        spill = _within(now, user.vacation_until, now.year + 1)
    later = f" (and {_days(spill)} in {now.year + 1})" if spill else ""
    status = f"{state}; {_days(used)} of {allowance} vacation days used in {now.year}{later}."
    if deadlines.on_vacation(user, now):  # how to come back before the date
        status += (
            f"\nBack earlier: 'vacation {user.userid} PASSWORD off' ends it now and gives back "
            "the days not used."
        )
    return status


def _days(value: float) -> str:
    """Vacation days to one decimal: what is given back after ``vacation off`` is a fraction."""
    return f"{max(0.0, round(value, 1)):g}"


USERID = Arg("userid", Kind.USERID)
PASSWORD = Arg("password", Kind.PASSWORD)

COMMANDS: tuple[Command, ...] = (
    Command(
        "accept",
        accept_command,
        "Take challenges (the default).",
        (USERID, PASSWORD),
        plain_word=True,
    ),
    Command("reject", reject_command, "Take no challenges.", (USERID, PASSWORD), plain_word=True),
    Command(
        "limit",
        limit_command,
        "Take at most N active games in all.",
        (USERID, PASSWORD, Arg("count", Kind.TEXT, metavar="N|none")),
        plain_word=True,
    ),
    Command(
        "seek",
        seek_command,
        "Seek N more games (shown in the standings).",
        (USERID, PASSWORD, Arg("count", Kind.TEXT, metavar="N")),
        plain_word=True,
    ),
    Command(
        "vacation",
        vacation_command,
        "No nags or forfeits for DAYS (42 a year; 2 days grace after).",
        (USERID, PASSWORD, Arg("days", Kind.TEXT, optional=True, metavar="[DAYS|off]")),
        plain_word=True,
    ),
)
