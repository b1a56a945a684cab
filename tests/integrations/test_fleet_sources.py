"""PostgresNodeSource and EtcdNodeSource against real servers the tests start.

For each service: many processes leasing from one server make values with no duplicate; a
holder stopped with SIGSTOP past its lease and resumed makes no value with its old node (which
another holder now has) and then uses a node nobody else holds; with the server stopped or
hung, a generator makes no value after its lease's deadline; lease churn never hands one node
to two live holders (checked in the server's own history: PostgreSQL's grant log written by a
trigger, etcd's key revisions). Pauses are driven by conditions read from the server, never
by sleeping for a guessed time.

References: RFC 9562 §6.4, §6.9, §6.10.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from etcd_support import EtcdServer, throwaway_etcd
from pg_support import require_module, throwaway_cluster

from uuidkit import _system
from uuidkit.bridge import EtcdNodeSource, PostgresNodeSource, node_bound_generator
from uuidkit.bridge.etcd_source import KEY_PREFIX, node_key
from uuidkit.bridge.leased import LeasedNodeSource
from uuidkit.bridge.nodespace import leased_node
from uuidkit.errors import NodeUnavailableError
from uuidkit.generators import NodeEvent, NodeEventKind
from uuidkit.integrations.pgcluster import Cluster
from uuidkit.nodelayouts import read_node_layout

CONDITION_TIMEOUT_S = 60.0
FORK = multiprocessing.get_context("fork")


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + CONDITION_TIMEOUT_S
    while not condition():
        assert time.monotonic() < deadline, f"not within {CONDITION_TIMEOUT_S} s: {what}"
        time.sleep(0.05)


def draws_of(node: int) -> Callable[[int], bytes]:
    """A random source whose leased_node() is ``node`` (the inverse of its bit spreading)."""
    value46 = (((node >> 41) & 0x3F) << 40) | (node & ((1 << 40) - 1))
    return lambda n: value46.to_bytes(n)


def pool_draws(seed: int, pool: int) -> Callable[[int], bytes]:
    """Draws from a pool of ``pool`` nodes, so that holders contend for the same ones."""
    import random

    rng = random.Random(seed)
    return lambda n: (1 + rng.randrange(pool)).to_bytes(n)


class Service:
    name = ""

    def make(self, **kwargs: Any) -> LeasedNodeSource:
        raise NotImplementedError

    def held(self, node: int) -> bool:
        raise NotImplementedError

    def pause(self) -> None:
        raise NotImplementedError

    def resume(self) -> None:
        raise NotImplementedError

    def check_history(self) -> int:
        """Assert no node was granted while another holder's lease lived; grants checked."""
        raise NotImplementedError


class Postgres(Service):
    name = "postgres"

    def __init__(self, cluster: Cluster, psycopg: Any) -> None:
        self.cluster, self.psycopg = cluster, psycopg
        with self._connect() as conn:
            conn.execute(_HISTORY)

    def _connect(self) -> Any:
        return self.psycopg.connect(self.cluster.dsn(), autocommit=True)

    def make(self, **kwargs: Any) -> LeasedNodeSource:
        # One lease per source: these tests look at one lease against the real server (its
        # grant, renewals, connection); spares are tested in tests/bridge/test_spares.py.
        kwargs.setdefault("spares", 0)
        return PostgresNodeSource(self.cluster.dsn(), **kwargs)

    def held(self, node: int) -> bool:
        with self._connect() as conn:
            row = conn.execute(
                "SELECT expires > now() FROM uuidkit_node_leases WHERE node = %s", (node,)
            ).fetchone()
        return bool(row and row[0])

    def pause(self) -> None:
        for pid in self.cluster.server_pids():
            os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        for pid in self.cluster.server_pids():
            os.kill(pid, signal.SIGCONT)

    def check_history(self) -> int:
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT node, old_epoch, new_epoch, old_expires, granted_at FROM grant_log"
            ).fetchall()
        for node, old_epoch, new_epoch, old_expires, granted_at in rows:
            assert new_epoch == (old_epoch or 0) + 1, (node, old_epoch, new_epoch)
            assert old_expires is None or old_expires <= granted_at, (node, new_epoch)
        return len(rows)


# A grant log kept by the server itself: every new grant (a new row, or a new epoch) with the
# expiry of the lease it replaced and the server time of the grant.
_HISTORY = """
CREATE TABLE IF NOT EXISTS uuidkit_node_leases (
    node bigint PRIMARY KEY, epoch bigint NOT NULL, holder text NOT NULL,
    expires timestamptz NOT NULL);
CREATE TABLE IF NOT EXISTS grant_log (
    node bigint, old_epoch bigint, new_epoch bigint, old_expires timestamptz,
    granted_at timestamptz);
CREATE OR REPLACE FUNCTION log_grant() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO grant_log VALUES (NEW.node, NULL, NEW.epoch, NULL, now());
    ELSIF NEW.epoch <> OLD.epoch THEN
        INSERT INTO grant_log VALUES (NEW.node, OLD.epoch, NEW.epoch, OLD.expires, now());
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE OR REPLACE TRIGGER log_grant AFTER INSERT OR UPDATE ON uuidkit_node_leases
    FOR EACH ROW EXECUTE FUNCTION log_grant();
"""


class Etcd(Service):
    name = "etcd"

    def __init__(self, server: EtcdServer) -> None:
        self.server = server

    def make(self, **kwargs: Any) -> LeasedNodeSource:
        # One lease per source: these tests look at one lease against the real server (its
        # grant, renewals, connection); spares are tested in tests/bridge/test_spares.py.
        kwargs.setdefault("spares", 0)
        return EtcdNodeSource(self.server.endpoint, **kwargs)

    def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        connection = http.client.HTTPConnection("127.0.0.1", self.server.client_port, timeout=10)
        try:
            connection.request("POST", path, json.dumps(body))
            answer: dict[str, Any] = json.loads(connection.getresponse().read())
            return answer
        finally:
            connection.close()

    def _range(self, key: str, **extra: Any) -> list[dict[str, Any]]:
        body = {"key": base64.b64encode(key.encode()).decode(), **extra}
        kvs: list[dict[str, Any]] = self._call("/v3/kv/range", body).get("kvs", [])
        return kvs

    def held(self, node: int) -> bool:
        return bool(self._range(node_key(node)))

    def pause(self) -> None:
        self.server.pause()

    def resume(self) -> None:
        self.server.resume()

    def check_history(self) -> int:
        # Every revision's view of the node keys: a key is only ever created (version 1),
        # never overwritten by a second holder while it lives.
        end = base64.b64encode((KEY_PREFIX[:-1] + "0").encode()).decode()
        latest = int(self._call("/v3/kv/range", {"key": "AA=="})["header"]["revision"])
        for revision in range(1, latest + 1):
            for kv in self._range(KEY_PREFIX, range_end=end, revision=revision):
                assert int(kv.get("version", 1)) == 1, kv
        return latest


@pytest.fixture(scope="module", params=["postgres", "etcd"])
def service(request: pytest.FixtureRequest) -> Iterator[Service]:
    if request.param == "postgres":
        psycopg = require_module("psycopg")
        for cluster in throwaway_cluster():
            yield Postgres(cluster, psycopg)
    else:
        for server in throwaway_etcd():
            yield Etcd(server)


# ---------------------------------------------------------------------------- many processes


def _make_values(service: Service, count: int, out: str) -> None:
    with service.make(lifetime_s=10) as source:
        make = node_bound_generator(7, source)
        Path(out).write_bytes(b"".join(value.bytes for value in make.generate(count)))


def _run_writers(service: Service, tmp_path: Path, processes: int, count: int) -> None:
    outs = [str(tmp_path / f"values-{i}") for i in range(processes)]
    workers = [FORK.Process(target=_make_values, args=(service, count, o)) for o in outs]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
        assert worker.exitcode == 0
    data = b"".join(Path(o).read_bytes() for o in outs)
    assert len(data) == 16 * processes * count
    values = {data[i : i + 16] for i in range(0, len(data), 16)}
    assert len(values) == processes * count  # zero duplicates


def test_processes_leasing_from_one_server_make_no_duplicate(
    service: Service, tmp_path: Path
) -> None:
    _run_writers(service, tmp_path, processes=4, count=20_000)


@pytest.mark.slow
def test_millions_of_values_from_many_processes_have_no_duplicate(
    service: Service, tmp_path: Path
) -> None:
    _run_writers(service, tmp_path, processes=6, count=500_000)  # 3 million


# ---------------------------------------------------------------------------- SIGSTOP


def _paused_holder(service: Service, pipe: Any) -> None:
    events: list[NodeEvent] = []
    with service.make(lifetime_s=2, margin_s=0.5) as source:
        make = node_bound_generator(7, source)
        source.subscribe(events.append)
        pipe.send(read_node_layout(make(), "v7-node").node)
        pipe.recv()  # "go": sent after the parent stopped, waited for and resumed us
        try:
            node: int | str = read_node_layout(make(), "v7-node").node
        except NodeUnavailableError as error:
            node = str(error)
        # The LOST of the old node may come from the renewer or watchdog thread, which were
        # stopped too and may be scheduled after this one: its delivery is waited for (the
        # value above already carries the new node, which is what must hold at once).
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(
            e.kind is NodeEventKind.LOST for e in list(events)
        ):
            time.sleep(0.01)
        pipe.send((node, [(e.kind.value, e.node) for e in events]))
        pipe.recv()  # hold the new node until the parent has looked at the server


def test_a_holder_resumed_after_its_lease_uses_a_node_nobody_else_holds(
    service: Service,
) -> None:
    parent_end, child_end = FORK.Pipe()
    child = FORK.Process(target=_paused_holder, args=(service, child_end))
    child.start()
    try:
        old = parent_end.recv()
        assert child.pid is not None
        os.kill(child.pid, signal.SIGSTOP)
        wait_until(lambda: not service.held(old), "the paused holder's lease to lapse")
        with service.make(lifetime_s=30, random_bytes=draws_of(old)) as other:
            assert other.current().node == old  # someone else holds it now
            os.kill(child.pid, signal.SIGCONT)
            parent_end.send("go")
            new, events = parent_end.recv()
            assert isinstance(new, int), new
            assert new != old and service.held(new) and service.held(old)
            assert ("lost", old) in events and ("granted", new) in events
            parent_end.send("exit")
    finally:
        os.kill(child.pid or 0, signal.SIGCONT)
        child.join(30)


#: A lifetime short enough to wait out (etcd rounds a TTL up to its minimum, about 2 s).
LAPSE_LIFETIME_S = 2


def test_a_lease_that_lapsed_at_the_server_cannot_be_renewed(service: Service) -> None:
    # Once a lease's lifetime ended on the server's clock, the node may already belong to
    # another holder: a renewal must be refused, not extend it (the lease's fencing, RFC
    # 9562 §6.4; postgres_source.py "Renewal": ``expires > now()``; etcd ends a lease at
    # its TTL and a keepalive for it answers TTL 0). Here nobody took the node, so only
    # the expiry test can refuse it. The lapse is read from the server, never slept for.
    with service.make(lifetime_s=30) as source:
        backend = source.backend
        lapsing_node = leased_node(lambda n: (0x1A95ED).to_bytes(n))
        live_node = leased_node(lambda n: (0x11FE).to_bytes(n))
        lapsing = backend.acquire(lapsing_node, LAPSE_LIFETIME_S)
        live = backend.acquire(live_node, 30)
        assert lapsing is not None and live is not None
        wait_until(lambda: not service.held(lapsing_node), "the short lease to lapse")
        assert backend.renew(live, 30) is not None  # a live lease is renewed
        assert backend.renew(lapsing, 30) is None
        assert not service.held(lapsing_node)


def test_a_released_lease_ends_at_the_server_and_the_release_reports_no_failure(
    service: Service,
) -> None:
    # LeaseBackend.release ends the grant at the service; an error from it would be
    # logged by the source as a failed release (leased.py) although the lease ended.
    with service.make(lifetime_s=30) as source:
        backend = source.backend
        node = leased_node(lambda n: (0x2E1EA5).to_bytes(n))
        grant = backend.acquire(node, 30)
        assert grant is not None and service.held(node)
        backend.release(grant)  # raises nothing
        assert not service.held(node)


# ---------------------------------------------------------------------------- server loss


def _values_until_refused(source: LeasedNodeSource, stop_server: Callable[[], None]) -> None:
    make = node_bound_generator(7, source)
    lease = source.current()
    make()
    stop_server()
    assert lease.deadline_mono_ns is not None
    started: list[int] = []
    while True:
        before = _system.monotonic_ns()
        try:
            make()
        except NodeUnavailableError:
            break
        started.append(before)
        time.sleep(0.01)
    # Every value made after the server went away was begun before the lease's deadline
    # (or a later renewal's, which needs the server: there is none).
    assert all(t < lease.deadline_mono_ns for t in started)


def test_with_the_server_hung_the_generator_stops_before_its_lease_ends(
    service: Service,
) -> None:
    with service.make(lifetime_s=3, margin_s=0.5) as source:
        try:
            _values_until_refused(source, service.pause)
        finally:
            service.resume()


def test_with_the_server_restarted_the_generator_stops_then_leases_again(
    service: Service,
) -> None:
    restart = _restarter(service)
    with service.make(lifetime_s=3, margin_s=0.5) as source:
        lost: list[NodeEvent] = []
        source.subscribe(lambda e: lost.append(e) if e.kind is NodeEventKind.LOST else None)
        try:
            _values_until_refused(source, restart.stop)
        finally:
            restart.start()
        assert lost
        wait_until(lambda: _leases(source), "a new lease after the restart")


def _leases(source: LeasedNodeSource) -> bool:
    try:
        source.current()
    except NodeUnavailableError:
        return False
    return True


class _Restarter:
    def __init__(self, stop: Callable[[], None], start: Callable[[], None]) -> None:
        self.stop, self.start = stop, start


def _restarter(service: Service) -> _Restarter:
    if isinstance(service, Postgres):
        return _Restarter(service.cluster.stop_server, service.cluster.start_server)
    assert isinstance(service, Etcd)
    return _Restarter(service.server.stop, service.server.start)


# ---------------------------------------------------------------------------- churn


def _one_holder(service: Service, seed: int, out: str, vanish: bool) -> None:
    source = service.make(lifetime_s=2, margin_s=0.5, random_bytes=pool_draws(seed, 3))
    make = node_bound_generator(7, source)
    # Every node of the pool may be taken: fine, the next holder tries again.
    with contextlib.suppress(NodeUnavailableError):
        Path(out).write_bytes(b"".join(value.bytes for value in make.generate(200)))
    if vanish:
        os._exit(0)  # gone without releasing: its lease must lapse before a regrant
    source.close()


def _churner(service: Service, seed: int, rounds: int, out: str) -> None:
    for round_ in range(rounds):
        args = (service, seed + 1000 * round_, f"{out}-{round_}", round_ % 3 == 2)
        holder = FORK.Process(target=_one_holder, args=args)
        holder.start()
        holder.join()


def test_lease_churn_never_hands_one_node_to_two_live_holders(
    service: Service, tmp_path: Path
) -> None:
    outs = [str(tmp_path / f"churn-{i}") for i in range(4)]
    workers = [
        FORK.Process(target=_churner, args=(service, i, 12, out)) for i, out in enumerate(outs)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
        assert worker.exitcode == 0
    data = b"".join(path.read_bytes() for path in tmp_path.glob("churn-*-*"))
    assert len({data[i : i + 16] for i in range(0, len(data), 16)}) == len(data) // 16
    assert service.check_history() > 0


# ---------------------------------------------------------------------------- fork


def _child_value(make: Callable[[], Any], pipe: Any) -> None:
    pipe.send(read_node_layout(make(), "v7-node").node)


def test_a_forked_child_leases_its_own_node_and_leaves_the_parents_connection(
    service: Service,
) -> None:
    with service.make(lifetime_s=30) as source:
        make = node_bound_generator(7, source)
        parent_node = read_node_layout(make(), "v7-node").node
        connection = getattr(source.backend, "_conn", None)
        parent_end, child_end = FORK.Pipe()
        child = FORK.Process(target=_child_value, args=(make, child_end))
        child.start()
        child_node = parent_end.recv()
        child.join(30)
        assert child.exitcode == 0
        assert child_node != parent_node
        lease, grant = source.current(), source.grant
        assert grant is not None
        assert source.renew_once(lease, grant)  # the parent's lease and connection live on
        assert getattr(source.backend, "_conn", None) is connection
        if connection is not None:  # PostgreSQL: the same server session answers
            assert connection.execute("SELECT 1").fetchone() == (1,)
