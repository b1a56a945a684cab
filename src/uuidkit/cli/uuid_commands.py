"""``uuidkit`` with no arguments, ``gen``, ``inspect`` and ``convert``.

* ``uuidkit``: a fresh UUIDv7 and its decoded fields.
* ``uuidkit gen [-v VERSION] [-n COUNT] [--namespace NS] [--name NAME] [--hash HASH]
  [--format STYLE]``: new UUIDs, one per line.
* ``uuidkit inspect UUID... [--json]``: variant, version, every field under its RFC name and
  the embedded time in ISO 8601 UTC (``--json``: one JSON object per line).
* ``uuidkit convert UUID... [--to-version 1|6] [--from text|int|bytes_le] [--format STYLE]``.

Every ``--format`` (``convert --to`` is the same option) also takes the short encodings of
:mod:`uuidkit.encodings` (``base32-crockford``, ``base32hex``, ``base32``, ``base64url``,
``base58btc``, ``base62``, ``typeid`` with ``--prefix``), and ``inspect``/``convert --from``
read them.

A ``UUID`` argument of ``-`` reads one UUID per line of stdin: ``uuidkit gen -n 3 | uuidkit
inspect -``.

Bad input raises a :class:`ValueError` subclass, which :func:`uuidkit.cli.main` turns into a
one-line message on stderr and exit status 2.

References: RFC 9562 §4 (forms), §4.1 (Table 1), §4.2 (Table 2), §5 (layouts), §6.6 (Table 3).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable, Iterator
from typing import Any, Final
from uuid import UUID

import uuidkit
from uuidkit.encodings import SCHEMES, decode, encode
from uuidkit.errors import UUIDKitError
from uuidkit.fields import Variant, fields, is_max, is_nil, timestamp_ns, variant, version
from uuidkit.format import FORMAT_STYLES, format_uuid
from uuidkit.layouts import v1_to_v6, v6_to_v1
from uuidkit.namebased import (
    NAME_HASHES,
    NAMESPACE_DNS,
    NAMESPACE_OID,
    NAMESPACE_URL,
    NAMESPACE_X500,
    build_v8_name,
)
from uuidkit.parse import from_bytes_le, from_int, parse
from uuidkit.timestamps import unix_ns_to_datetime

__all__ = ["default_command", "describe", "iso8601", "register"]

#: RFC 9562 §6.6 Table 3, by the names the command line accepts.
NAMESPACES: Final = {
    "dns": NAMESPACE_DNS,
    "url": NAMESPACE_URL,
    "oid": NAMESPACE_OID,
    "x500": NAMESPACE_X500,
}

#: RFC 9562 §4.1 Table 1.
VARIANT_LABELS: Final = {
    Variant.NCS: "NCS (reserved, 0xxx)",
    Variant.RFC_9562: "RFC 9562 (10xx)",
    Variant.MICROSOFT: "Microsoft (reserved, 110x)",
    Variant.FUTURE: "future (reserved, 111x)",
}

#: RFC 9562 §4.2 Table 2.
VERSION_LABELS: Final = {
    1: "Gregorian time-based",
    2: "DCE Security",
    3: "name-based, MD5",
    4: "random",
    5: "name-based, SHA-1",
    6: "reordered Gregorian time-based",
    7: "Unix Epoch time-based",
    8: "custom",
}

#: Digits after the second that each time-based version resolves (v1/v6: 100 ns, v7: 1 ms).
_FRACTION_DIGITS: Final = {1: 7, 6: 7, 7: 3}
_NAME_VERSIONS: Final = (3, 5, 8)
_NS_PER_S: Final = 1_000_000_000
#: How ``inspect`` and ``convert`` read their input: UUID text, or an integer/byte form, or a
#: short encoding.
SOURCES: Final = ["text", "int", "bytes_le", *SCHEMES]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``gen``, ``inspect`` and ``convert``.

    References: RFC 9562 §4 (formats), §5 (versions), §6.6 (namespaces).
    """
    styles = list(FORMAT_STYLES)
    gen = subparsers.add_parser("gen", help="generate UUIDs, one per line")
    gen.add_argument("-v", "--version", type=int, default=7, choices=[1, 3, 4, 5, 6, 7, 8])
    gen.add_argument("-n", "--count", type=int, default=1, help="how many (default 1)")
    gen.add_argument("--namespace", help="dns, url, oid, x500 or a UUID (versions 3, 5, 8)")
    gen.add_argument("--name", help="the name to hash (versions 3 and 5; 8 with --hash)")
    gen.add_argument("--hash", choices=list(NAME_HASHES), help="hash of a name-based v8")
    gen.add_argument("--format", choices=styles, default="hyphenated")
    gen.add_argument("--prefix", help="the TypeID type prefix for --format typeid")
    gen.set_defaults(handler=gen_command)

    inspect = subparsers.add_parser("inspect", help="decode variant, version, fields and time")
    inspect.add_argument("uuids", nargs="+", metavar="UUID", help="UUIDs; - reads lines of stdin")
    inspect.add_argument("--json", action="store_true", help="one JSON object per line")
    inspect.add_argument("--from", dest="source", choices=SOURCES, default="text")
    inspect.set_defaults(handler=inspect_command)

    convert = subparsers.add_parser("convert", help="convert v1 <-> v6 and between formats")
    convert.add_argument("uuids", nargs="+", metavar="UUID", help="UUIDs; - reads lines of stdin")
    convert.add_argument("--to-version", type=int, choices=[1, 6], help="reorder v1 <-> v6")
    convert.add_argument(
        "--from",
        dest="source",
        choices=SOURCES,
        default="text",
        help="how the input is written (default: text)",
    )
    convert.add_argument("--format", "--to", choices=styles, default="hyphenated")
    convert.add_argument("--prefix", help="the TypeID type prefix for --format typeid")
    convert.set_defaults(handler=convert_command)


# --- no arguments -------------------------------------------------------------------------------


def default_command(args: argparse.Namespace) -> int:
    """No arguments: print a fresh UUIDv7 and its decoded fields.

    References: RFC 9562 §5.7.
    """
    print("\n".join(_text_lines(describe(uuidkit.uuid7()))))
    return 0


# --- gen ----------------------------------------------------------------------------------------


def gen_command(args: argparse.Namespace) -> int:
    """``uuidkit gen``: ``--count`` new UUIDs of ``--version`` in ``--format``.

    References: RFC 9562 §5, §6.5 (names), §6.6 (namespaces), Appendix B.2 (name-based v8).
    """
    if args.count < 1:
        raise UUIDKitError(f"--count: expected a positive number, found {args.count}")
    make = _generator(args)
    style = _style(args)
    print("\n".join(style(make()) for _ in range(args.count)))
    return 0


def _generator(args: argparse.Namespace) -> Callable[[], UUID]:
    """The zero-argument function that makes one UUID as ``args`` ask."""
    named = args.name is not None
    if args.version not in _NAME_VERSIONS and (named or args.namespace is not None):
        raise UUIDKitError(f"--name/--namespace: not used by version {args.version}")
    if args.hash is not None and args.version != 8:
        raise UUIDKitError(f"--hash: only for a name-based version 8, not version {args.version}")
    if args.version in (3, 5) and not named:
        raise UUIDKitError(f"version {args.version} is name-based: give --name")
    if args.version == 8 and (named or args.hash is not None or args.namespace is not None):
        if not named:
            raise UUIDKitError("--hash/--namespace: a name-based version 8 needs --name")
        return _name_based(args, lambda ns, name: build_v8_name(ns, name, args.hash or "sha256"))
    if args.version == 3:
        return _name_based(args, uuidkit.uuid3)
    if args.version == 5:
        return _name_based(args, uuidkit.uuid5)
    makers: dict[int, Callable[[], UUID]] = {
        1: uuidkit.uuid1,
        4: uuidkit.uuid4,
        6: uuidkit.uuid6,
        7: uuidkit.uuid7,
        8: uuidkit.uuid8,
    }
    return makers[args.version]


def _name_based(args: argparse.Namespace, build: Callable[[UUID, str], UUID]) -> Callable[[], UUID]:
    namespace = _namespace(args.namespace or "dns")
    name: str = args.name
    return lambda: build(namespace, name)


def _namespace(text: str) -> UUID:
    """``dns``, ``url``, ``oid``, ``x500`` (RFC 9562 §6.6 Table 3) or any UUID."""
    known = NAMESPACES.get(text.lower())
    return known if known is not None else parse(text)


def _inputs(arguments: list[str]) -> list[str]:
    """The arguments, with ``-`` replaced by the non-empty lines of stdin (newline removed)."""
    texts: list[str] = []
    for argument in arguments:
        if argument == "-":
            lines = (line.rstrip("\r\n") for line in sys.stdin)
            texts.extend(line for line in lines if line)
        else:
            texts.append(argument)
    return texts


# --- inspect ------------------------------------------------------------------------------------


def inspect_command(args: argparse.Namespace) -> int:
    """``uuidkit inspect``: decode each UUID (all are parsed before anything is printed).

    References: RFC 9562 §4.1, §4.2, §5.
    """
    descriptions = [describe(_read(text, args.source)) for text in _inputs(args.uuids)]
    if args.json:
        for description in descriptions:
            print(json.dumps(description))
    else:
        print("\n\n".join("\n".join(_text_lines(d)) for d in descriptions))
    return 0


def describe(value: UUID) -> dict[str, Any]:
    """Variant, version, every field under its RFC name and the embedded time of ``value``.

    References: RFC 9562 §4.1, §4.2, §5.1-§5.10.
    """
    number_version = version(value)
    record = fields(value)
    description: dict[str, Any] = {
        "uuid": str(value),
        "variant": VARIANT_LABELS[variant(value)],
        "version": number_version,
    }
    if is_nil(value) or is_max(value):
        description["special"] = "Nil (RFC 9562 §5.9)" if value.int == 0 else "Max (RFC 9562 §5.10)"
    description["fields"] = {
        field.name: getattr(record, field.name)
        for field in dataclasses.fields(record)
        if field.name not in ("variant", "version")
    }
    unix_ns = timestamp_ns(value)
    if unix_ns is not None and number_version is not None:
        description["unix_ns"] = unix_ns
        description["time"] = iso8601(unix_ns, _FRACTION_DIGITS[number_version])
    return description


def iso8601(unix_ns: int, fraction_digits: int) -> str | None:
    """``unix_ns`` as ISO 8601 UTC (``1998-02-04T22:13:53.1518418Z``); ``None`` past year 9999.

    References: RFC 3339 §5.6 (the ISO 8601 profile), RFC 9562 §5.1, §5.7.
    """
    seconds_ns = unix_ns - unix_ns % _NS_PER_S
    try:
        whole = unix_ns_to_datetime(seconds_ns).replace(tzinfo=None).isoformat()
    except ValueError:
        return None
    fraction = f"{unix_ns - seconds_ns:09d}"[:fraction_digits]
    return f"{whole}.{fraction}Z" if fraction else f"{whole}Z"


def _text_lines(description: dict[str, Any]) -> Iterator[str]:
    yield description["uuid"]
    number_version = description["version"]
    yield f"  {'variant':<20} {description['variant']}"
    if number_version is not None:
        label = VERSION_LABELS.get(number_version, "unassigned")
        yield f"  {'version':<20} {number_version} ({label})"
    if "special" in description:
        yield f"  {'special':<20} {description['special']}"
    for name, value in description["fields"].items():
        yield f"  {name:<20} {value} (0x{value:x})"
    if "unix_ns" in description:
        time = description["time"] or "outside datetime's years 1-9999"
        yield f"  {'time':<20} {time}"


# --- convert ------------------------------------------------------------------------------------


def convert_command(args: argparse.Namespace) -> int:
    """``uuidkit convert``: read each UUID as ``--from`` says, reorder, write in ``--format``.

    References: RFC 9562 §4 (forms), §5.6 (v1 <-> v6).
    """
    values = [_read(text, args.source) for text in _inputs(args.uuids)]
    if args.to_version == 6:
        values = [v1_to_v6(value) for value in values]
    elif args.to_version == 1:
        values = [v6_to_v1(value) for value in values]
    style = _style(args)
    print("\n".join(style(value) for value in values))
    return 0


def _style(args: argparse.Namespace) -> Callable[[UUID], str]:
    """``--format`` as a function, with ``--prefix`` for TypeID."""
    if args.prefix is None:
        return lambda value: format_uuid(value, args.format)
    if args.format != "typeid":
        raise UUIDKitError(f"--prefix: only with --format typeid, not {args.format}")
    prefix: str = args.prefix
    encode(uuidkit.NIL, "typeid", prefix=prefix)  # a bad prefix fails before any output
    return lambda value: encode(value, "typeid", prefix=prefix)


def _read(text: str, source: str) -> UUID:
    if source in SCHEMES:
        return decode(text, source)
    if source == "int":
        if not text.isascii() or not text.isdigit():
            raise UUIDKitError(f"--from int: expected a decimal integer, found {text!r}")
        significant = text.lstrip("0")
        # 2**128 has 39 digits; longer text would hit int()'s 4300-digit limit (a bare
        # ValueError with CPython's own message) before the 128-bit range check.
        if len(significant) > len(str(1 << 128)):
            raise UUIDKitError(
                f"--from int: expected 0 <= int < 2**128, found {len(significant)} digits"
            )
        return from_int(int(significant or "0"))
    if source == "bytes_le":
        try:
            octets = bytes.fromhex(text)
        except ValueError:
            raise UUIDKitError(f"--from bytes_le: expected 32 hex digits, found {text!r}") from None
        return from_bytes_le(octets)
    return parse(text)
