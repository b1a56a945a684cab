"""The daemon's metrics: Prometheus text that Prometheus's own parser and ``promtool`` accept,
scraped from a running daemon while a claim is in progress and after claims were answered.

References: UIAP §2.4.1 (a claim's timers), §2.4.2 (denial); the Prometheus text exposition
format; docs/uiap-daemon.md (Operating a site).
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from daemon_site import DOMAIN, FAST, WAIT_S, Host
from prometheus_client.parser import text_string_to_metric_families

from uuidkit.daemon.localsite import LocalSite
from uuidkit.daemon.metrics import LATENCY_BUCKETS_S, ClaimMetrics, render_metrics
from uuidkit.uiap.space import UIDSpace

#: A claim period long enough that a claim cannot end while the test looks at it: a new
#: claim waits for three periods and the timeout (UIAP §2.4.1), minutes here; the host is
#: stopped instead, which ends the claim at once.
SLOW = {"claim_period": 60.0, "claim_timeout": 60.0}


def _families(text: str) -> dict[str, Any]:
    return {family.name: family for family in text_string_to_metric_families(text)}


def _value(families: dict[str, Any], sample_name: str, **labels: str) -> float:
    found = [
        sample.value
        for family in families.values()
        for sample in family.samples
        if sample.name == sample_name and sample.labels == labels
    ]
    assert len(found) == 1, (sample_name, labels, found)
    return float(found[0])


def _promtool_accepts(text: str) -> None:
    if shutil.which("promtool") is None:
        return  # the parser above is the check; CI installs promtool as well
    done = subprocess.run(
        ["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and not done.stdout.strip() and not done.stderr.strip(), (
        done.stdout + done.stderr
    )


async def _claiming(host: Host) -> None:
    async with host.client() as client:
        for _ in range(int(WAIT_S / 0.01)):
            if any(c["state"] == "claiming" for c in await client.list_claims()):
                return
            await asyncio.sleep(0.01)
    raise AssertionError("the claim never started")


#: The families an operator watches beyond the claims (docs/uiap-daemon.md, "Operating a
#: site"), each present in every scrape, even before it has counted anything.
WATCHED = (
    "uiapd_state_saves",
    "uiapd_state_write_failures",
    "uiapd_table_entries",
    "uiapd_reverifications_started",
    "uiapd_reverifications_confirmed",
    "uiapd_conflicts_found",
    "uiapd_site_split_datagrams",
    "uiapd_site_split_warnings",
)
TABLES = ("proxy_records", "flood_records", "own_claims", "rate_limit_buckets")


async def _proxying(host: Host) -> dict[str, Any]:
    """``host``'s metrics once it proxy-defends a claim (the X+R announcement, UIAP §5.1,
    goes out at the grant and reaches it through the loop)."""
    async with host.client() as client:
        for _ in range(int(WAIT_S / 0.01)):
            families = _families(await client.metrics())
            if _value(families, "uiapd_table_entries", table="proxy_records") > 0:
                return families
            await asyncio.sleep(0.01)
    raise AssertionError("the proxied claim never reached the proxy table")


def test_a_scrape_during_a_claim_and_after_the_outcomes(tmp_path: Path) -> None:
    async def main() -> None:
        site = LocalSite()
        slow, fast = Host(site, tmp_path, "slow", **SLOW), Host(site, tmp_path, "fast", **FAST)
        proxied = Host(site, tmp_path, "proxied", proxy=True, **FAST)
        for host in (slow, fast, proxied):
            await host.start()
        try:
            async with slow.client() as waiting, fast.client() as client:
                pending = asyncio.create_task(waiting.claim(DOMAIN, UIDSpace.unique(b"\x07"), 60))
                await _claiming(slow)
                async with slow.client() as scraper:
                    text = await scraper.metrics()
                families = _families(text)
                assert _value(families, "uiapd_claims", state="claiming") == 1
                assert _value(families, "uiapd_claim_latency_seconds_count") == 0
                assert _value(families, "uiapd_uptime_seconds") >= 0
                assert set(WATCHED) <= set(families)
                assert _value(families, "uiapd_state_saves_total", result="written") == 0
                assert _value(families, "uiapd_table_entries", table="own_claims") == 1
                assert _value(families, "uiapd_table_entries", table="proxy_records") == 0
                for kind in ("probe", "suspicion"):
                    assert _value(families, "uiapd_reverifications_started_total", kind=kind) == 0
                _promtool_accepts(text)

                assert (await client.claim(DOMAIN, UIDSpace.unique(b"\x01"), 60)).granted
                denied = await client.claim(DOMAIN, UIDSpace.unique(b"\x07"), 60)
                text = await client.metrics()
            families = _families(text)
            granted = _value(families, "uiapd_claim_requests_total", result="granted", reason="")
            assert granted == 1
            # The slow host still claims 07; whether the fast one was denied depends on
            # whether it heard that attempt (UIAP §2.4.2): count the outcome it reported.
            outcome = {"result": denied.result, "reason": denied.reason or ""}
            assert _value(families, "uiapd_claim_requests_total", **outcome) == 1
            assert _value(families, "uiapd_claim_latency_seconds_count") == 2
            assert _value(families, "uiapd_claim_latency_seconds_bucket", le="+Inf") == 2
            assert _value(families, "uiapd_claims", state="held") == (2 if denied.granted else 1)
            assert _value(families, "uiapd_claim_attempts_originated_total") >= 1
            # One state write carried each grant before it was answered; a denial none.
            written = _value(families, "uiapd_state_saves_total", result="written")
            assert written == (2 if denied.granted else 1)
            assert _value(families, "uiapd_state_saves_total", result="failed") == 0
            # Floods of the other hosts were heard and recorded (UIAP §4.2.2.3).
            assert _value(families, "uiapd_table_entries", table="flood_records") >= 1
            assert all(
                _value(families, "uiapd_table_entries", table=table) >= 0 for table in TABLES
            )
            _promtool_accepts(text)
            async with proxied.client() as asking:
                assert (await asking.claim(DOMAIN, UIDSpace.unique(b"\x30"), 60)).granted
            families = await _proxying(fast)
            assert _value(families, "uiapd_claims", state="proxied") == 1
            # A claim of the proxied space fails with its own reason, naming the claimant.
            async with fast.client() as client, proxied.client() as asking:
                refused = await client.claim(DOMAIN, UIDSpace.unique(b"\x30"), 60)
                assert refused.reason == "proxy-defended"
                assert refused.raw["holder"] == (await asking.status())["device_id"]
            await slow.stop()  # the claim in progress ends, not granted
            ended = await pending
            assert not ended.granted, ended
        finally:
            for host in (slow, fast, proxied):
                await host.stop()

    asyncio.run(main())


def _status(**changes: Any) -> dict[str, Any]:
    status: dict[str, Any] = {
        "version": 1,
        "uptime": 12.5,
        "device_id": "00112233445566aa",
        "claims": {"held": 3, "claiming": 1},
        "counters": {
            "engine": {"received": 9, "forwarded": 4, "denied": 2},
            "transport": {
                "received_by_interface": {"eth0": 7, 'we"ird\\name': 1},
                "buffer_overflows_by_interface": {"eth1": 14},
                "sent_by_interface": {"eth0": 5},
                "send_failed": {},
            },
        },
        "drops": {"auth-bad-mac": 2, "truncated": 1},
        "api": {"clients": 2, "connections": 5, "requests": 40, "errors": {"not-found": 1}},
        "events": {"granted": 3, "collision": 1},
        "state_write_errors": 1,
        "state_write_pending": False,
        "auth": {
            "enabled": True, "send_key_id": 2, "key_ids": [1, 2], "sealed": 10,
            "accepted": 8, "dropped": {"auth-bad-mac": 2},
        },
        "state_saves": {"written": 6, "failed": 1},
        "tables": {"proxy_records": 11, "flood_records": 12},
        "verification": {
            "interval": 8.0, "next_due": None, "claims": [],
            "probes": {"started": 13, "confirmed": 12},
            "suspicions": {"started": 3, "confirmed": 2, "conflicts": 1},
        },
        "conflicts": {"count": 5, "kept": 4, "lost": 1, "last": []},
        "site_split": {"seen": {"eth0": {"auth-missing": 7, "auth-unknown-key": 1}}, "warnings": 1},
    }  # fmt: skip
    return status | changes


def test_every_status_figure_is_exported_under_its_name() -> None:
    claims = ClaimMetrics()
    for latency in (0.004, 0.3, 2.51, 60.0):
        claims.observe({"result": "granted", "latency": latency})
    claims.observe({"result": "denied", "reason": "denied", "latency": 0.004})
    text = render_metrics(_status(), claims)
    families = _families(text)
    assert _value(families, "uiapd_datagrams_received_total", interface='we"ird\\name') == 1
    assert _value(families, "uiapd_receive_buffer_overflows_total", interface="eth1") == 14
    assert _value(families, "uiapd_datagrams_dropped_total", reason="auth-bad-mac") == 2
    assert _value(families, "uiapd_auth_failures_total", kind="auth-bad-mac") == 2
    assert _value(families, "uiapd_auth_key_ids", key_id="2", sending="yes") == 1
    assert _value(families, "uiapd_auth_key_ids", key_id="1", sending="no") == 1
    assert _value(families, "uiapd_claim_attempts_forwarded_total") == 4
    assert _value(families, "uiapd_claim_denies_sent_total") == 2
    assert _value(families, "uiapd_state_saves_total", result="written") == 6
    assert _value(families, "uiapd_state_saves_total", result="failed") == 1
    assert _value(families, "uiapd_table_entries", table="proxy_records") == 11
    assert _value(families, "uiapd_table_entries", table="flood_records") == 12
    assert _value(families, "uiapd_reverifications_started_total", kind="probe") == 13
    assert _value(families, "uiapd_reverifications_confirmed_total", kind="suspicion") == 2
    assert _value(families, "uiapd_conflicts_found_total", outcome="kept") == 4
    assert _value(families, "uiapd_conflicts_found_total", outcome="lost") == 1
    labels = {"interface": "eth0", "kind": "auth-missing"}
    assert _value(families, "uiapd_site_split_datagrams_total", **labels) == 7
    assert _value(families, "uiapd_site_split_warnings_total") == 1
    assert _value(families, "uiapd_state_write_failures_total") == 1
    assert _value(families, "uiapd_events_total", event="collision") == 1
    assert _value(families, "uiapd_api_errors_total", code="not-found") == 1
    # The histogram is cumulative: each bucket counts the latencies at or below its bound.
    latencies = (0.004, 0.3, 2.51, 60.0, 0.004)
    for bound in LATENCY_BUCKETS_S:
        below = sum(1 for latency in latencies if latency <= bound)
        assert _value(families, "uiapd_claim_latency_seconds_bucket", le=str(bound)) == below
    assert _value(families, "uiapd_claim_latency_seconds_bucket", le="+Inf") == 5
    assert _value(families, "uiapd_claim_latency_seconds_sum") == pytest.approx(sum(latencies))
    kinds = {name: family.type for name, family in families.items()}
    assert all(kinds[name] == "counter" for name in kinds if name.endswith("_total"))
    assert all(name.startswith("uiapd_") for name in kinds)
    _promtool_accepts(text)


def test_a_status_without_transport_or_key_still_renders() -> None:
    status = _status(counters={}, auth={"enabled": False}, drops={})
    families = _families(render_metrics(status, ClaimMetrics()))
    assert _value(families, "uiapd_auth_enabled") == 0
    assert _value(families, "uiapd_claim_latency_seconds_count") == 0


# ---------------------------------------------------------------------- HTTP and textfile


async def _http(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    reply = await asyncio.wait_for(reader.read(), WAIT_S)
    writer.close()
    return reply


def test_http_and_textfile_serve_what_the_api_serves(tmp_path: Path) -> None:
    textfile = tmp_path / "uiapd.prom"
    settings = {"metrics_http": "127.0.0.1:0", "metrics_textfile": str(textfile)}

    async def main() -> None:
        site = LocalSite()
        host = Host(site, tmp_path, "a", **settings)
        daemon = await host.start()
        try:
            assert daemon.metrics is not None and daemon.metrics.address is not None
            port = daemon.metrics.address[1]
            async with host.client() as client:
                assert (await client.claim(DOMAIN, UIDSpace.unique(b"\x01"), 60)).granted
            reply = await _http(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            head, body = reply.split(b"\r\n\r\n", 1)
            assert head.startswith(b"HTTP/1.0 200 OK\r\n")
            assert b"Content-Type: text/plain; version=0.0.4" in head
            assert f"Content-Length: {len(body)}".encode() in head
            families = _families(body.decode())
            assert _value(families, "uiapd_claim_requests_total", result="granted", reason="") == 1
            assert (await _http(port, b"GET / HTTP/1.0\r\n\r\n")).startswith(b"HTTP/1.0 404")
            assert (await _http(port, b"POST /metrics HTTP/1.0\r\n\r\n")).startswith(
                b"HTTP/1.0 405"
            )
            assert (await _http(port, b"nonsense\r\n\r\n")).startswith(b"HTTP/1.0 400")
            assert (await _http(port, b"GET /" + b"x" * 9000)) == b""  # too long: closed
            # The textfile was written at the start, atomically, and is rewritten on demand.
            assert "uiapd_claims" in textfile.read_text()
            daemon.metrics.write_textfile()
            families = _families(textfile.read_text())
            assert _value(families, "uiapd_claims", state="held") == 1
            _promtool_accepts(textfile.read_text())
        finally:
            await host.stop()

    asyncio.run(main())


@pytest.mark.parametrize(
    "value", ["localhost:9464", "127.0.0.1", "127.0.0.1:0x10", "127.0.0.1:70000", "::1:9464"]
)
def test_a_metrics_address_must_be_an_ip_and_a_port(value: str) -> None:
    from uuidkit.daemon.config import ConfigError, DaemonConfig

    with pytest.raises(ConfigError, match="metrics_http"):
        DaemonConfig(metrics_http=value)
    assert DaemonConfig(metrics_http="[::1]:9464").metrics_http == "[::1]:9464"
