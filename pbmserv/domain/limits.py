"""Daily caps on what mail can make the server send.

An authenticated command from a player's confirmed address, and its answer, is never capped
(the worker does not even count it).  Everything else is counted per UTC day in
``answer_counts`` under a key that names what is counted: answers to a player's address,
answers to strangers, mails to one recipient, challenges asked for by one account.  An
address counts as its mailbox (:func:`mailbox`: ``+detail`` dropped).

One thing is capped even for an authenticated player: how often his own text (``message``,
``chat``) may be mailed to somebody else (:func:`message_refusal`).  Being a player makes him
no less a stranger to the other person's mailbox.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.store import counters
from pbmserv.store.models import Address, AnswerCount


def bump(session: Session, key: str, now: datetime) -> int:
    """Count one more for ``key`` today; return today's count (one statement: workers that
    bump the same key at once each count)."""
    return counters.count_up(session, key.lower()[:320], now.strftime("%Y-%m-%d"))


def today(session: Session, key: str, now: datetime) -> int:
    return counters.count_of(session, key.lower()[:320], now.strftime("%Y-%m-%d"))


def mailbox(address: str) -> str:
    """The mailbox a cap counts for ``address``: its local part's ``+detail`` dropped, as mail
    servers deliver ``target+7@example.com`` to ``target@example.com`` (eight such addresses
    once had eight times the caps).  The address answered stays the one written.

    Gmail also ignores the dots of a local part, under either of its domains (nine
    spellings of one Gmail mailbox had nine times a stranger's cap).

    >>> mailbox("Target+7@Example.com"), mailbox("+news@example.com")
    ('target@example.com', '+news@example.com')
    >>> mailbox("V.ictim+x@googlemail.com")
    'victim@gmail.com'
    """
    local, _, domain = address.strip().lower().rpartition("@")
    base = local.partition("+")[0]
    if domain in GMAIL_DOMAINS:
        base, domain = base.replace(".", ""), GMAIL_DOMAINS[0]
    return f"{base}@{domain}" if base and domain else address.strip().lower()


GMAIL_DOMAINS = ("gmail.com", "googlemail.com")


def is_confirmed(session: Session, address: str) -> bool:
    """Whether some account has confirmed ``address``."""
    return bool(
        session.scalar(
            select(func.count())
            .select_from(Address)
            .where(func.lower(Address.address) == address.strip().lower(), Address.confirmed)
        )
    )


def _answer_cap(session: Session, settings: Settings, sender: str) -> tuple[int, str, bool]:
    """The day's cap of answers to ``sender``, its counter's key, and whether the address is
    a player's confirmed one."""
    if is_confirmed(session, sender):
        return settings.max_answers_per_day, f"answers:{mailbox(sender)}", True
    return settings.max_stranger_answers_per_day, f"stranger:{mailbox(sender)}", False


def answer_allowance(session: Session, settings: Settings, sender: str, now: datetime) -> int:
    """For an unauthenticated mail from ``sender`` (counted here): 2 answer it, 1 send the one
    notice that the cap is reached, 0 stay silent.

    A player's confirmed address has ``max_answers_per_day`` answers: the cap on mails to one
    recipient (codes and answers together) is for addresses that never asked for our mail,
    and applied to a player it silenced him, without the notice, after 20 answers a day
    (previews, help, challenges waiting for his confirmation)."""
    cap, key, confirmed = _answer_cap(session, settings, sender)
    count = bump(session, key, now)
    if count > cap + 1 or (not confirmed and not recipient_allowed(session, settings, sender, now)):
        return 0
    return 2 if count <= cap else 1


def silence_reason(session: Session, settings: Settings, sender: str, now: datetime) -> str:
    """Which cap kept the answer to ``sender`` back (after :func:`answer_allowance` said 0),
    named by its setting: the operator raises that one."""
    cap, key, confirmed = _answer_cap(session, settings, sender)
    if today(session, key, now) > cap:
        name = "max_answers_per_day" if confirmed else "max_stranger_answers_per_day"
        return f"daily answer limit reached ({name} = {cap})"
    recipient = settings.max_mails_per_recipient_per_day
    return f"daily limit of mails to this address reached (max_mails_per_recipient_per_day = {recipient})"


def answer_expected(session: Session, settings: Settings, sender: str, now: datetime) -> bool:
    """Will the answer to an unauthenticated mail from ``sender`` go out today (counting
    nothing)?  A code that only that answer would carry is made only then."""
    cap, key, confirmed = _answer_cap(session, settings, sender)
    if today(session, key, now) >= cap:
        return False
    return (
        confirmed
        or today(session, f"rcpt:{mailbox(sender)}", now) < settings.max_mails_per_recipient_per_day
    )


def code_allowed(session: Session, settings: Settings, address: str, now: datetime) -> bool:
    """May the answer to an unauthenticated mail from ``address`` carry a new code (counted
    here)?  Only if the answer goes out, and every code counts under the cap on mails to one
    address: a player's confirmed address has a cap of its own for answers, not for codes
    (60 sign-ups forged from one got 47 codes and 47 throw-away accounts in a day)."""
    if not answer_expected(session, settings, address, now):
        return False
    return not is_confirmed(session, address) or recipient_allowed(session, settings, address, now)


def recipient_allowed(session: Session, settings: Settings, address: str, now: datetime) -> bool:
    """May one more capped mail (answer, confirmation) go to ``address`` today?"""
    key = f"rcpt:{mailbox(address)}"
    return bump(session, key, now) <= settings.max_mails_per_recipient_per_day


def challenge_allowed(session: Session, settings: Settings, userid: str, now: datetime) -> bool:
    return bump(session, f"challenges:{userid}", now) <= settings.max_challenges_per_day


def message_refusal(
    session: Session, settings: Settings, author: str, address: str, now: datetime
) -> str | None:
    """Why one more mail carrying ``author``'s own text may not go to ``address`` today, or
    None: it may, and it is counted (per author and address, and per address from everybody,
    so that many sock accounts of one spammer add up)."""
    pair, total = f"message:{author}>{mailbox(address)}", f"messages:{mailbox(address)}"
    for key, cap, whom in (
        (pair, settings.max_messages_per_pair_per_day, author),
        (total, settings.max_messages_per_recipient_per_day, "players"),
    ):
        if today(session, key, now) >= cap:
            return f"{cap} message{'s' if cap != 1 else ''} from {whom} today"
    bump(session, pair, now)
    bump(session, total, now)
    return None


def purge(session: Session, now: datetime) -> None:
    """Forget the counters of the days before today."""
    day = now.strftime("%Y-%m-%d")
    session.execute(delete(AnswerCount).where(AnswerCount.day < day))
