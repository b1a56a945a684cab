"""``uuidkit.main()``: the command line of the standard library's ``python -m uuid``.

``uuid.main()`` is a public function of the standard library's module (3.12 and later), so
``import uuidkit as uuid`` needs it too. :func:`main` reads ``sys.argv`` and prints what the
running interpreter's ``python -m uuid`` prints for the same options, made by uuidkit's
functions of the same names:

* ``-u``/``--uuid FUNCTION`` (default ``uuid4``): ``uuid1``, ``uuid3``, ``uuid4``, ``uuid5``;
  from Python 3.14 on also ``uuid6``, ``uuid7`` and ``uuid8``.
* ``-n``/``--namespace NAMESPACE`` and ``-N``/``--name NAME``: both required by ``uuid3`` and
  ``uuid5`` (and ignored by the others); the namespace is ``@dns``, ``@url``, ``@oid``,
  ``@x500`` (RFC 9562 §6.6) or any text ``uuid.UUID`` reads.
* ``-C``/``--count NUM`` (Python 3.14 on): ``NUM`` values, one a line (none for ``NUM <= 0``).

Python 3.11's ``uuid`` has no command line; there :func:`main` takes the newest one's options
(3.14's). A bad option, a missing namespace or name, or a namespace that is not a UUID is a
usage error (exit status 2): 3.12 and 3.13 end a bad namespace with a traceback instead, and
every version does so for a name that UTF-8 cannot encode; uuidkit reports both.

``uuidkit`` and ``python -m uuidkit`` hand a command line that starts with one of these options
to :func:`run` (see :func:`is_uuid_option`), so ``python -m uuidkit -u uuid5 -n @dns -N x``
works as ``python -m uuid`` does. Nothing here runs at ``import uuidkit``: :mod:`argparse` and
the generators load when :func:`run` does.

References: RFC 9562 §5 (the versions), §6.6 (the namespace IDs).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from uuid import UUID

__all__ = ["is_uuid_option", "main", "run"]

#: The options of ``python -m uuid``, short and long (``-C``/``--count`` from 3.14 on).
_SHORT_OPTIONS = ("-u", "-n", "-N", "-C")
_LONG_OPTIONS = ("--uuid", "--namespace", "--name", "--count")
_NAME_BASED = ("uuid3", "uuid5")


def _has_newest_options() -> bool:
    """Whether this interpreter's ``python -m uuid`` has 3.14's options (``-C`` and
    ``uuid6``-``uuid8``), or has no command line at all (3.11), which gets the newest.

    Read from the interpreter's own module: 3.12 and 3.13 have ``main`` but no ``uuid7``.
    """
    import uuid

    return not hasattr(uuid, "main") or hasattr(uuid, "uuid7")


def is_uuid_option(word: str) -> bool:
    """Whether ``word``, the first word of a command line, is an option of ``python -m uuid``:
    ``-u``, ``-uuuid7``, ``--uuid``, ``--uuid=uuid7``, or a prefix of a long option such as
    ``--nam`` (which argparse accepts as an abbreviation or reports as ambiguous).

    References: RFC 9562 §5.
    """
    if word[:2] in _SHORT_OPTIONS:
        return True
    if not word.startswith("--") or len(word) == 2:
        return False
    option = word.partition("=")[0]
    return any(name.startswith(option) for name in _LONG_OPTIONS)


def main() -> None:
    """The standard library's ``python -m uuid``: parse ``sys.argv`` and print the UUIDs.

    The same options and output as the running interpreter's ``uuid.main()`` (see the module
    docstring); a usage error exits with status 2.

    References: RFC 9562 §5, §6.6.
    """
    run(sys.argv[1:])


def run(arguments: Sequence[str], prog: str | None = None) -> None:
    """:func:`main` for the command line ``arguments``, the usage naming ``prog`` (by default
    what :mod:`argparse` derives from ``sys.argv``).

    References: RFC 9562 §5, §6.6.
    """
    import argparse

    import uuidkit
    from uuidkit.errors import UUIDKitError

    functions: dict[str, Callable[..., UUID]] = {
        "uuid1": uuidkit.uuid1,
        "uuid3": uuidkit.uuid3,
        "uuid4": uuidkit.uuid4,
        "uuid5": uuidkit.uuid5,
    }
    newest = _has_newest_options()
    if newest:
        functions.update(uuid6=uuidkit.uuid6, uuid7=uuidkit.uuid7, uuid8=uuidkit.uuid8)
    namespaces = {
        "@dns": uuidkit.NAMESPACE_DNS,
        "@url": uuidkit.NAMESPACE_URL,
        "@oid": uuidkit.NAMESPACE_OID,
        "@x500": uuidkit.NAMESPACE_X500,
    }
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Print a new UUID made by the chosen function (the options of "
        "'python -m uuid').",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "-u", "--uuid", choices=functions, default="uuid4", help="the function that makes it"
    )
    parser.add_argument(
        "-n",
        "--namespace",
        metavar="{UUID," + ",".join(namespaces) + "}",  # RFC 9562 §6.6's namespace IDs
        help="for uuid3 and uuid5: the namespace, a UUID or the name of a standard one",
    )
    parser.add_argument("-N", "--name", help="for uuid3 and uuid5: the name in the namespace")
    if newest:
        parser.add_argument(
            "-C", "--count", metavar="NUM", type=int, default=1, help="print NUM new UUIDs"
        )
    args = parser.parse_args(arguments)
    function = functions[args.uuid]
    count: int = getattr(args, "count", 1)
    if args.uuid in _NAME_BASED:
        if not args.namespace or not args.name:
            parser.error(f"{args.uuid} needs both a namespace (-n) and a name (-N)")
        namespace = namespaces.get(args.namespace)
        if namespace is None:
            try:
                namespace = uuidkit.UUID(args.namespace)
            except ValueError as error:
                parser.error(f"argument -n/--namespace: {args.namespace!r}: {error}")
        try:
            line = f"{function(namespace, args.name)}\n"
        except UUIDKitError as error:
            parser.error(f"argument -N/--name: {error}")
        for _ in range(count):  # the same value each time, as the standard library prints
            sys.stdout.write(line)
    else:
        for _ in range(count):  # streamed: a large count runs in constant memory
            sys.stdout.write(f"{function()}\n")
    sys.stdout.flush()
