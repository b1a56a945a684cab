"""The daemon's configuration: a dataclass with a unit on every field, from TOML and flags.

``uuidkit uiap daemon --config FILE`` reads FILE with :mod:`tomllib` (keys are the field
names below; unknown keys are errors); flags given on the command line override the file.
A bad setting raises :class:`ConfigError` naming the key; the command line prints it on
one line and exits with status 2.

References: UIAP §2.3, §3.1, §8.1, §10 (group, ports, timers); §7 (the site key); §4.1
(the device ID).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from uuidkit._safefile import SafeFile
from uuidkit.errors import StateFileError, UUIDKitError
from uuidkit.uiap.constants import (
    UIAP_CLAIM_PERIOD_S,
    UIAP_CLAIM_PORT,
    UIAP_CLAIM_TIMEOUT_S,
    UIAP_REPLY_PORT,
)
from uuidkit.uiapd.api import DEFAULT_SOCKET

__all__ = ["ConfigError", "DaemonConfig", "load_config", "split_host_port"]

DEFAULT_STATE_DIR: Final = "/var/lib/uuidkit-uiapd"
#: The most ``max_claims`` may allow, derived from the client's reply limit: the longest
#: claim in a ``list`` reply (a range of two 255-octet UIDs, UIAP §3.2.3) is about 1,350
#: octets, so 10,000 of them (13.5 MB) are one reply line a client accepts
#: (``uuidkit.uiapd.client.MAX_REPLY_OCTETS``, 16 MiB) and their state file one the daemon
#: reads back (``uuidkit.daemon.state.MAX_STATE_OCTETS``).
MAX_CLAIMS_CEILING: Final = 10_000
#: The largest configuration file read: far above any real one (a few dozen keys), and a
#: bound for a path that is not a file of settings at all (``--config /dev/zero``).
MAX_CONFIG_OCTETS: Final = 1024 * 1024


class ConfigError(UUIDKitError):
    """A setting the daemon cannot use; ``key`` names it.

    References: UIAP §10 (the timers a setting may change), §8.1 (ports).
    """

    def __init__(self, message: str, key: str) -> None:
        super().__init__(f"config key '{key}': {message}")
        self.key = key


@dataclass(frozen=True, slots=True)
class DaemonConfig:
    """Everything ``uuidkit uiap daemon`` is told; the defaults are the draft's.

    References: UIAP §2.3, §3.1, §4.1, §7, §8.1, §10.
    """

    #: Path of the API's Unix stream socket (created 0660).
    socket: str = DEFAULT_SOCKET
    #: Directory of the held claims and the device ID (created 0700 if missing).
    state_dir: str = DEFAULT_STATE_DIR
    #: Interface names to run UIAP on; empty = every multicast-capable interface with a
    #: link-local address.
    interfaces: tuple[str, ...] = ()
    #: UIAP_CLAIM_PERIOD, seconds between the Claim-Attempts of one claim (§10).
    claim_period: float = UIAP_CLAIM_PERIOD_S
    #: UIAP_CLAIM_TIMEOUT, seconds to wait for a Claim-Deny after the last period (§10).
    claim_timeout: float = UIAP_CLAIM_TIMEOUT_S
    #: UIAP_MULTICAST_ADDR (text); empty = the family's default (ff02::114 / 224.0.0.254).
    group: str = ""
    #: UIAP_CLAIM_PORT, UDP port number of Claim-Attempt floods (§10).
    port: int = UIAP_CLAIM_PORT
    #: UIAP_REPLY_PORT, UDP port number of unicast Claim-Deny replies (§10).
    reply_port: int = UIAP_REPLY_PORT
    #: Run UIAP over IPv4 link-local multicast instead of IPv6 (§2.3).
    ipv4: bool = False
    #: Site key file (``KEY-ID HEX-KEY [send]`` lines, readable by the daemon only);
    #: empty = no authentication (§7).
    key_file: str = ""
    #: Ask other devices to proxy-defend our claims (X flag, §5.1).
    proxy: bool = False
    #: Run the engine with the draft's behaviour only (``EngineConfig.draft_only()``: one
    #: copy per datagram, no re-verification of held claims, the draft's rule for crossing
    #: reclaims; docs/uiap.md "Beyond the draft"), to compare with or stand in for a
    #: draft-only device.
    draft_only: bool = False
    #: How the device ID is made at the first start (§4.1; kept in the state directory
    #: after that): ``random`` (64 random bits, u and g bits 0) or ``eui64`` (the modified
    #: EUI-64 of an interface's MAC, RFC 4291 Appendix A).
    device_id_mode: str = "random"
    #: The interface whose MAC ``eui64`` uses; empty = the first, in index order, that has
    #: one.
    device_id_interface: str = ""
    #: Most API clients connected at once, in connections.
    max_clients: int = 1024
    #: Most API connections one user (other than root) may hold at once, in connections.
    max_clients_per_uid: int = 256
    #: Seconds a client may take to finish a line it has started.
    request_timeout: float = 10.0
    #: Seconds a reply may wait for a client to read it before the client is dropped (one
    #: that sends requests but never reads would hold its connection slot for ever).
    send_timeout: float = 10.0
    #: Octets of events that may wait for a watcher before it is disconnected.
    max_client_backlog: int = 1 << 20
    #: Most claims the daemon holds or makes at once, in claims (at most 10,000); more
    #: get ``too-many-claims``.
    max_claims: int = 4096
    #: Most claims one user (other than root) holds or makes at once, in claims.
    max_claims_per_uid: int = 1024
    #: Seconds a connection may stay silent between requests before it is closed; a
    #: connection that watches, or holds ``release_on_disconnect`` claims, never is.
    idle_timeout: float = 60.0
    #: Log level name (debug, info, warning, error).
    log_level: str = "info"
    #: ``HOST:PORT`` (an IP address; ``[::1]:9464`` for IPv6) where an HTTP server answers
    #: ``GET /metrics`` with the Prometheus text format; empty = none.
    metrics_http: str = ""
    #: A file rewritten with the Prometheus text every ``metrics_interval`` seconds, for
    #: node-exporter's textfile collector; empty = none.
    metrics_textfile: str = ""
    #: Seconds between rewrites of ``metrics_textfile``.
    metrics_interval: float = 15.0

    def __post_init__(self) -> None:
        for name in ("socket", "state_dir"):
            if not getattr(self, name):
                raise ConfigError("must not be empty", name)
        for name in ("claim_period", "claim_timeout"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ConfigError(f"expected seconds >= 0, got {value!r}", name)
        if not math.isfinite(self.request_timeout) or self.request_timeout <= 0:
            raise ConfigError(
                f"expected seconds > 0, got {self.request_timeout!r}", "request_timeout"
            )
        for name in ("port", "reply_port"):
            if not 1 <= getattr(self, name) <= 0xFFFF:
                raise ConfigError(
                    f"expected a UDP port 1 .. 65535, got {getattr(self, name)}", name
                )
        if self.port == self.reply_port:
            raise ConfigError("must differ from 'port' (UIAP §10: two ports)", "reply_port")
        if self.max_clients < 1:
            raise ConfigError(
                f"expected at least 1 connection, got {self.max_clients}", "max_clients"
            )
        if self.max_clients_per_uid < 1:
            raise ConfigError(
                f"expected at least 1 connection, got {self.max_clients_per_uid}",
                "max_clients_per_uid",
            )
        if not 1 <= self.max_claims <= MAX_CLAIMS_CEILING:
            raise ConfigError(
                f"expected 1 .. {MAX_CLAIMS_CEILING} claims (a longer list would not fit in "
                f"a client's reply), got {self.max_claims}",
                "max_claims",
            )
        if self.max_claims_per_uid < 1:
            raise ConfigError(
                f"expected at least 1 claim, got {self.max_claims_per_uid}", "max_claims_per_uid"
            )
        if not math.isfinite(self.send_timeout) or self.send_timeout <= 0:
            raise ConfigError(f"expected seconds > 0, got {self.send_timeout!r}", "send_timeout")
        if not math.isfinite(self.idle_timeout) or self.idle_timeout <= 0:
            raise ConfigError(f"expected seconds > 0, got {self.idle_timeout!r}", "idle_timeout")
        if self.max_client_backlog < 4096:
            raise ConfigError("expected at least 4096 octets", "max_client_backlog")
        if self.log_level not in ("debug", "info", "warning", "error"):
            raise ConfigError(
                f"expected debug, info, warning or error, got {self.log_level!r}", "log_level"
            )
        if self.metrics_http:
            split_host_port(self.metrics_http)
        if not math.isfinite(self.metrics_interval) or self.metrics_interval <= 0:
            raise ConfigError(
                f"expected seconds > 0, got {self.metrics_interval!r}", "metrics_interval"
            )
        for name in self.interfaces:
            if not _is_interface_name(name):
                raise ConfigError(f"not an interface name: {name!r}", "interfaces")
        if self.device_id_mode not in ("random", "eui64"):
            raise ConfigError(
                f"expected random or eui64, got {self.device_id_mode!r}", "device_id_mode"
            )
        if self.device_id_interface and not _is_interface_name(self.device_id_interface):
            raise ConfigError(
                f"not an interface name: {self.device_id_interface!r}", "device_id_interface"
            )


def split_host_port(text: str) -> tuple[str, int]:
    """``metrics_http`` as an IP address and a TCP port (0: any free port), or
    :class:`ConfigError` naming it.

    References: RFC 3986 §3.2.2 (an IPv6 address in brackets), §3.2.3 (port).
    """
    host, colon, port = text.rpartition(":")
    bracketed = host.startswith("[") and host.endswith("]")
    host = host[1:-1] if bracketed else host
    try:
        address = ipaddress.ip_address(host)
        number = int(port) if port.isdigit() else -1
    except ValueError:
        address, number = None, -1
    unbracketed_v6 = isinstance(address, ipaddress.IPv6Address) and not bracketed
    if not colon or address is None or unbracketed_v6 or not 0 <= number <= 0xFFFF:
        raise ConfigError(
            f"expected ADDRESS:PORT (an IP address, [::1] for IPv6), got {text!r}", "metrics_http"
        )
    return host, number


def _is_interface_name(name: str) -> bool:
    """A Linux interface name: 1 to 15 characters (IFNAMSIZ - 1), no slash."""
    return bool(name) and "/" not in name and len(name) <= 15


_FIELDS: Final = {field.name: field for field in dataclasses.fields(DaemonConfig)}


def _coerce(key: str, value: Any) -> Any:
    """A TOML (or flag) value as the field's type, or :class:`ConfigError`."""
    kind = _FIELDS[key].type
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"expected true or false, got {value!r}", key)
        return value
    if kind == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"expected a whole number, got {value!r}", key)
        return value
    if kind == "float":
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ConfigError(f"expected a number of seconds, got {value!r}", key)
        return float(value)
    if kind == "tuple[str, ...]":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"expected a list of names, got {value!r}", key)
        return tuple(value)
    if not isinstance(value, str):
        raise ConfigError(f"expected a string, got {value!r}", key)
    return value


def _read_config_file(path: str) -> str:
    """The text of the configuration file, read by :mod:`uuidkit._safefile` (never blocking
    on a FIFO, never through a symlink; refused if another user than this one or root owns
    it or others may write it: it names the key file and the state directory)."""
    config_file = SafeFile(
        path, kind="configuration file", max_octets=MAX_CONFIG_OCTETS, root_may_own=True
    )
    try:
        data = config_file.read()[0]
    except FileNotFoundError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror}", "config") from None
    except StateFileError as error:  # unsafe, oversized or unreadable
        raise ConfigError(f"cannot use {error}", "config") from None
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror}", "config") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path} is not UTF-8: octet {error.start}", "config") from None


def load_config(path: str | None, overrides: Mapping[str, Any]) -> DaemonConfig:
    """The configuration of ``path`` (TOML, optional) with ``overrides`` (flags) on top.

    Raises :class:`ConfigError` naming the first bad key.

    References: UIAP §2.3, §8.1, §10 (group, ports, timers); §7 (the site key).
    """
    settings: dict[str, Any] = {}
    if path:
        try:
            data = tomllib.loads(_read_config_file(path))
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path} is not TOML: {error}", "config") from None
        for key, value in data.items():
            if key not in _FIELDS:
                raise ConfigError(f"unknown key in {path}", key)
            settings[key] = _coerce(key, value)
    for key, value in overrides.items():
        if value is not None:
            settings[key] = _coerce(key, value)
    try:
        return DaemonConfig(**settings)
    except (TypeError, ValueError) as error:
        if isinstance(error, ConfigError):
            raise
        raise ConfigError(str(error), "config") from None
