"""The claim service: what the API asks of UIAP, kept across restarts and renewed on time.

Between the API server and a UIAP node (:class:`Node`, the transport's ``UIAPNode`` or any
object with its claim/release/status methods): it names claims with stable IDs, waits for
their outcome, keeps held claims in the state directory, reclaims them after a restart
(R flag, UIAP §4.4), renews those the application asked to keep (a reclaim before the
lifetime ends), and reports every change to the watchers as an event.

Durability is decided here for every answer: a grant is answered once it is on disk (or
withdrawn), a release once it is on disk or with ``state-write-failed``. The node hands over
a claim's events after ``claim()`` returned, so every event names a handle known here.

Times: the node's engine runs on ``loop.time()``; claims are stored and reported with Unix
times (``expires``), converted when an outcome arrives, because a monotonic clock does not
survive a reboot.

References: UIAP §2.1.1, §2.1.2, §2.4.1, §4.4, §4.5.2, §5.1.
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

from uuidkit.daemon.admission import (
    check_caps,
    check_renewable,
    reclaim_seconds,
    refuse_joining_another_users_claim,
)
from uuidkit.daemon.config import MAX_CLAIMS_CEILING
from uuidkit.daemon.record import ClaimRecord, ClaimTable
from uuidkit.daemon.sitesplit import SiteSplitWarnings, WatchedAuthenticator
from uuidkit.daemon.state import AfterWrite, StateStore, StateWriter
from uuidkit.daemon.status import (
    ConflictLog,
    DeviceIDConflicts,
    ServiceStatus,
    auth_status,
    node_drops,
    verification_status,
)
from uuidkit.daemon.verification import Verification
from uuidkit.uiap.auth import Authenticator
from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.engine_types import EngineConfig
from uuidkit.uiap.events import (
    ClaimDefended,
    ClaimExpired,
    ClaimFailed,
    ClaimLost,
    ClaimSucceeded,
    DeviceIDConflictSuspected,
    DropReason,
    Event,
    LossReason,
    MessageDropped,
)
from uuidkit.uiap.space import UIDSpace
from uuidkit.uiapd.api import (
    APIError,
    ClaimParams,
    ErrorCode,
    finite_or_none,
    parse_claim_params,
    space_to_json,
)

__all__ = ["ClaimRecord", "ClaimService", "Node"]

_log = logging.getLogger("uuidkit.daemon")


class Node(Protocol):
    """What the service needs of a UIAP node (``uuidkit.net.UIAPNode`` has it).

    The node calls ``on_event`` (given to the factory) with every engine event, never from
    inside :meth:`claim` or :meth:`release`: the events those cause arrive once the call has
    returned. :meth:`start` raises :class:`~uuidkit.errors.TransportError` (naming the
    setting in ``field``) or ``OSError`` when the node cannot run as configured.

    References: UIAP §2.4 (what a device does), §3.1.
    """

    device_id: int

    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    def claim(
        self,
        domain: DomainID,
        space: UIDSpace,
        lifetime: int,
        *,
        reclaim: bool = False,
        proxy: bool = False,
    ) -> int: ...
    def release(self, handle: int) -> None: ...
    def status(self) -> dict[str, Any]: ...
    @property
    def interfaces(self) -> tuple[str, ...]: ...


class ClaimService(Verification):
    """Claims by ID over one node; see the module docstring.

    ``node_factory(on_event)`` makes the node; ``engine_config`` gives the timers used to
    plan renewals; ``wall_clock`` is Unix seconds (injected for tests); ``authenticator``
    is the node's site-key authenticator, if any (its counters appear in :meth:`status`).

    References: UIAP §2.1.1, §2.4.1 (make a claim), §4.4 (reclaim), §4.5.2.
    """

    def __init__(
        self,
        node_factory: Callable[[Callable[[Event], None]], Node],
        store: StateStore,
        engine_config: EngineConfig,
        *,
        proxy: bool = False,
        wall_clock: Callable[[], float] = time.time,
        max_claims: int = MAX_CLAIMS_CEILING,
        max_claims_per_uid: int = MAX_CLAIMS_CEILING,
        authenticator: Authenticator | None = None,
    ) -> None:
        self.node = node_factory(self._on_event)
        self.store = store
        self.engine_config = engine_config
        self.proxy = proxy
        self.wall_clock = wall_clock
        #: The caps on claims (DaemonConfig.max_claims, .max_claims_per_uid); a reload
        #: changes them, claims already held above a lowered cap are kept.
        self.max_claims = max_claims
        self.max_claims_per_uid = max_claims_per_uid
        self.claims = ClaimTable()
        self._by_handle: dict[int, ClaimRecord] = {}
        self._subscribers: set[Callable[[str, dict[str, Any]], None]] = set()
        #: Claim ID -> outcome of its reclaim after the last start ("pending" until known).
        self.restored: dict[str, dict[str, Any]] = {}
        self.events_sent: Counter[str] = Counter()
        self._interfaces: tuple[str, ...] = ()
        self._poller: asyncio.TimerHandle | None = None
        self._stopping = False
        self.writer = StateWriter(store, self._snapshot, saved_claim=self._saved_claim)
        #: Device-ID conflicts suspected at run time (UIAP §9), counted and logged.
        self.device_id_conflicts = DeviceIDConflicts(self.node.device_id)
        self.authenticator = authenticator
        #: Conflicts with other holders, the daemon's own re-verifications (after a
        #: suspicion), the outcomes of the state writes answers wait for, and datagrams
        #: that show another site on a link: for ``status`` and the metrics.
        self.conflicts = ConflictLog()
        self.suspicions: Counter[str] = Counter(started=0, confirmed=0, conflicts=0)
        self.state_saves: Counter[str] = Counter(written=0, failed=0)
        self.site_split = SiteSplitWarnings(time.monotonic)
        if isinstance(authenticator, WatchedAuthenticator):
            authenticator.watch = self.site_split

    # ------------------------------------------------------------------ life cycle

    async def start(self, saved: dict[str, Any]) -> None:
        """Start the node, then reclaim every saved claim whose lifetime has not ended.

        Raises what the node's start raises (:class:`Node`), with the node stopped again.
        """
        try:
            await self.node.start()
        except BaseException:
            await self.node.stop()
            raise
        self._poll_interfaces()
        now = self.wall_clock()
        restored = []
        for entry in saved.get("claims", []):
            try:
                record = self._restore(entry, now)
            except (KeyError, TypeError, ValueError) as error:
                _log.error("state: skipping an unreadable claim %r: %s", entry, error)
            else:
                if record is not None:
                    restored.append(record)
        # Written before the reclaims start: this write blocks the loop, and a reclaim
        # running meanwhile could time out before the deny that would fail it (UIAP §4.4)
        # is read.
        self.writer.save_now()
        now = self.wall_clock()
        for record in restored:
            try:
                self._reclaim(record, now)
            except ValueError as error:  # the engine refused it (APIError)
                _log.error("state: cannot reclaim claim %s: %s", record.id, error)

    def _restore(self, entry: dict[str, Any], now: float) -> ClaimRecord | None:
        """The saved claim ``entry`` as a record to reclaim; None if its lifetime ended."""
        params = parse_claim_params(entry["params"])
        expires = entry.get("expires")
        if expires is not None and float(expires) - now < 1:
            self.restored[entry["id"]] = {"claim": entry["id"], "result": "expired"}
            return None
        record = ClaimRecord(entry["id"], params, int(entry["owner_uid"]), float(entry["created"]))
        record.state, record.expires = "reclaiming", None if expires is None else float(expires)
        self.restored[record.id] = {"claim": record.id, "result": "pending"}
        self.claims[record.id] = record
        return record

    def _reclaim(self, record: ClaimRecord, now: float) -> None:
        if record.params.renew or record.expires is None:
            lifetime = record.params.lifetime
        else:
            # UIAP §4.5.2: the lifetime sent MUST NOT be longer than we will defend it.
            lifetime = math.floor(record.expires - now)
        self._run(record, max(lifetime, 1), reclaim=True)

    async def stop(self) -> None:
        """Abandon claims in progress (their requests fail with ``stopping``), keep the held
        ones in the state directory, stop the node."""
        self._stopping = True
        if self._poller is not None:
            self._poller.cancel()
        for record in list(self.claims.values()):
            if record.renewal is not None:
                record.renewal.cancel()
            if record.state == "claiming" or record.params.release_on_disconnect:
                self._resolve_error(record, "the daemon is stopping: claim abandoned")
                self._forget(record)
                if record.state != "claiming":
                    # Before the node stops defending it: its application stops using it
                    # now, not when the connection closes.
                    self._broadcast("released", {"claim": record.id, "by": "stopping"})
            else:
                self._resolve_error(record, "the daemon is stopping; the claim is kept")
        await self.writer.close()
        await self.node.stop()

    # ------------------------------------------------------------------ the API's requests

    async def claim(self, params: ClaimParams, owner_uid: int, session: object) -> dict[str, Any]:
        """Make a claim and wait for its outcome (the ``claim`` method's result)."""
        if self._stopping:
            raise APIError(ErrorCode.STOPPING, "the daemon is stopping")
        check_renewable(params, self.engine_config)
        held = self.claims
        refuse_joining_another_users_claim(held, params, owner_uid)
        check_caps(held, params, owner_uid, self.max_claims, self.max_claims_per_uid)
        loop = asyncio.get_running_loop()
        record = ClaimRecord(secrets.token_hex(8), params, owner_uid, self.wall_clock())
        record.session = session if params.release_on_disconnect else None
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        record.started = loop.time()
        existing = self._run(record, params.lifetime, reclaim=params.reclaim)
        target = record if existing is None else existing
        if existing is not None:
            existing.started = record.started
        target.waiters.append(future)
        return await future

    def _run(self, record: ClaimRecord, lifetime: int, *, reclaim: bool) -> ClaimRecord | None:
        """Start a claim run on the node; returns the record it joined if the node
        continues a claim this daemon already holds (a reclaim of a held space)."""
        try:
            handle = self.node.claim(
                record.params.domain,
                record.params.space,
                lifetime,
                reclaim=reclaim,
                proxy=self.proxy,
            )
        except ValueError as error:
            # The domain's rules refuse the space (UIAP §3.2.2), or a bad lifetime.
            raise APIError(ErrorCode.BAD_PARAMS, f"the engine refused the claim: {error}") from None
        joined = self._by_handle.get(handle)
        if joined is not None and joined is not record:
            joined.state = "renewing"
            return joined
        record.handle = handle
        self._by_handle[handle] = record
        self.claims[record.id] = record
        return None

    async def release(self, claim_id: str, uid: int) -> dict[str, Any]:
        """Release a claim (its owner or root only); the ``release`` method's result.

        The node stops defending the claim at once; the answer waits for the state write,
        as a grant's does, and is ``state-write-failed`` if that write failed (a restart
        before the next successful write would reclaim the claim).

        References: UIAP §2.1.1 (the service), §4.4 (a restart reclaims what is saved).
        """
        record = self._owned(claim_id, uid)
        written: asyncio.Future[OSError | None] = asyncio.get_running_loop().create_future()

        def durable(failure: OSError | None) -> None:
            if not written.done():
                written.set_result(failure)

        self._release(record, "request", then=durable)
        failure = await written
        if failure is not None:
            raise APIError(
                ErrorCode.STATE_WRITE_FAILED,
                f"claim {record.id} was released (it is no longer defended), but the state "
                f"write failed ({failure.strerror or failure}): a restart before the next "
                "successful write would reclaim it",
                "claim",
            )
        return {"released": record.id}

    def _owned(self, claim_id: str, uid: int) -> ClaimRecord:
        """The claim ``claim_id`` if ``uid`` may release it (its owner or root)."""
        record = self.claims.get(claim_id)
        if record is None:
            raise APIError(ErrorCode.NOT_FOUND, f"no claim {claim_id[:40]!r}", "claim")
        if uid not in (0, record.owner_uid):
            raise APIError(
                ErrorCode.PERMISSION_DENIED,
                f"claim {claim_id} belongs to uid {record.owner_uid}; only it or root may "
                "release it",
                "claim",
            )
        return record

    def _release(self, record: ClaimRecord, by: str, then: AfterWrite | None = None) -> None:
        if record.handle is not None:
            self.node.release(record.handle)
        self._resolve_error(record, "the claim was released")
        self._forget(record)
        self._broadcast("released", {"claim": record.id, "by": by})
        self._save(record, then)

    def session_closed(self, session: object) -> None:
        """A client disconnected: end its ``release_on_disconnect`` claims (nobody waits
        for their state write)."""
        for record in self.claims.of_session(session):
            self._release(record, "disconnect")

    def holds_session_claims(self, session: object) -> bool:
        """Whether ``session`` (a client connection) holds claims that end with it."""
        return bool(self.claims.of_session(session))

    def list_claims(self) -> list[dict[str, Any]]:
        return [record.describe() for record in self.claims.values()]

    def subscribe(self, callback: Callable[[str, dict[str, Any]], None]) -> None:
        self._subscribers.add(callback)

    def unsubscribe(self, callback: Callable[[str, dict[str, Any]], None]) -> None:
        self._subscribers.discard(callback)

    # ------------------------------------------------------------------ node events

    def _on_event(self, event: Event) -> None:
        if isinstance(event, ClaimSucceeded | ClaimFailed | ClaimExpired | ClaimLost):
            record = self._by_handle.get(event.claim)
            if record is None:
                return  # a claim this service has forgotten (released, withdrawn)
            if isinstance(event, ClaimLost):
                self._lost(record, event)
            elif isinstance(event, ClaimSucceeded):
                self._succeeded(record, event)
            elif isinstance(event, ClaimFailed):
                self._failed(record, event)
            else:
                self._forget(record)
                self._broadcast("expired", {"claim": record.id})
                self._save(record)
        elif isinstance(event, ClaimDefended):
            # Another device reclaimed a space held here: it held it too (after a merge:
            # its holder's renewal). The deny makes its reclaim fail (§4.2.2.2); ours is
            # re-verified once that reclaim has surely ended, so two reclaims never meet
            # (both would fail). A plain claim attempt denied is no sign of a second holder.
            record = self._by_handle.get(event.claim)
            if record is not None and event.reclaim:
                peer, now = event.originator, self.wall_clock()
                self.conflicts.record("kept", self._fields(record), "defended", peer, now)
                self._suspect(record, "attempted", delay=2 * reclaim_seconds(self.engine_config))
        elif isinstance(event, MessageDropped):
            if event.reason is DropReason.AUTH_UNEXPECTED:
                self.site_split.saw(event.interface, event.reason.value, event.source)
        elif isinstance(event, DeviceIDConflictSuspected):
            loop = asyncio.get_running_loop()
            fields = self.device_id_conflicts.record(event, loop.time(), self.wall_clock())
            self._broadcast("device-id-conflict", fields)

    def _succeeded(self, record: ClaimRecord, event: ClaimSucceeded) -> None:
        loop = asyncio.get_running_loop()
        how = {
            "claiming": "reclaim" if record.params.reclaim else "claim",
            "reclaiming": "restart",
        }.get(record.state, "renewal")
        if how == "renewal" and record.waiters:
            how = "reclaim"  # an application re-verified a claim this daemon holds
        elif how == "renewal" and record.verifying:
            how = "verify"  # the daemon's own re-verification (a suspicion, a link up)
        # A run that began before a link came up proves nothing about that link: another
        # follows at once, and the watchers hear only its verdict.
        recheck, record.recheck = record.recheck, False
        record.state = "held"
        if not recheck:
            record.verified, record.verifying = True, False
        record.outcome = {"claim": "granted", "renewal": "renewed"}.get(how, "reclaimed")
        record.expires = (
            None if event.expires is None else self.wall_clock() + (event.expires - loop.time())
        )
        fields = self._fields(record) | {"expires": finite_or_none(record.expires), "how": how}
        result = {"result": "granted", **fields, "reason": None}

        def durable(failure: OSError | None) -> None:
            # A grant is answered once it is on disk: a crash after the reply still
            # reclaims it. One that cannot be written is no grant (see _withdraw), except
            # a reclaim after a restart: state.json already holds that claim (it was read
            # from it), so the failed write loses nothing a restart needs; the writer
            # retries it until the disk takes it.
            if failure is not None and how == "restart":
                _log.warning(
                    "claim %s reclaimed after the restart and kept: the state file already "
                    "holds it (the write that failed is retried)",
                    record.id,
                )
            elif failure is not None:
                self._withdraw(record, failure)
                return
            if how == "restart":
                self.restored[record.id] = {"claim": record.id, "result": "granted"}
            self._resolve(record, result)
            if not recheck:
                self._broadcast("granted", fields)

        self._save(record, then=durable)
        self._plan_renewal(record, event.expires)
        if recheck:
            self._reverify(record)
        elif how == "verify":
            self.suspicions["confirmed"] += 1

    def _withdraw(self, record: ClaimRecord, failure: OSError) -> None:
        """The state write carrying a grant failed: the claim is released, whatever made the
        grant (a claim, a reclaim, a renewal; not a reclaim after a restart). Kept, it would be
        defended now but forgotten by a restart, while its application believes it held;
        released, everyone is told: the request gets ``state-write-failed``, watchers a
        ``released`` event, and the next state write no longer holds it."""
        reason = failure.strerror or str(failure)
        self._resolve_error(
            record,
            f"the state write failed ({reason}); the claim was released: claim again once "
            "the state directory can be written",
            ErrorCode.STATE_WRITE_FAILED,
        )
        if self.claims.get(record.id) is not record:
            return  # released meanwhile
        _log.error("claim %s released: its state write failed: %s", record.id, reason)
        self._release(record, "state-write-failed")

    def _failed(self, record: ClaimRecord, event: ClaimFailed) -> None:
        was = record.state
        self._forget(record)
        fields = self._fields(record) | {"reason": event.reason.value}
        if event.holder is not None:
            fields["holder"] = f"{event.holder:016x}"  # proxy-defended: the claimant (§5.1)
        self._resolve(record, {"result": "denied", **fields, "claim": None, "expires": None})
        if was == "claiming":
            self._broadcast("denied", fields)
            return
        how = {"reclaiming": "restart", "renewing": "renewal"}.get(was, "reclaim")
        if how == "renewal" and record.waiters:
            how = "reclaim"
        elif how == "renewal" and record.verifying:
            how = "verify"
        if how == "restart":
            self.restored[record.id] = {**fields, "result": "collision"}
        if how == "verify":
            self.suspicions["conflicts"] += 1
        now = self.wall_clock()
        self.conflicts.record("lost", self._fields(record), event.reason.value, None, now)
        _log.warning("collision on %s of claim %s: %s", how, record.id, event.reason.value)
        self._broadcast("collision", fields | {"how": how})
        self._save(record)

    def _lost(self, record: ClaimRecord, event: ClaimLost) -> None:
        """A held claim ended without a reclaim of ours running: its proxy-defense
        announcement was denied (UIAP §5.1, how ``announcement``), or a periodic
        re-verification was denied or yielded to a larger device ID (how ``verify``)."""
        self._forget(record)
        self._resolve_error(record, "the claim was lost to another device")
        how = "announcement" if event.reason is LossReason.ANNOUNCEMENT_DENIED else "verify"
        fields = self._fields(record) | {"reason": event.reason.value, "how": how}
        if event.winner is not None:
            fields["winner"] = f"{event.winner:016x}"  # the tie-break's winner
        self.conflicts.record(
            "lost", self._fields(record), event.reason.value, event.winner, self.wall_clock()
        )
        _log.warning("collision on claim %s: %s", record.id, event.reason.value)
        self._broadcast("collision", fields)
        self._save(record)

    def _fields(self, record: ClaimRecord) -> dict[str, Any]:
        return {
            "claim": record.id,
            "domain": str(record.params.domain),
            **space_to_json(record.params.space),
        }

    def _plan_renewal(self, record: ClaimRecord, engine_expires: float | None) -> None:
        if not record.params.renew or engine_expires is None:
            return
        loop = asyncio.get_running_loop()
        # Choice: renew halfway through the lifetime, and never later than three reclaim
        # durations before its end, so a lost first attempt still leaves time.
        margin = max(record.params.lifetime / 2, 3 * reclaim_seconds(self.engine_config))
        if record.renewal is not None:
            record.renewal.cancel()  # planned by an earlier grant (a re-verification since)
        record.renewal = loop.call_at(engine_expires - margin, self._renew, record)

    def _renew(self, record: ClaimRecord) -> None:
        record.renewal = None
        if self.claims.get(record.id) is not record or record.state != "held":
            return
        record.state = "renewing"
        self._run(record, record.params.lifetime, reclaim=True)

    # ------------------------------------------------------------------ bookkeeping

    def _resolve(self, record: ClaimRecord, result: dict[str, Any]) -> None:
        loop = asyncio.get_running_loop()
        for waiter in record.waiters:
            if not waiter.done():
                waiter.set_result(result | {"latency": round(loop.time() - record.started, 6)})
        record.waiters.clear()

    def _resolve_error(
        self, record: ClaimRecord, message: str, code: ErrorCode = ErrorCode.STOPPING
    ) -> None:
        for waiter in record.waiters:
            if not waiter.done():
                waiter.set_exception(APIError(code, message))
        record.waiters.clear()

    def _forget(self, record: ClaimRecord) -> None:
        if record.renewal is not None:
            record.renewal.cancel()
            record.renewal = None
        self.claims.pop(record.id, None)
        if record.handle is not None and self._by_handle.get(record.handle) is record:
            del self._by_handle[record.handle]

    def _broadcast(self, name: str, fields: dict[str, Any]) -> None:
        self.events_sent[name] += 1
        for callback in list(self._subscribers):
            callback(name, fields)

    def _save(self, record: ClaimRecord, then: AfterWrite | None = None) -> None:
        """Write ``record``'s change (one journal record, whatever the claims held)."""
        if then is None:
            self.writer.save(claim=record.id)
            return

        def counted(failure: OSError | None) -> None:
            # Counted here, where an answer waits for the write; changes nobody waits on
            # (an expiry, a collision) share a counted write or are retried unseen.
            self.state_saves["failed" if failure is not None else "written"] += 1
            then(failure)

        self.writer.save(counted, claim=record.id)

    @property
    def node_interfaces(self) -> tuple[str, ...]:
        return tuple(self.node.interfaces)

    @property
    def state_write_errors(self) -> int:
        return self.writer.errors

    def status(self) -> ServiceStatus:
        """A snapshot of the service, its node and its state writes (the API's ``status``).

        References: UIAP §2.1.1 (the service), §4.1 (device ID), §7.
        """
        node_status = self.node.status()
        auth = auth_status(self.authenticator)
        engine = getattr(self.node, "engine", None)  # a test's node may have none
        tables = engine.table_sizes() if engine is not None else {}
        schedule = engine.verification_schedule() if engine is not None else {}
        counters = node_status.get("engine", {})
        probes = {
            "started": counters.get("verifications_started", 0),
            "confirmed": counters.get("verifications_confirmed", 0),
        }
        return ServiceStatus(
            device_id=self.node.device_id,
            interfaces=node_status.get("interfaces", []),
            claims=self.claims.counts() | {"proxied": tables.get("proxy_records", 0)},
            counters=node_status,
            drops=node_drops(node_status) | auth.get("dropped", {}),
            events=dict(self.events_sent),
            state_write_errors=self.writer.errors,
            state_write_pending=self.writer.pending,
            state_write_last_error=self.writer.last_error,
            restored=list(self.restored.values()),
            auth=auth,
            device_id_conflicts=self.device_id_conflicts.summary(),
            tables=tables,
            verification=verification_status(
                schedule,
                {handle: record.id for handle, record in self._by_handle.items()},
                self.engine_config.verify_interval,
                self.wall_clock() - _engine_now(),
                {"probes": probes, "suspicions": self.suspicions},
            ),
            conflicts=self.conflicts.summary(),
            state_saves=dict(self.state_saves),
            site_split=self.site_split.summary(),
        )

    def _saved_claim(self, claim_id: str) -> dict[str, Any] | None:
        """What the state directory keeps of a claim: its saved form, None once gone."""
        record = self.claims.get(claim_id)
        return record.saved_form() if record is not None and record.persistent else None

    def _snapshot(self) -> dict[str, Any]:
        claims = [record.saved_form() for record in self.claims.values() if record.persistent]
        return {"device_id": f"{self.node.device_id:016x}", "claims": claims}


def _engine_now() -> float:
    """The engine's clock (the running loop's time, UIAPNode and LocalNode alike)."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return time.monotonic()  # the default loop's clock
