"""``uuidkit state show PATH`` and ``uuidkit state reset PATH``: a generator state file.

``show`` prints the reservation a state file holds (window as UTC times, next range, node)
or, with ``--json``, the file's fields; an unusable file is an error naming why (missing,
unreadable, corrupted: which check failed). ``reset`` deletes the file under its lock, so
the next generator starts fresh (random clock sequence/counter); do it only while no
generator is using the file, since their current reservations are forgotten. ``reset``
deletes only what provably is a state file: a regular file (not a symbolic link, directory,
FIFO or device) that passes every check ``show`` makes; anything else is an error and is left
as it was, and no ``.lock`` file is left behind that a generator did not make.

References: RFC 9562 §6.3; RFC 4122 §4.2.1.1.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from uuidkit.errors import StateFileError
from uuidkit.generators.statefile import StateFile, StoredState
from uuidkit.timestamps import NS_PER_MS, gregorian_ticks_to_unix_ns, unix_ns_to_datetime

__all__ = ["describe_state", "register"]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``state show`` and ``state reset``.

    References: RFC 9562 §6.3.
    """
    state = subparsers.add_parser("state", help="show or reset a generator state file")
    actions = state.add_subparsers(dest="state_command", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print the reservation a state file holds")
    show.add_argument("path", help="the state file")
    show.add_argument("--json", action="store_true", help="print the stored fields as JSON")
    show.set_defaults(handler=show_command)
    reset = actions.add_parser(
        "reset", help="delete a state file (generators start fresh); refuses any other file"
    )
    reset.add_argument("path", help="the state file")
    reset.set_defaults(handler=reset_command)


def _unix_ns(state: StoredState, unit: int) -> int:
    if state.kind == "v7":
        return unit * NS_PER_MS
    return gregorian_ticks_to_unix_ns(unit)


def describe_state(state: StoredState) -> list[str]:
    """Human-readable lines for ``state``.

    References: RFC 9562 §6.3.
    """
    unit = "ms" if state.kind == "v7" else "100 ns ticks"
    range_name = "next counter" if state.kind == "v7" else "next clock_seq"
    start = unix_ns_to_datetime(_unix_ns(state, state.window_start)).isoformat()
    end = unix_ns_to_datetime(_unix_ns(state, state.window_end)).isoformat()
    written = unix_ns_to_datetime(state.written_ns).isoformat()
    rows = [
        ("kind", state.kind),
        ("window", f"{state.window_start} .. {state.window_end} ({unit})"),
        ("window (UTC)", f"{start} .. {end}"),
        (range_name, str(state.next_range)),
    ]
    if state.node is not None:
        rows.append(("node", f"{state.node:012x}"))
    rows.append(("written", written))
    return [f"{label + ':':<16}{value}" for label, value in rows]


def show_command(args: argparse.Namespace) -> int:
    """Print the state file's reservation.

    References: RFC 9562 §6.3.
    """
    state = StateFile(args.path).load()
    if args.json:
        print(json.dumps(dataclasses.asdict(state), sort_keys=True))
    else:
        print("\n".join(describe_state(state)))
    return 0


def reset_command(args: argparse.Namespace) -> int:
    """Delete the state file under its lock.

    References: RFC 9562 §6.3; RFC 4122 §4.2.1.1.
    """
    try:
        removed = StateFile(args.path).remove()
    except StateFileError as error:
        raise StateFileError(f"state reset: refusing to delete: {error}") from None
    print(f"removed {args.path}" if removed else f"no state file at {args.path}")
    return 0
