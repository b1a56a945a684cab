"""Node IDs an orchestrator already numbers: :class:`StaticNodeSource`.

A StatefulSet numbers its pods (``web-0``, ``web-1``, ...), an Indexed Job its completions
(``JOB_COMPLETION_INDEX``), and the orchestrator guarantees that one number runs once at a
time. :class:`StaticNodeSource` turns such a number into a node of the static half of the
node space (:func:`~uuidkit.bridge.nodespace.static_node`), or takes a node from
configuration, and holds it without lease or expiry.

:meth:`StaticNodeSource.from_environment` reads exactly these variables:

- ``UUIDKIT_NODE``: a whole node, 12 hex digits, which must be in the static half (bit 47 and
  the multicast bit set). Excludes the two below.
- ``UUIDKIT_NODE_ORDINAL``: a decimal ordinal, or the word ``hostname``: the ordinal is the
  ``-N`` suffix of the host name (a StatefulSet pod's host name is ``<set>-<N>``).
- ``JOB_COMPLETION_INDEX``: set by Kubernetes in an Indexed Job's pods.
- ``UUIDKIT_NODE_DEPLOYMENT``: required with an ordinal: the deployment's name (for example
  ``<namespace>/<statefulset>``), hashed into the node's prefix so that two deployments'
  ordinals differ.

Exactly one of ``UUIDKIT_NODE``, ``UUIDKIT_NODE_ORDINAL`` and ``JOB_COMPLETION_INDEX`` must be
set; none, two, or a malformed one raise :class:`~uuidkit.errors.InvalidField` naming it.

One number is one process: a forked child's source is revoked (two processes must never use
one node), and two sources of one node in a process raise.

References: RFC 9562 §6.4, §6.9, §6.10.
"""

from __future__ import annotations

import os
import re
import socket
import threading
from collections.abc import Mapping
from typing import Final

from uuidkit.bridge.nodespace import is_static_node, static_node
from uuidkit.errors import GeneratorError, InvalidField
from uuidkit.generators.nodesource import ManualNodeSource

__all__ = ["ENVIRONMENT_VARIABLES", "StaticNodeSource"]

#: Every variable :meth:`StaticNodeSource.from_environment` reads.
ENVIRONMENT_VARIABLES: Final = (
    "UUIDKIT_NODE",
    "UUIDKIT_NODE_ORDINAL",
    "JOB_COMPLETION_INDEX",
    "UUIDKIT_NODE_DEPLOYMENT",
)
_ORDINAL_SUFFIX: Final = re.compile(r"-(0|[1-9][0-9]{0,5})")
_DECIMAL: Final = re.compile(r"0|[1-9][0-9]{0,5}")
_HEX_NODE: Final = re.compile(r"[0-9a-fA-F]{12}")

#: Nodes held by open static sources of this process.
_in_use: set[int] = set()
_in_use_lock = threading.Lock()


class StaticNodeSource(ManualNodeSource):
    """A fixed node of the static half, held until :meth:`close` (a context manager).

    - **Node**: must have bit 47 and the multicast bit set (the static half,
      :mod:`uuidkit.bridge.nodespace`); see :func:`~uuidkit.bridge.nodespace.static_node`.
    - **Loss**: only by :meth:`close` or a fork; no expiry.
    - **Fork**: the child's source is revoked (RFC 9562 §6.9): one number, one process.

    References: RFC 9562 §6.4, §6.9, §6.10.
    """

    def __init__(self, node: int) -> None:
        if not is_static_node(node):
            raise InvalidField(
                f"node: {node:012x} is not in the static half (bit 47 clear); use "
                "uuidkit.bridge.nodespace.static_node(ordinal, deployment)",
                "node",
            )
        with _in_use_lock:
            if node in _in_use:
                raise GeneratorError(
                    f"node {node:012x} is already held by another StaticNodeSource here"
                )
            _in_use.add(node)
        self.static = node
        super().__init__(node)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> StaticNodeSource:
        """The source the variables of :data:`ENVIRONMENT_VARIABLES` describe.

        >>> env = {"UUIDKIT_NODE_ORDINAL": "3", "UUIDKIT_NODE_DEPLOYMENT": "shop/orders"}
        >>> with StaticNodeSource.from_environment(env) as source:
        ...     source.current().node == static_node(3, "shop/orders")
        True

        References: RFC 9562 §6.4, §6.10.
        """
        env = os.environ if environ is None else environ
        return cls(node_from_environment(env))

    def close(self) -> None:
        """Stop handing out the node (LOST) and free it for another source here.

        References: RFC 9562 §6.4.
        """
        self.revoke("source closed")
        with _in_use_lock:
            _in_use.discard(self.static)

    def __enter__(self) -> StaticNodeSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reset_after_fork(self) -> None:
        """In a forked child: the node stays the parent's; this source raises from now on.

        References: RFC 9562 §6.9.
        """
        super().reset_after_fork()
        self._lost_reason = "forked child: a static node belongs to one process"


def node_from_environment(env: Mapping[str, str]) -> int:
    """The node ``env`` names (see the module docstring for the rules).

    References: RFC 9562 §6.4, §6.10.
    """
    given = [name for name in ENVIRONMENT_VARIABLES[:3] if env.get(name, "") != ""]
    if len(given) != 1:
        found = ", ".join(given) if given else "none of them"
        raise InvalidField(
            "environment: set exactly one of UUIDKIT_NODE, UUIDKIT_NODE_ORDINAL, "
            f"JOB_COMPLETION_INDEX (found {found})",
            "environment",
        )
    name = given[0]
    value = env[name].strip()
    if name == "UUIDKIT_NODE":
        if not _HEX_NODE.fullmatch(value):
            raise InvalidField(f"UUIDKIT_NODE: expected 12 hex digits, found {value!r}", name)
        return int(value, 16)
    deployment = env.get("UUIDKIT_NODE_DEPLOYMENT", "").strip()
    if not deployment:
        raise InvalidField(
            f"UUIDKIT_NODE_DEPLOYMENT: required with {name} (the deployment's name, such as "
            "'namespace/statefulset', so that two deployments' ordinals differ)",
            "UUIDKIT_NODE_DEPLOYMENT",
        )
    if name == "UUIDKIT_NODE_ORDINAL" and value == "hostname":
        host = env.get("HOSTNAME") or socket.gethostname()
        suffix = _ORDINAL_SUFFIX.search(host)
        if suffix is None or suffix.end() != len(host):
            raise InvalidField(
                f"UUIDKIT_NODE_ORDINAL=hostname: host name {host!r} does not end in -N", name
            )
        return static_node(int(suffix.group(1)), deployment)
    if not _DECIMAL.fullmatch(value):
        raise InvalidField(f"{name}: expected a decimal ordinal, found {value!r}", name)
    return static_node(int(value), deployment)
