"""The SQL schema as SQLAlchemy 2 models.  The database itself is built only by the Alembic
migrations in ``migrations/``; these classes describe it for queries.

The move record is authoritative: ``Board.position_cache`` is a serialised position at
``Board.cache_ply`` that spares replaying long games and can always be rebuilt from ``moves``.
Two more columns are derived, so that the robots and the clock find their boards through an
index instead of replaying every board: ``Board.to_move_id`` (the user who must act now, kept
by :mod:`pbmserv.domain.boards` with the cache) and ``Board.due_at`` (when the clock may next
act; every update of a board clears it, and :mod:`pbmserv.domain.clocks` fills it in again).
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    DateTime,
    Enum,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    event,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Mapper, attributes, mapped_column, relationship

if TYPE_CHECKING:
    from pbmserv.games.base import Position

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite stores naive values)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def _enum(cls: type[enum.Enum], name: str, length: int = 16) -> Enum:
    """A closed set of values stored as text with a CHECK constraint (the migrations add it)."""
    return Enum(
        cls,
        name=name,
        native_enum=False,
        create_constraint=True,
        validate_strings=True,
        length=length,
        values_callable=lambda members: [m.value for m in members],
    )


class BoardStatus(enum.Enum):
    active = "active"
    finished = "finished"
    removed = "removed"  # declined in the first round with too few players left


class OutboxStatus(enum.Enum):
    pending = "pending"
    sending = "sending"  # being handed to the relay; sent again when its lease is over
    sent = "sent"
    failed = "failed"


class InboxStatus(enum.Enum):
    new = "new"
    processing = "processing"
    done = "done"
    ignored = "ignored"  # automatic mail we never answer
    shunted = "shunted"  # failed too often; set aside for the operator


class SubscriptionKind(enum.StrEnum):
    all = "all"  # every board mail
    result = "result"  # only the mail that ends the game


class ProposalKind(enum.StrEnum):
    draw = "draw"
    undo = "undo"


class TournamentFormat(enum.StrEnum):
    roundrobin = "roundrobin"
    swiss = "swiss"
    knockout = "knockout"


class TournamentStatus(enum.StrEnum):
    open = "open"
    running = "running"
    finished = "finished"


class GameResult(enum.StrEnum):
    """A tournament game's result, seen from the first seat."""

    win = "1-0"
    loss = "0-1"
    draw = "1/2"
    bye = "bye"


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    userid: Mapped[str] = mapped_column(String(32), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    # whether password_hash was made of the password composed (NFC): such a hash is checked
    # once; one made before passwords were composed may be of the password as typed
    password_composed: Mapped[bool] = mapped_column(default=False, server_default=false())
    created: Mapped[datetime] = mapped_column(UTCDateTime())
    accepts_challenges: Mapped[bool] = mapped_column(default=True)
    game_limit: Mapped[int | None] = mapped_column(Integer, nullable=True)  # most active games
    seeking: Mapped[int] = mapped_column(Integer, default=0)  # games wanted (standings)
    vacation_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    vacation_year: Mapped[int | None] = mapped_column(Integer, nullable=True)
    vacation_used: Mapped[float] = mapped_column(Float, default=0.0)  # days in vacation_year
    notify: Mapped[str] = mapped_column(String(8), default="every", server_default="every")
    digest_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    addresses: Mapped[list[Address]] = relationship(
        back_populates="user", cascade="all, delete-orphan", order_by="Address.id"
    )
    robot: Mapped[Robot | None] = relationship(viewonly=True)  # None for a human

    CLOSED_MARK = "!"
    """How ``password_hash`` starts on a closed account (``signoff``): no password verifies,
    and the userid stays taken.  A robot's mark is another (``robot: no password``)."""

    @property
    def closed(self) -> bool:
        """Whether the account was closed (``signoff``)."""
        return self.password_hash.startswith(self.CLOSED_MARK)


class Robot(Base):
    """A user whose moves the server computes (:mod:`pbmserv.robots`); it never gets mail."""

    __tablename__ = "robots"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    game: Mapped[str] = mapped_column(String(32))  # the game it is listed for
    level: Mapped[str] = mapped_column(String(32))  # a name of pbmserv.robots.LEVELS, nodes=N ...
    created: Mapped[datetime] = mapped_column(UTCDateTime())
    user: Mapped[User] = relationship()


class Address(Base):
    __tablename__ = "addresses"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    address: Mapped[str] = mapped_column(String(320), index=True)
    # False until the owner answers the confirmation mail; unconfirmed addresses get no mail
    confirmed: Mapped[bool] = mapped_column(default=True)
    user: Mapped[User] = relationship(back_populates="addresses")


class Board(Base):
    __tablename__ = "boards"
    __table_args__ = (UniqueConstraint("game", "number", name="uq_boards_game_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    number: Mapped[int] = mapped_column(Integer)
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[BoardStatus] = mapped_column(_enum(BoardStatus, "board_status"), index=True)
    created: Mapped[datetime] = mapped_column(UTCDateTime())
    last_move_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    winners: Mapped[list[int] | None] = mapped_column(JSON, nullable=True)
    # a draw: the seats it was drawn among (those still in); None: won, on, or stored before
    drawn: Mapped[list[int] | None] = mapped_column(JSON, nullable=True)
    result: Mapped[str | None] = mapped_column(Text, nullable=True)  # "Game won by x." reason
    position_cache: Mapped[str | None] = mapped_column(Text, nullable=True)
    cache_ply: Mapped[int] = mapped_column(Integer, default=0)
    version: Mapped[int] = mapped_column(Integer, default=0)  # bumped by every change
    nagged_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    rating_changes: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    # the user id of who must act now (None once the game is over): robot turns by index
    to_move_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    # the earliest moment the clock may nag, forfeit or draw; None: not yet computed
    due_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True, index=True)

    seats: Mapped[list[Seat]] = relationship(
        back_populates="board", cascade="all, delete-orphan", order_by="Seat.index"
    )
    moves: Mapped[list[MoveRecord]] = relationship(
        back_populates="board", cascade="all, delete-orphan", order_by="MoveRecord.ply"
    )
    comments: Mapped[list[Comment]] = relationship(
        back_populates="board", cascade="all, delete-orphan", order_by="Comment.id"
    )
    subscriptions: Mapped[list[Subscription]] = relationship(
        back_populates="board", cascade="all, delete-orphan", order_by="Subscription.id"
    )
    __mapper_args__ = {"version_id_col": version}

    def drawn_seats(self) -> list[int]:
        """The seats a finished game was drawn among (the players still in at the end: the
        others lost); empty when it was won or is not over.  A draw stored before the seats
        were kept was a tie of every seat, and stays one."""
        if self.status is not BoardStatus.finished or self.winners:
            return []
        return [s.index for s in self.seats] if self.drawn is None else list(self.drawn)

    def user_to_move(self, position: Position) -> User | None:
        """The user who must act now (the partner, when a partnership seat was absorbed)."""
        seat = position.to_move
        if seat is None or self.status is not BoardStatus.active:
            return None
        return self.seats[position.controller(seat)].user


@event.listens_for(Board, "before_update")
def _clock_may_have_changed(_mapper: Mapper[Board], _connection: Any, board: Board) -> None:
    """Any change to a board (a move, an undo, the end, a nag) may move its clock: the due
    time is computed again by the next clock tick, unless this very update set it."""
    if not attributes.get_history(board, "due_at").has_changes():
        board.due_at = None


class ClockBasis(Base):
    """The settings' default periods that the stored due times were computed with (one row):
    when the settings change, every due time is computed again."""

    __tablename__ = "clock_basis"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    nag_days: Mapped[float] = mapped_column(Float)
    forfeit_days: Mapped[float] = mapped_column(Float)


class Seat(Base):
    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("board_id", "index", name="uq_seats_board_index"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    board_id: Mapped[int] = mapped_column(ForeignKey("boards.id", ondelete="CASCADE"), index=True)
    index: Mapped[int] = mapped_column(Integer)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    queued_resign: Mapped[bool] = mapped_column(default=False)
    queued_move: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # what the player wrote with his queued move or resignation: mailed when it is played
    queued_move_comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    queued_resign_comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    submitted_move: Mapped[str | None] = mapped_column(String(80), nullable=True)  # "move#N"
    time_used: Mapped[float] = mapped_column(Float, default=0.0)  # seconds on own turns
    notify: Mapped[str | None] = mapped_column(String(8), nullable=True)  # None: the user's
    mailed_ply: Mapped[int | None] = mapped_column(Integer, nullable=True)  # "once": last mail
    digest_pending: Mapped[bool] = mapped_column(default=False, server_default=false())
    board: Mapped[Board] = relationship(back_populates="seats")
    user: Mapped[User] = relationship()


class MoveRecord(Base):
    __tablename__ = "moves"
    __table_args__ = (UniqueConstraint("board_id", "ply", name="uq_moves_board_ply"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    board_id: Mapped[int] = mapped_column(ForeignKey("boards.id", ondelete="CASCADE"), index=True)
    ply: Mapped[int] = mapped_column(Integer)  # 1-based
    seat: Mapped[int] = mapped_column(Integer)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    text: Mapped[str] = mapped_column(String(64))
    auto: Mapped[bool] = mapped_column(default=False)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    source: Mapped[str] = mapped_column(String(255), default="")
    board: Mapped[Board] = relationship(back_populates="moves")


class Comment(Base):
    __tablename__ = "comments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    board_id: Mapped[int] = mapped_column(ForeignKey("boards.id", ondelete="CASCADE"), index=True)
    ply: Mapped[int] = mapped_column(Integer)  # the move it came with (0: before any move)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    text: Mapped[str] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    board: Mapped[Board] = relationship(back_populates="comments")
    user: Mapped[User] = relationship()


class Subscription(Base):
    """A spectator of a board: ``all`` board mails, or only the ``result``."""

    __tablename__ = "subscriptions"
    __table_args__ = (UniqueConstraint("board_id", "user_id", name="uq_subscriptions_board_user"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    board_id: Mapped[int] = mapped_column(ForeignKey("boards.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    kind: Mapped[SubscriptionKind] = mapped_column(_enum(SubscriptionKind, "subscription_kind", 8))
    board: Mapped[Board] = relationship(back_populates="subscriptions")
    user: Mapped[User] = relationship()


class Rating(Base):
    """A player's Elo rating and record in one game type."""

    __tablename__ = "ratings"
    __table_args__ = (UniqueConstraint("user_id", "game", name="uq_ratings_user_game"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    game: Mapped[str] = mapped_column(String(32), index=True)
    rating: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)  # rated games finished
    won: Mapped[int] = mapped_column(Integer, default=0)
    lost: Mapped[int] = mapped_column(Integer, default=0)
    tied: Mapped[int] = mapped_column(Integer, default=0)
    last_game_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    user: Mapped[User] = relationship()


class Proposal(Base):
    """An open draw or undo proposal; it passes when every player still in the game accepts."""

    __tablename__ = "proposals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    board_id: Mapped[int] = mapped_column(ForeignKey("boards.id", ondelete="CASCADE"), index=True)
    kind: Mapped[ProposalKind] = mapped_column(_enum(ProposalKind, "proposal_kind", 8))
    ply: Mapped[int] = mapped_column(Integer)  # moves on the board when proposed
    accepted_seats: Mapped[list[int]] = mapped_column(JSON)
    open: Mapped[bool] = mapped_column(default=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime())


class AuthFailure(Base):
    """Failed password checks per key ("user:alice", "sender:bob@example.org")."""

    __tablename__ = "auth_failures"

    key: Mapped[str] = mapped_column(String(400), primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)
    first_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Outbox(Base):
    """A mail to send.  Once it is sent its text is dropped (``dropped_bytes`` says how much
    there was) and a code in its subject masked: a sent mail may carry a code or a password,
    and the store keeps no copy of those."""

    __tablename__ = "outbox"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    recipient: Mapped[str] = mapped_column(String(320))
    subject: Mapped[str] = mapped_column(String(998))
    body: Mapped[str] = mapped_column(Text)
    in_reply_to: Mapped[str | None] = mapped_column(String(998), nullable=True)
    references: Mapped[str | None] = mapped_column(Text, nullable=True)
    created: Mapped[datetime] = mapped_column(UTCDateTime())
    status: Mapped[OutboxStatus] = mapped_column(_enum(OutboxStatus, "outbox_status"), index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    message_id: Mapped[str | None] = mapped_column(String(998), nullable=True)
    inbox_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)  # lease
    claimed_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # bytes of the text dropped once the mail was sent (None: the text is still here)
    dropped_bytes: Mapped[int | None] = mapped_column(Integer, nullable=True)


class Inbox(Base):
    """Every accepted mail, stored before the listener answers 250."""

    __tablename__ = "inbox"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # the Message-ID with a hash of From, Subject and text, or a sha256 of the bytes (dedup_key)
    dedup_key: Mapped[str] = mapped_column(String(998), unique=True)
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    mail_from: Mapped[str] = mapped_column(String(320))
    rcpt_to: Mapped[str] = mapped_column(Text)
    received: Mapped[datetime] = mapped_column(UTCDateTime())
    status: Mapped[InboxStatus] = mapped_column(_enum(InboxStatus, "inbox_status"), index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    claimed_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # when its effects and answers were committed (a batch's mails share their commit's time)
    processed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    # repeated deliveries of this mail, acknowledged and not stored (the operator sees them)
    repeats: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # its Date header, read when it was stored (None: it had none, or none readable)
    dated: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class InboxTombstone(Base):
    """The key of a processed mail deleted after ``inbox_retention_days``, kept for as long as
    a replay of that mail would run (``dated`` within ``stale_mail_days``; a mail without a Date
    runs nothing, and keeps no key): the listener takes a mail with that key for a repeat.  No
    text of the mail."""

    __tablename__ = "inbox_tombstones"

    dedup_key: Mapped[str] = mapped_column(String(998), primary_key=True)
    dated: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True, index=True)


class TokenKind(enum.Enum):
    address = "address"  # confirms one address of an account
    challenge = "challenge"  # confirms a challenge asked for by mail without a password
    reset = "reset"  # allows one password reset
    unlock = "unlock"  # lets the owner's mail through the hold on his address (24 h, reusable)


class Token(Base):
    """A one-use secret mailed to a confirmed (or to-be-confirmed) address; only its hash is
    stored (:mod:`pbmserv.domain.tokens`)."""

    __tablename__ = "tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[TokenKind] = mapped_column(
        Enum(TokenKind, name="token_kind", native_enum=False, length=16)
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    address: Mapped[str | None] = mapped_column(String(320), nullable=True)
    payload: Mapped[Any] = mapped_column(JSON, nullable=True)
    created: Mapped[datetime] = mapped_column(UTCDateTime())
    expires: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Refusal(Base):
    """An address's owner refused a code (``refuse CODE``): the account that gave the address
    never has mail sent there again, not even a new code (:mod:`pbmserv.domain.confirmation`)."""

    __tablename__ = "refusals"
    __table_args__ = (UniqueConstraint("user_id", "address", name="uq_refusals_user_address"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    address: Mapped[str] = mapped_column(String(320))
    created: Mapped[datetime] = mapped_column(UTCDateTime())


class AnswerCount(Base):
    """Daily counters behind the caps of :mod:`pbmserv.domain.limits`: the key names what is counted
    ("answers:ADDRESS", "stranger:ADDRESS", "rcpt:ADDRESS", "challenges:USERID",
    "message:USERID>ADDRESS", "messages:ADDRESS")."""

    __tablename__ = "answer_counts"

    sender: Mapped[str] = mapped_column(String(320), primary_key=True)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD
    count: Mapped[int] = mapped_column(Integer, default=0)


class Tournament(Base):
    """A tournament (:mod:`pbmserv.domain.tournaments`); its number (``t3``) is its id."""

    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(32), unique=True)
    game: Mapped[str] = mapped_column(String(32))
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    format: Mapped[TournamentFormat] = mapped_column(_enum(TournamentFormat, "tournament_format"))
    rounds: Mapped[int | None] = mapped_column(Integer, nullable=True)  # set at the start
    double: Mapped[bool] = mapped_column(default=False)
    status: Mapped[TournamentStatus] = mapped_column(_enum(TournamentStatus, "tournament_status"))
    current_round: Mapped[int] = mapped_column(Integer, default=0)
    created: Mapped[datetime] = mapped_column(UTCDateTime())
    created_by: Mapped[str] = mapped_column(String(32))
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    players: Mapped[list[TournamentPlayer]] = relationship(
        back_populates="tournament", cascade="all, delete-orphan", order_by="TournamentPlayer.id"
    )
    games: Mapped[list[TournamentGame]] = relationship(
        back_populates="tournament",
        cascade="all, delete-orphan",
        order_by="(TournamentGame.round, TournamentGame.number)",
    )


class TournamentPlayer(Base):
    __tablename__ = "tournament_players"
    __table_args__ = (
        UniqueConstraint("tournament_id", "user_id", name="uq_tournament_players_tournament_user"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    seed: Mapped[int | None] = mapped_column(Integer, nullable=True)  # 1 = strongest
    withdrawn: Mapped[bool] = mapped_column(default=False)
    joined: Mapped[datetime] = mapped_column(UTCDateTime())
    tournament: Mapped[Tournament] = relationship(back_populates="players")
    user: Mapped[User] = relationship()


class TournamentGame(Base):
    """One pairing: board ``t<tournament>r<round>b<number>``, or a bye (no second player)."""

    __tablename__ = "tournament_games"
    __table_args__ = (
        UniqueConstraint("tournament_id", "round", "number", name="uq_tournament_games_board"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True
    )
    round: Mapped[int] = mapped_column(Integer)
    number: Mapped[int] = mapped_column(Integer)
    board_id: Mapped[int | None] = mapped_column(
        ForeignKey("boards.id"), nullable=True, unique=True
    )
    first_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    second_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    result: Mapped[GameResult | None] = mapped_column(
        _enum(GameResult, "game_result", 8), nullable=True
    )
    tournament: Mapped[Tournament] = relationship(back_populates="games")
    board: Mapped[Board | None] = relationship()
