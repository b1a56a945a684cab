"""``uuidkit`` with no arguments, ``gen``, ``inspect`` and ``convert``.

* ``uuidkit``: a fresh UUIDv7 and its decoded fields.
* ``uuidkit gen [-v VERSION] [-n COUNT] [--namespace NS] [--name NAME] [--hash HASH]
  [--format STYLE]``: new UUIDs, one per line, streamed in chunks (constant memory). The
  standard library's ``python -m uuid`` spellings are accepted where they do not clash with
  these: ``-u uuid7`` for ``-v 7``, ``-N NAME``, ``-C COUNT``, ``@dns``/``@url``/``@oid``/
  ``@x500`` namespaces (its ``-n NAMESPACE`` is not: ``-n`` is the count here).
* ``uuidkit inspect UUID... [--json]``: variant, version, every field under its RFC name and
  the embedded time in ISO 8601 UTC (``--json``: one JSON object per line).
* ``uuidkit convert UUID... [--to-version 1|6] [--from text|int|bytes_le] [--format STYLE]``.

Every ``--format`` (``convert --to`` is the same option) also takes the short encodings of
:mod:`uuidkit.encodings` (``base32-crockford``, ``base32hex``, ``base32``, ``base64url``,
``base58btc``, ``base62``, ``typeid`` with ``--prefix``), and ``inspect``/``convert --from``
read them.

A ``UUID`` argument of ``-`` reads one UUID per line of stdin, lazily: ``uuidkit gen -n 3 |
uuidkit inspect -``. Each value is written as soon as it is read; the first bad one stops the
command with a message naming it (``argument 2 'xyz': ...``, ``stdin line 7 '...': ...``),
which :func:`uuidkit.cli.main` turns into exit status 2.

References: RFC 9562 §4 (forms), §4.1 (Table 1), §4.2 (Table 2), §5 (layouts), §6.6 (Table 3).
"""

from __future__ import annotations

import atexit
from collections.abc import Callable, Iterator
from uuid import UUID

import uuidkit
from uuidkit.cli._io import CHUNK, Input, inputs, write, write_lines
from uuidkit.encodings import SCHEMES, decode, encode
from uuidkit.errors import UUIDKitError
from uuidkit.fields import Variant, fields, is_max, is_nil, timestamp_ns, variant, version
from uuidkit.format import FORMAT_STYLES
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

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    import argparse
    from typing import Any, Final

# Start-up: what only some commands use (the generators, the node layouts, json) is imported
# where it is used, so `uuidkit gen` loads neither inspect's nor convert's modules.

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
#: The versions ``gen`` makes (2, DCE Security, has no generator: RFC 9562 §5.2).
VERSIONS: Final = (1, 3, 4, 5, 6, 7, 8)
_NS_PER_S: Final = 1_000_000_000
#: How ``inspect`` and ``convert`` read their input: UUID text, or an integer/byte form, or a
#: short encoding.
SOURCES: Final = ["text", "int", "bytes_le", *SCHEMES]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``gen``, ``inspect`` and ``convert``.

    References: RFC 9562 §4 (formats), §5 (versions), §6.6 (namespaces).
    """
    from uuidkit.nodelayouts import NODE_LAYOUTS

    styles = list(FORMAT_STYLES)
    gen = subparsers.add_parser(
        "gen",
        help="generate UUIDs, one per line",
        description="Generate UUIDs, one per line, streamed as they are made. The standard "
        "library's 'python -m uuid' spellings work too: -u uuid7, -N NAME, -C NUM, @dns.",
    )
    gen.add_argument(
        "-v", "--version", type=int, default=7, choices=VERSIONS, help="the UUID version"
    )
    gen.add_argument(
        "-u",
        "--uuid",
        dest="version",
        type=_function_name,
        metavar="uuidN",
        help="the standard library's spelling of --version: uuid1, uuid3 ... uuid8",
    )
    gen.add_argument(
        "-n", "-C", "--count", type=_positive, default=1, metavar="COUNT", help="how many"
    )
    gen.add_argument(
        "--namespace",
        type=_namespace,
        metavar="NS",
        help="required for versions 3 and 5 and a name-based 8: dns, url, oid, x500 "
        "(RFC 9562 §6.6), @dns, @url, @oid, @x500, or any UUID",
    )
    gen.add_argument(
        "-N", "--name", help="the name to hash: required for versions 3 and 5; with it, 8 too"
    )
    gen.add_argument(
        "--hash",
        choices=list(NAME_HASHES),
        help="hash of a name-based version 8 (default: sha256, RFC 9562 Appendix B.2)",
    )
    gen.add_argument("--format", choices=styles, default="hyphenated", help="how to write each")
    gen.add_argument("--prefix", help="the TypeID type prefix for --format typeid")
    gen.add_argument(
        "--node-from",
        metavar="SOCKET",
        help="versions 1, 6, 7, 8: carry a node ID claimed through the UIAP daemon at SOCKET "
        "(7: the v7-node layout, 8: v8-node; see docs/distributed.md)",
    )
    gen.set_defaults(handler=gen_command, parser=gen)

    inspect = subparsers.add_parser("inspect", help="decode variant, version, fields and time")
    inspect.add_argument("uuids", nargs="+", metavar="UUID", help="UUIDs; - reads lines of stdin")
    inspect.add_argument("--json", action="store_true", help="one JSON object per line")
    inspect.add_argument(
        "--from", dest="source", choices=SOURCES, default="text", help="how the input is written"
    )
    inspect.add_argument(
        "--layout",
        choices=NODE_LAYOUTS,
        help="read as this node-bearing layout (a v7 or v8 does not say it carries a node)",
    )
    inspect.set_defaults(handler=inspect_command, parser=inspect)

    convert = subparsers.add_parser("convert", help="convert v1 <-> v6 and between formats")
    convert.add_argument("uuids", nargs="+", metavar="UUID", help="UUIDs; - reads lines of stdin")
    convert.add_argument(
        "--to-version", type=int, choices=[1, 6], help="reorder v1 <-> v6 (default: keep)"
    )
    convert.add_argument(
        "--from",
        dest="source",
        choices=SOURCES,
        default="text",
        help="how the input is written",
    )
    convert.add_argument(
        "--format", "--to", choices=styles, default="hyphenated", help="how to write"
    )
    convert.add_argument("--prefix", help="the TypeID type prefix for --format typeid")
    convert.set_defaults(handler=convert_command, parser=convert)


def _type_error(message: str) -> Exception:
    """argparse's error for a bad option value (only argparse calls the converters below, so
    it is loaded by then; ``uuidkit gen``'s fast path runs this module without it)."""
    import argparse

    return argparse.ArgumentTypeError(message)


def _function_name(text: str) -> int:
    """``uuid7`` -> 7: the standard library CLI's ``-u`` values."""
    number = text.removeprefix("uuid")
    if text.startswith("uuid") and number.isdecimal() and int(number) in VERSIONS:
        return int(number)
    raise _type_error(f"expected one of {', '.join(f'uuid{v}' for v in VERSIONS)}, found {text!r}")


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise _type_error(f"expected a positive integer, found {text!r}")
    return number


def _namespace(text: str) -> UUID:
    """``dns``, ``url``, ``oid``, ``x500`` (RFC 9562 §6.6 Table 3), with or without ``@``
    as the standard library's CLI writes them, or any UUID."""
    known = NAMESPACES.get(text.lower().removeprefix("@"))
    if known is not None:
        return known
    try:
        return parse(text)
    except UUIDKitError as error:
        raise _type_error(
            f"expected dns, url, oid, x500 (or @dns ...) or a UUID, found {text!r}: {error}"
        ) from None


# --- no arguments -------------------------------------------------------------------------------


def default_command(args: argparse.Namespace) -> int:
    """No arguments: print a fresh UUIDv7 and its decoded fields.

    References: RFC 9562 §5.7.
    """
    write_lines(_text_lines(describe(uuidkit.uuid7())))
    return 0


# --- gen ----------------------------------------------------------------------------------------


def gen_command(args: argparse.Namespace) -> int:
    """``uuidkit gen``: ``--count`` new UUIDs of ``--version`` in ``--format``, streamed.

    At most :data:`~uuidkit.cli._io.CHUNK` values exist at a time, so memory stays flat
    whatever the count.

    References: RFC 9562 §5, §6.2 (batches), §6.5 (names), §6.6 (namespaces), Appendix B.2.
    """
    make_block = _block_maker(args)
    style = _style(args)
    remaining: int = args.count
    while remaining:
        size = min(remaining, CHUNK)
        write("\n".join(map(style, make_block(size))) + "\n")
        remaining -= size
    return 0


def _block_maker(args: argparse.Namespace) -> Callable[[int], list[UUID]]:
    """The function that makes ``n`` UUIDs as ``args`` ask; a bad combination is a usage error."""
    parser: argparse.ArgumentParser = args.parser
    version: int = args.version
    named = args.name is not None or args.namespace is not None or args.hash is not None
    if args.node_from is not None:
        if version not in (1, 6, 7, 8) or named:
            parser.error(f"--node-from: node-bearing versions are 1, 6, 7 and 8, not {version}")
        return _node_bound(version, args.node_from)
    if version not in _NAME_VERSIONS and named:
        parser.error(f"--name/--namespace/--hash: not used by version {version}")
    if args.hash is not None and version != 8:
        parser.error(f"--hash: only for a name-based version 8, not version {version}")
    if version in (3, 5) or (version == 8 and named):
        if args.namespace is None or args.name is None:
            kind = "version 8 with --name/--hash" if version == 8 else f"version {version}"
            parser.error(f"{kind} is name-based: give both --namespace and --name")
        value = _name_based(version, args.namespace, args.name, args.hash or "sha256")
        return lambda count: [value] * count
    if version == 7:
        from uuidkit.generators.defaults import DEFAULT_V7

        return DEFAULT_V7.generate
    # Looked up by name, so only the chosen one loads: uuid4 and uuid8 need no generators.
    make: Callable[[], UUID] = getattr(uuidkit, f"uuid{version}")
    return lambda count: [make() for _ in range(count)]


def _node_bound(version: int, socket_path: str) -> Callable[[int], list[UUID]]:
    """UUIDs whose node ID is claimed through the UIAP daemon at ``socket_path``; the claim
    is released when the command ends (RFC 9562 §6.4; UIAP §2.1.1)."""
    from uuidkit.bridge import UIAPNodeSource, node_bound_generator

    # One claim: a command that prints its values and ends has no use for a spare node.
    source = UIAPNodeSource(socket_path, spares=0)
    atexit.register(source.close)
    return node_bound_generator(version, source).generate


def _name_based(version: int, namespace: UUID, name: str, algorithm: str) -> UUID:
    if version == 3:
        return uuidkit.uuid3(namespace, name)
    if version == 5:
        return uuidkit.uuid5(namespace, name)
    return build_v8_name(namespace, name, algorithm)  # type: ignore[arg-type]


# --- inspect ------------------------------------------------------------------------------------


def inspect_command(args: argparse.Namespace) -> int:
    """``uuidkit inspect``: decode each UUID as it is read; stop at the first bad one, naming it.

    References: RFC 9562 §4.1, §4.2, §5.
    """
    import json

    first = True
    for item in inputs(args.uuids):
        value = _parsed(item, args.source)
        try:
            description = describe(value, args.layout)
        except UUIDKitError as error:
            raise item.error(error) from None
        if args.json:
            write(json.dumps(description) + "\n")
        else:
            write(("" if first else "\n") + "\n".join(_text_lines(description)) + "\n")
        first = False
    return 0


def _parsed(item: Input, source: str, change: Callable[[UUID], UUID] | None = None) -> UUID:
    """``item`` read as ``source`` says (then ``change``d); an error names the input."""
    try:
        value = _read(item.text, source)
        return value if change is None else change(value)
    except UUIDKitError as error:
        raise item.error(error) from None


def describe(value: UUID, layout: str | None = None) -> dict[str, Any]:
    """Variant, version, every field under its RFC name and the embedded time of ``value``;
    with ``layout`` (``v7-node`` ...), the fields of that node-bearing layout.

    References: RFC 9562 §4.1, §4.2, §5.1-§5.10, §6.4.
    """
    from uuidkit.nodelayouts import V8NodeFields

    number_version = version(value)
    record = fields(value, layout=layout)
    description: dict[str, Any] = {
        "uuid": str(value),
        "variant": VARIANT_LABELS[variant(value)],
        "version": number_version,
    }
    if is_nil(value) or is_max(value):
        description["special"] = "Nil (RFC 9562 §5.9)" if value.int == 0 else "Max (RFC 9562 §5.10)"
    description["fields"] = {
        name: getattr(record, name)
        for name in record.__match_args__
        if name not in ("variant", "version")
    }
    unix_ns = timestamp_ns(value)
    if isinstance(record, V8NodeFields):  # v8 has no time of its own; this layout does
        unix_ns, number_version = record.timestamp_ns, 1  # 244 ns steps: print 100 ns digits
    if layout is not None:
        description["layout"] = layout
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
    style = _style(args)
    change = {6: v1_to_v6, 1: v6_to_v1}.get(args.to_version)
    for item in inputs(args.uuids):
        write(style(_parsed(item, args.source, change)) + "\n")
    return 0


def _style(args: argparse.Namespace) -> Callable[[UUID], str]:
    """``--format`` as a function, with ``--prefix`` for TypeID."""
    if args.prefix is None:
        return FORMAT_STYLES[args.format]
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
