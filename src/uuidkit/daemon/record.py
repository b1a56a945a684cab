"""One claim the daemon makes or holds for an application, and its JSON forms.

``describe()`` is what ``list`` shows (docs/uiap-api.md); ``saved_form()`` is what the state
directory keeps (uuidkit.daemon.state). A :class:`ClaimTable` holds the records by ID and
keeps their counts by state as they change, and indexes them by space and by owner, so
``status`` and a claim's admission cost the same whatever the number of claims.

References: UIAP §4.4 (reclaim), §4.5.2 (lifetime).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

from uuidkit.uiapd.api import ClaimParams, finite_or_none, space_to_json

__all__ = ["ClaimRecord", "ClaimTable"]

#: The attributes a record's counts and indexes depend on (:class:`ClaimTable`).
_COUNTED: Final = frozenset({"state", "verified", "session"})


@dataclass(eq=False)
class ClaimRecord:
    """One claim the daemon makes or holds for an application.

    References: UIAP §3.2.2 (describing a UID claim), §4.5.2 (claim lifetime).
    """

    id: str
    params: ClaimParams
    owner_uid: int
    created: float
    #: claiming, held, renewing (a renewal or an application's reclaim of a held claim),
    #: reclaiming (after a restart).
    state: str = "claiming"
    handle: int | None = None
    expires: float | None = None
    outcome: str | None = None
    session: object | None = None
    started: float = 0.0
    waiters: list[asyncio.Future[dict[str, Any]]] = field(default_factory=list)
    renewal: asyncio.TimerHandle | None = None
    #: False while the daemon cannot vouch that no other device holds the space: an
    #: interface went down, or a conflict is suspected; true again once a re-verification
    #: (a reclaim, UIAP §4.4) succeeds.
    verified: bool = True
    #: A re-verification of this claim is running (its result is reported with how=verify).
    verifying: bool = False
    #: The reclaim running now began before an interface came up: its success proves
    #: nothing about the new link, so another re-verification follows it.
    recheck: bool = False

    #: The table counting this record (set while it is in one).
    _table: ClaimTable | None = field(default=None, repr=False)

    def __setattr__(self, name: str, value: Any) -> None:
        table = self._table
        if table is None or name not in _COUNTED:
            object.__setattr__(self, name, value)
            return
        table._count(self, -1)
        object.__setattr__(self, name, value)
        table._count(self, 1)

    @property
    def unverified(self) -> bool:
        """Held, but not verified now (an interface went down, a conflict suspected)."""
        return self.public_state == "held" and not self.verified

    @property
    def persistent(self) -> bool:
        return not self.params.release_on_disconnect and self.state != "claiming"

    #: The parts that never change, as JSON (computed once: ``list`` and every state
    #: write would otherwise rebuild them for every claim).
    _static: dict[str, Any] | None = None
    _params_json: dict[str, Any] | None = None

    def params_json(self) -> dict[str, Any]:
        if self._params_json is None:
            self._params_json = self.params.to_json()
        return self._params_json

    def describe(self) -> dict[str, Any]:
        if self._static is None:
            self._static = {
                "claim": self.id,
                "domain": str(self.params.domain),
                **space_to_json(self.params.space),
                "lifetime": self.params.lifetime,
                "renew": self.params.renew,
                "release_on_disconnect": self.params.release_on_disconnect,
                "owner_uid": self.owner_uid,
                "created": round(self.created, 6),
            }
        return self._static | {
            "state": self.public_state,
            "renewing": self.state == "renewing",
            "verified": self.verified,
            "expires": finite_or_none(self.expires),
            "outcome": self.outcome,
        }

    @property
    def public_state(self) -> str:
        """The state applications see: a claim being renewed or re-verified is still held
        and defended (UIAP §4.4), so it reads ``held`` (with ``renewing`` true)."""
        return "held" if self.state == "renewing" else self.state

    def saved_form(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "params": self.params_json(),
            "owner_uid": self.owner_uid,
            "created": self.created,
            "expires": self.expires,
        }


class ClaimTable(dict[str, ClaimRecord]):
    """The claims by ID, with their counts by public state kept as they change, and
    indexed by the space they claim and by owner (neither changes in a record's life) and
    by the connection they end with (``release_on_disconnect``).

    A record in the table reports its own changes of ``state``, ``verified`` and ``session``; a
    record enters the table with ``table[id] = record`` and leaves it with ``pop`` or ``del`` (the
    only ways the service changes it).

    References: UIAP §4.4 (claims held and being reclaimed).
    """

    def __init__(self) -> None:
        super().__init__()
        self._by_state: Counter[str] = Counter()
        self._unverified = 0
        self._by_owner: Counter[int] = Counter()
        #: Claims that end with a client's connection, by ``id()`` of that connection.
        self._by_session: dict[int, list[ClaimRecord]] = {}
        self._by_space: dict[tuple[object, object], list[ClaimRecord]] = {}

    def __setitem__(self, claim_id: str, record: ClaimRecord) -> None:
        old = self.get(claim_id)
        if old is record:
            return
        if old is not None:
            self._leave(old)
        super().__setitem__(claim_id, record)
        object.__setattr__(record, "_table", self)
        self._count(record, 1)
        self._by_owner[record.owner_uid] += 1
        self._by_space.setdefault(_space_key(record.params), []).append(record)

    def __delitem__(self, claim_id: str) -> None:
        self._leave(self[claim_id])
        super().__delitem__(claim_id)

    def pop(self, claim_id: str, *default: Any) -> Any:
        record = self.get(claim_id)
        if record is not None:
            self._leave(record)
        return super().pop(claim_id, *default)

    def _leave(self, record: ClaimRecord) -> None:
        self._count(record, -1)
        object.__setattr__(record, "_table", None)
        self._by_owner[record.owner_uid] -= 1
        key = _space_key(record.params)
        same = [other for other in self._by_space[key] if other is not record]
        if same:
            self._by_space[key] = same
        else:
            del self._by_space[key]

    def holding(self, params: ClaimParams) -> list[ClaimRecord]:
        """The claims in the table on the space ``params`` names (its domain and space)."""
        return list(self._by_space.get(_space_key(params), ()))

    def owned_by(self, uid: int) -> int:
        """How many claims in the table ``uid`` owns."""
        return self._by_owner[uid]

    def _count(self, record: ClaimRecord, sign: int) -> None:
        self._by_state[record.public_state] += sign
        if record.unverified:
            self._unverified += sign
        if record.session is not None:
            key = id(record.session)
            others = [other for other in self._by_session.get(key, ()) if other is not record]
            if sign > 0:
                others.append(record)
            if others:
                self._by_session[key] = others
            else:
                self._by_session.pop(key, None)

    def of_session(self, session: object) -> list[ClaimRecord]:
        """The claims in the table that end with ``session`` (a client's connection)."""
        return list(self._by_session.get(id(session), ()))

    def counts(self) -> dict[str, int]:
        """Claims by public state, and ``unverified``: those held but not verified now."""
        counts = {state: count for state, count in self._by_state.items() if count}
        counts["unverified"] = self._unverified
        return counts


def _space_key(params: ClaimParams) -> tuple[object, object]:
    return params.domain, params.space
