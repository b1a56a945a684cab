"""Real multi-host networks from Linux network namespaces, and UIAP nodes running in them.

Every namespace name starts with a per-process prefix (the pytest-xdist worker, the pid and
a random tag), so parallel workers and runs by other people on the same machine never
collide, and teardown deletes exactly what this process created. DAD is off in every
namespace before any link comes up (a tentative link-local address cannot be sent from),
``lo`` is up, and shared segments are Linux bridges with multicast snooping off so
link-local multicast reaches every port.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import secrets
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("node_driver.py")
#: Every namespace this process creates starts with this and a dash: unique per xdist
#: worker ("gw0", ...; "main" without xdist) and per run (the pid and a random tag).
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
PREFIX = f"ukt-{XDIST_WORKER}-{os.getpid()}-{secrets.token_hex(3)}"
#: Generous: outcomes are asserted, never timings; the machine is shared and slow.
WAIT_S = 60.0
#: Fast claim timers for tests (seconds; the draft's are 0.5 and 1.0, UIAP §10): a new
#: claim takes 0.45 s. The timeout still leaves a loaded machine 0.3 s for a Claim-Deny
#: to come back, so outcomes never depend on scheduling luck.
FAST = {"claim_period": 0.05, "claim_timeout": 0.3}
#: The experimental Domain ID the tests claim in (UIAP §6: authority 0x0FFF).
DOMAIN = "0fff:0000:00e0:0000"


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run an ``ip``/``nft``/``sysctl`` command; failures raise with its stderr."""
    done = subprocess.run(args, capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {done.stderr.strip()}")
    return done


@functools.cache
def namespaces_unavailable() -> str | None:
    """Why namespaces cannot be made here, or None (probed once per process)."""
    if os.geteuid() != 0:
        return "network namespaces need root (CI runs as root)"
    if shutil.which("ip") is None:
        return "the ip command (iproute2) is not installed"
    probe = f"{PREFIX}-probe"
    done = run("ip", "netns", "add", probe, check=False)
    if done.returncode != 0:
        return f"cannot create a network namespace: {done.stderr.strip()}"
    run("ip", "netns", "del", probe, check=False)
    return None


def cleanup_prefix(prefix: str = PREFIX) -> None:
    """Delete every namespace named ``prefix-...`` (only ours: the dash ends the prefix, so
    another process's longer pid or tag never matches)."""
    listing = run("ip", "netns", "list", check=False).stdout
    for line in listing.splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith(prefix + "-"):
            run("ip", "netns", "del", name, check=False)


class Network:
    """Hosts (namespaces), point-to-point links and shared segments; torn down by close()."""

    def __init__(self) -> None:
        self.namespaces: list[str] = []
        self.nodes: list[NodeProcess] = []
        self._segments = 0

    def ns(self, host: str) -> str:
        return f"{PREFIX}-{host}"

    def add_host(self, host: str) -> str:
        name = self.ns(host)
        run("ip", "netns", "add", name)
        self.namespaces.append(name)
        self.exec(
            host,
            "sysctl",
            "-qw",
            "net.ipv6.conf.all.accept_dad=0",
            "net.ipv6.conf.default.accept_dad=0",
            "net.ipv6.conf.default.dad_transmits=0",
        )
        self.exec(host, "ip", "link", "set", "lo", "up")
        return name

    def exec(self, host: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run("ip", "netns", "exec", self.ns(host), *args, check=check)

    def link(self, host_a: str, if_a: str, host_b: str, if_b: str) -> None:
        """A veth pair: ``if_a`` in ``host_a`` to ``if_b`` in ``host_b``, both up."""
        ns_a, ns_b = self.ns(host_a), self.ns(host_b)
        run(
            "ip",
            "link",
            "add",
            if_a,
            "netns",
            ns_a,
            "type",
            "veth",
            "peer",
            "name",
            if_b,
            "netns",
            ns_b,
        )
        run("ip", "-n", ns_a, "link", "set", if_a, "up")
        run("ip", "-n", ns_b, "link", "set", if_b, "up")

    def segment(self, hosts: list[str], interface: str = "e0") -> str:
        """A shared segment: a bridge in its own namespace, one port per host."""
        self._segments += 1
        switch = f"sw{self._segments}"
        self.add_host(switch)
        ns_switch = self.ns(switch)
        run("ip", "-n", ns_switch, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0")
        run("ip", "-n", ns_switch, "link", "set", "br0", "up")
        for number, host in enumerate(hosts):
            port = f"p{number}"
            self.link(switch, port, host, interface)
            run("ip", "-n", ns_switch, "link", "set", port, "master", "br0")
        return switch

    def set_link(self, host: str, interface: str, *, up: bool) -> None:
        run("ip", "-n", self.ns(host), "link", "set", interface, "up" if up else "down")

    def add_ipv4(self, host: str, interface: str, address: str) -> None:
        run("ip", "-n", self.ns(host), "addr", "add", address, "dev", interface)

    def start_node(
        self, host: str, config: dict[str, Any], device_id: int | None = None
    ) -> NodeProcess:
        node = NodeProcess(self, host, config, device_id)
        self.nodes.append(node)
        node.wait_ready().wait_participating(config.get("interfaces") or [])
        return node

    def start_nodes(self, configs: dict[str, dict[str, Any]]) -> dict[str, NodeProcess]:
        """Start one node per host at once (they start in parallel), then wait for all."""
        nodes = {host: NodeProcess(self, host, config, None) for host, config in configs.items()}
        self.nodes.extend(nodes.values())
        for host, node in nodes.items():
            node.wait_ready().wait_participating(configs[host].get("interfaces") or [])
        return nodes

    def close(self) -> None:
        """Stop every node, then delete every namespace, even if stopping a node failed."""
        try:
            for node in self.nodes:
                node.close()
        finally:
            for name in reversed(self.namespaces):
                run("ip", "netns", "del", name, check=False)
            self.namespaces.clear()


def _reply_to(number: int) -> Callable[[dict[str, Any]], bool]:
    return lambda line: line.get("id") == number


class NodeProcess:
    """A UIAPNode in a subprocess inside a namespace, spoken to in JSON lines."""

    def __init__(
        self, network: Network, host: str, config: dict[str, Any], device_id: int | None
    ) -> None:
        self.host = host
        command = ["ip", "netns", "exec", network.ns(host), sys.executable, str(DRIVER)]
        command += ["--config", json.dumps(config)]
        if device_id is not None:
            command += ["--device-id", f"{device_id:x}"]
        env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self._lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self._replies: dict[int, dict[str, Any]] = {}
        self._next_id = 0
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.ready: dict[str, Any] = {}

    def wait_ready(self) -> NodeProcess:
        """Wait until the node has started; ``ready`` then holds its first line."""
        self.ready = self._wait(lambda line: "ready" in line)
        return self

    def _read(self) -> None:
        assert self.process.stdout is not None
        for text in self.process.stdout:
            self._lines.put(json.loads(text))
        self._lines.put(None)

    def _wait(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_S
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{self.host}: no answer in {WAIT_S} s")
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError(f"{self.host}: driver exited: {self._stderr()}")
            if "event" in line:
                self.events.append(line)
            if "id" in line:
                self._replies[line["id"]] = line
            if predicate(line):
                return line

    def _stderr(self) -> str:
        self.process.wait(timeout=10)
        assert self.process.stderr is not None
        return self.process.stderr.read()

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send a command and wait for its reply."""
        return self.requests([{"op": op} | fields])[0]

    def requests(self, commands: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send commands at once (the node runs them concurrently); their replies in order."""
        assert self.process.stdin is not None
        numbers = []
        for command in commands:
            self._next_id += 1
            numbers.append(self._next_id)
            self.process.stdin.write(json.dumps(command | {"id": self._next_id}) + "\n")
        self.process.stdin.flush()
        replies = []
        for number in numbers:
            if number not in self._replies:
                self._wait(_reply_to(number))
            replies.append(self._replies.pop(number))
        return replies

    def claim(self, domain: str, space: dict[str, Any], **fields: Any) -> dict[str, Any]:
        return self.request("claim", domain=domain, space=space, **fields)

    def status(self) -> dict[str, Any]:
        return self.request("status")

    def wait_until(self, check: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
        """Poll status until ``check`` holds (outcome, not timing: generous deadline)."""
        deadline = time.monotonic() + WAIT_S
        while True:
            status = self.status()
            if check(status):
                return status
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.host}: never {what}: {status}")
            time.sleep(0.05)

    def participating(self) -> set[str]:
        return {i["name"] for i in self.status()["interfaces"] if i["participating"]}

    def wait_participating(self, names: list[str]) -> None:
        """Wait until the node uses every interface in ``names`` (a carrier and a
        link-local address can take a moment after a link is set up)."""
        self.wait_until(
            lambda status: (
                set(names) <= {i["name"] for i in status["interfaces"] if i["participating"]}
            ),
            f"participating on {names}",
        )

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.process.stdin.flush()
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
