"""uuidkit's core against the standard library and its peers, measured in one run.

Run: ``python3 bench/bench_core.py`` (``--quick`` for a fast smoke run). Peers are timed when
installed (``pip install -e '.[bench]'``): ``uuid_utils.compat`` (Rust, returns
``uuid.UUID``) and the ``uuid6`` package (pure Python, returns its own subclass).

Two tables: every figure as a ratio to the standard library's ``uuid.uuid4()`` of the same
run, then each operation as a ratio to its standard-library equivalent (Python 3.11 has no
``uuid7``, so uuid7 is compared with ``uuid.uuid4()``). The targets of issue 2: uuidkit
``uuid4()`` <= 0.30x and ``uuid7()`` <= 0.50x of ``uuid.uuid4()``; ``parse(str)`` no slower
than ``uuid.UUID(str)``.

References: RFC 9562 §5.4, §5.5, §5.7, §4.
"""

from __future__ import annotations

import importlib
import sys
import uuid
from collections.abc import Callable
from types import ModuleType

import uuidkit
from common import Timer

NAME = "python.org"
BASELINE = "stdlib uuid.uuid4()"


def _optional(module: str) -> ModuleType | None:
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _candidates() -> dict[str, list[tuple[str, Callable[[], object]]]]:
    """Per operation: (label, zero-argument call); the first entry is the stdlib equivalent."""
    text = str(uuid.uuid4())
    value = uuidkit.uuid4()
    stdlib_value = uuid.UUID(text)
    operations: dict[str, list[tuple[str, Callable[[], object]]]] = {
        "uuid4()": [
            (BASELINE, uuid.uuid4),
            ("uuidkit.uuid4()", uuidkit.uuid4),
        ],
        "uuid7()": [
            (BASELINE, uuid.uuid4),
            ("uuidkit.uuid7()", uuidkit.uuid7),
        ],
        "uuid5(DNS, name)": [
            ("stdlib uuid.uuid5()", lambda: uuid.uuid5(uuid.NAMESPACE_DNS, NAME)),
            ("uuidkit.uuid5()", lambda: uuidkit.uuid5(uuidkit.NAMESPACE_DNS, NAME)),
        ],
        "parse(str)": [
            ("stdlib uuid.UUID(str)", lambda: uuid.UUID(text)),
            ("uuidkit.parse(str)", lambda: uuidkit.parse(text)),
            ("uuidkit.parse(str, strict=True)", lambda: uuidkit.parse(text, strict=True)),
        ],
        "str(u)": [
            ("stdlib str(u)", lambda: str(stdlib_value)),
            ("str(u) of a uuidkit value", lambda: str(value)),
        ],
    }
    _add_peers(operations, text)
    return operations


def _add_peers(operations: dict[str, list[tuple[str, Callable[[], object]]]], text: str) -> None:
    compat = _optional("uuid_utils.compat")
    if compat is not None:
        operations["uuid4()"].append(("uuid_utils.compat.uuid4()", compat.uuid4))
        operations["uuid7()"].append(("uuid_utils.compat.uuid7()", compat.uuid7))
        dns = compat.NAMESPACE_DNS
        operations["uuid5(DNS, name)"].append(
            ("uuid_utils.compat.uuid5()", lambda: compat.uuid5(dns, NAME))
        )
        operations["parse(str)"].append(("uuid_utils.compat.UUID(str)", lambda: compat.UUID(text)))
    uuid6 = _optional("uuid6")
    if uuid6 is not None:
        operations["uuid7()"].append(("uuid6.uuid7() (PyPI uuid6)", uuid6.uuid7))
        operations["parse(str)"].append(("uuid6.UUID(str) (PyPI uuid6)", lambda: uuid6.UUID(text)))


def main(argv: list[str]) -> int:
    """Time every candidate once and print both tables."""
    timer = Timer(number=20_000, repeat=3) if "--quick" in argv else Timer()
    operations = _candidates()
    timer.measure(BASELINE, uuid.uuid4)
    for candidates in operations.values():
        for label, call in candidates:
            if label not in timer.results:
                timer.measure(label, call)
    print(f"Python {sys.version.split()[0]}, uuidkit {uuidkit.__version__}")
    timer.report(BASELINE, title="ns per call; ratio to the standard library's uuid.uuid4()")
    print("\nratio to the standard-library equivalent of the same operation")
    for operation, candidates in operations.items():
        equivalent = candidates[0][0]
        for label, _ in candidates[1:]:
            ratio = timer.results[label] / timer.results[equivalent]
            print(f"{operation:<18} {label:<36} {ratio:>6.2f}x  (of {equivalent})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
