"""The UIAP daemon's composition root: configuration, state, node, API server, signals.

``run(config)`` runs in the foreground until SIGTERM or SIGINT: it loads the state
directory, starts the UIAP node (reclaiming the saved claims), serves the API socket and
tells the service manager it is ready (``READY=1``). SIGHUP re-reads the configuration
file: the site keys, the API limits and the log level change at once; settings that the
sockets were built with (socket path, state directory, interfaces, group, ports, family,
timers) are reported as needing a restart. A stop abandons claims in progress (their
requests fail with ``stopping``), keeps the held claims for the next start, and removes
the socket file.

References: UIAP §2.1.1, §4.4, §7, §10.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import secrets
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from uuidkit.daemon.config import ConfigError, DaemonConfig, load_config
from uuidkit.daemon.keys import read_key_file
from uuidkit.daemon.metrics_export import MetricsExporter
from uuidkit.daemon.notify import notify, reloading
from uuidkit.daemon.server import APIServer
from uuidkit.daemon.service import ClaimService, Node
from uuidkit.daemon.sitesplit import WatchedAuthenticator
from uuidkit.daemon.state import StateError, StateStore, device_id_of
from uuidkit.errors import TransportError
from uuidkit.uiap.auth import Authenticator, AuthError
from uuidkit.uiap.engine_types import EngineConfig
from uuidkit.uiap.events import Event

__all__ = ["Daemon", "NodeFactory", "engine_config_of", "new_device_id", "run"]

_log = logging.getLogger("uuidkit.daemon")

#: Makes the node: (config, engine configuration, device ID, authenticator, on_event).
NodeFactory = Callable[
    [DaemonConfig, EngineConfig, int, "Authenticator | None", Callable[[Event], None]], Node
]

#: Settings that need a restart to change (the sockets and the engine are built with them).
_RESTART_KEYS = (
    "socket",
    "state_dir",
    "interfaces",
    "claim_period",
    "claim_timeout",
    "draft_only",
    "group",
    "port",
    "reply_port",
    "ipv4",
    "proxy",
    "device_id_mode",
    "device_id_interface",
    "metrics_http",
    "metrics_textfile",
    "metrics_interval",
)


def engine_config_of(config: DaemonConfig) -> EngineConfig:
    """The engine's timers from the daemon's (UIAP §10); flood records outlive a claim;
    ``draft_only`` switches off what uuidkit adds to the draft.

    References: UIAP §10 (Table of Constants), §4.5.2 (claim lifetime).
    """
    probe = dataclasses.replace(
        EngineConfig.draft_only() if config.draft_only else EngineConfig(),
        claim_period=config.claim_period,
        claim_timeout=config.claim_timeout,
        flood_record_lifetime=1e9,
    )
    longest = probe.longest_claim_seconds()
    return dataclasses.replace(probe, flood_record_lifetime=max(10.0, 4 * longest + 1))


def network_node(
    config: DaemonConfig,
    engine_config: EngineConfig,
    device_id: int,
    authenticator: Authenticator | None,
    on_event: Callable[[Event], None],
) -> Node:
    """The real transport (imported here: the daemon's tests may run without it)."""
    from uuidkit.net import Family, TransportConfig, UIAPNode

    settings: dict[str, Any] = {
        "interfaces": config.interfaces or None,
        "family": Family.IPV4 if config.ipv4 else Family.IPV6,
        "port": config.port,
        "reply_port": config.reply_port,
    }
    if config.group:
        settings["ipv4_group" if config.ipv4 else "group"] = config.group
    return UIAPNode(
        TransportConfig(**settings),
        engine_config,
        device_id,
        on_event,
        authenticator=authenticator,
    )


def _log_setup(level: str) -> None:
    logging.basicConfig(
        level=level.upper(), format="uuidkit-uiapd: %(levelname)s: %(message)s", force=True
    )


class Daemon:
    """One run of the daemon; :meth:`serve` returns when it has stopped.

    References: UIAP §2.1.1 (the service to applications), §4.4 (reclaims after a restart).
    """

    def __init__(
        self,
        config: DaemonConfig,
        *,
        config_path: str | None = None,
        overrides: Mapping[str, Any] | None = None,
        node_factory: NodeFactory = network_node,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.config_path = config_path
        self.overrides = dict(overrides or {})
        self.node_factory = node_factory
        self.environ = environ if environ is not None else os.environ
        self.stopped = asyncio.Event()
        self.ready = asyncio.Event()
        self.authenticator: Authenticator | None = None
        self.service: ClaimService | None = None
        self.server: APIServer | None = None
        self.metrics: MetricsExporter | None = None

    def _notify(self, message: str) -> None:
        problem = notify(message, self.environ)
        if problem is not None:
            _log.warning("%s", problem)

    async def serve(self) -> None:
        """Start, run until stopped, stop. Raises :class:`ConfigError` for a setting that
        cannot be used (naming its key) before anything is served."""
        config = self.config
        try:
            store = StateStore(config.state_dir)
            store.lock()  # before the read: a second daemon touches nothing
        except StateError as error:
            raise ConfigError(str(error), "state_dir") from None
        try:
            service, server = await self._start(store)
        except BaseException:
            store.close()
            raise
        self._install_signals()
        _log.info(
            "serving %s; device ID %016x; %d claims restored",
            config.socket,
            service.node.device_id,
            len(service.claims),
        )
        self._notify(f"READY=1\nSTATUS=serving {config.socket}, {len(service.claims)} claims")
        self.ready.set()
        await self.stopped.wait()
        self._notify("STOPPING=1\nSTATUS=stopping")
        _log.info("stopping")
        server.stop_accepting()  # no new claims while the service stops
        try:
            if self.metrics is not None:
                await self.metrics.stop()
            await service.stop()
            await server.stop()
        finally:
            store.close()  # the directory is free for the next daemon only now
            self._remove_signals()

    async def _start(self, store: StateStore) -> tuple[ClaimService, APIServer]:
        """Load the state, start the service (its reclaims) and the API server."""
        config = self.config
        try:
            saved = store.load()
        except StateError as error:
            raise ConfigError(str(error), "state_dir") from None
        _check_saved_claims(store.path, saved, config)
        # A state without a device ID is a first start: a new one (StateStore.load has
        # refused a device ID that is present but unusable).
        device_id = device_id_of(saved.get("device_id")) or new_device_id(config)
        if config.key_file:
            try:
                keys = read_key_file(config.key_file)
            except AuthError as error:
                raise ConfigError(str(error), "key_file") from None
            self.authenticator = WatchedAuthenticator(keys, secrets.token_bytes, time.monotonic)
        engine_config = engine_config_of(config)

        def make(on_event: Callable[[Event], None]) -> Node:
            return self.node_factory(config, engine_config, device_id, self.authenticator, on_event)

        service = self.service = ClaimService(
            make,
            store,
            engine_config,
            proxy=config.proxy,
            max_claims=config.max_claims,
            max_claims_per_uid=config.max_claims_per_uid,
            authenticator=self.authenticator,
        )
        try:
            await service.start(saved)
        except TransportError as error:  # the service has stopped its node
            raise ConfigError(str(error), error.field or "interfaces") from None
        except OSError as error:
            raise ConfigError(f"cannot open the UIAP sockets: {error}", "port") from None
        server = self.server = APIServer(service, config)
        try:
            await server.start()
        except OSError as error:
            await service.stop()
            raise ConfigError(str(error), "socket") from None
        exporter = MetricsExporter(server.metrics_text, config)
        try:
            await exporter.start()
        except OSError as error:
            await server.stop()
            await service.stop()
            raise ConfigError(f"cannot serve metrics: {error}", "metrics_http") from None
        self.metrics = exporter
        return service, server

    def _install_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self.stopped.set)
        loop.add_signal_handler(signal.SIGHUP, self.reload)

    def _remove_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.remove_signal_handler(signum)

    def reload(self) -> None:
        """SIGHUP: re-read the configuration file (flags still override it)."""
        self._notify(reloading("reloading the configuration"))
        try:
            new = load_config(self.config_path, self.overrides)
            keys = read_key_file(new.key_file) if new.key_file else None
        except (ConfigError, AuthError) as error:
            _log.error("reload refused, keeping the running configuration: %s", error)
            self._notify(f"READY=1\nSTATUS=reload refused, running configuration kept: {error}")
            return
        for key in _RESTART_KEYS:
            if getattr(new, key) != getattr(self.config, key):
                _log.warning("config key '%s' changed; it takes effect at the next start", key)
        if keys is not None and self.authenticator is not None:
            self.authenticator.replace_keys(keys)
        elif (keys is None) != (self.authenticator is None):
            _log.warning("config key 'key_file' switched authentication; restart to apply")
        _log_setup(new.log_level)
        kept = {key: getattr(self.config, key) for key in _RESTART_KEYS}
        self.config = dataclasses.replace(new, **kept)
        if self.server is not None:
            self.server.config = self.config
        if self.service is not None:
            self.service.max_claims = self.config.max_claims
            self.service.max_claims_per_uid = self.config.max_claims_per_uid
        _log.info("configuration reloaded")
        self._notify(f"READY=1\nSTATUS=configuration reloaded; serving {self.config.socket}")


def _check_saved_claims(path: str, saved: Mapping[str, Any], config: DaemonConfig) -> None:
    """Refuse to start with more saved claims than the caps allow (a lowered cap, or a
    planted file), naming the file and the cap: dropping some would lose them silently."""
    claims = saved.get("claims", [])
    if len(claims) > config.max_claims:
        raise ConfigError(
            f"{path} holds {len(claims)} claims, more than {config.max_claims}; raise the cap "
            "or remove claims from the file",
            "max_claims",
        )
    owners = Counter(entry.get("owner_uid") for entry in claims if isinstance(entry, dict))
    for owner, count in owners.items():
        if owner != 0 and count > config.max_claims_per_uid:
            raise ConfigError(
                f"{path} holds {count} claims of uid {owner!r}, more than "
                f"{config.max_claims_per_uid}; raise the cap or remove claims from the file",
                "max_claims_per_uid",
            )


def new_device_id(config: DaemonConfig) -> int:
    """A device ID for a first start, made as ``device_id_mode`` says (UIAP §4.1).

    The one maker is :func:`uuidkit.net.device_id.make_device_id` (imported here, as the
    transport is); a mode it cannot follow (no such interface, no MAC) is a
    :class:`ConfigError` naming the key.

    References: UIAP §4.1 (Originating Device ID); RFC 4291 Appendix A.
    """
    from uuidkit.errors import TransportError
    from uuidkit.net.device_id import DeviceIDMode, make_device_id

    mode: DeviceIDMode = "eui64" if config.device_id_mode == "eui64" else "random"
    try:
        return make_device_id(mode, config.device_id_interface or None)
    except TransportError as error:
        key = "device_id_interface" if config.device_id_interface else "device_id_mode"
        raise ConfigError(str(error), key) from None


def run(
    config_path: str | None, overrides: Mapping[str, Any], node_factory: NodeFactory = network_node
) -> int:
    """Load the configuration and run the daemon in the foreground; the exit status.

    A bad setting is one line on stderr naming its key, and status 2.

    References: UIAP §2.1.1, §4.4.
    """
    try:
        config = load_config(config_path, overrides)
    except ConfigError as error:
        print(f"uuidkit uiap daemon: {error}", file=sys.stderr)
        return 2
    _log_setup(config.log_level)

    async def main() -> None:
        daemon = Daemon(
            config, config_path=config_path, overrides=overrides, node_factory=node_factory
        )
        await daemon.serve()

    try:
        asyncio.run(main())
    except ConfigError as error:
        print(f"uuidkit uiap daemon: {error}", file=sys.stderr)
        return 2
    return 0
