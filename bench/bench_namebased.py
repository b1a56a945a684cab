"""uuid3 and uuid5 per call: uuidkit against fastuuid, uuid_utils.compat and the standard library.

Run: ``python3 bench/bench_namebased.py`` (``--quick`` for a smoke run, ``--rounds N`` for more
rounds than seven on a busy machine), after building the accelerator in place (``python3
setup.py build_ext --inplace``, without ``CFLAGS``: setting it replaces the interpreter's
``-O3``). The candidates are bench_speed.py's ``uuid3`` and
``uuid5`` rows (the name ``www.example.com``: one 64-byte block with the namespace) and its
interleaving: every round runs each candidate once, 200,000 calls, the order rotating; a row
prints the median and the spread (max - min over the median) of its rounds. Ratios are to
``fastuuid`` (the target: at most 1.00x) and, for the pure path, to ``uuid_utils.compat``.

Three tables: the compiled path with SHA-1 on the x86 SHA extensions (where the CPU has them),
the compiled path forced to the portable SHA-1, and the pure path (a child process with
``UUIDKIT_PURE=1``). The load average is printed first: other processes on the machine weigh
on every candidate of a round alike, but widen the spreads.

References: RFC 9562 §5.3, §5.5.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

from bench_speed import NAME, Row, _named, _per_call_rows, interleaved, median_and_spread
from uuidkit import _accel

OPERATIONS = ("uuid3", "uuid5")


def table(title: str, number: int, rounds: int, reference: str) -> None:
    """One interleaved run of each operation's rows; ratios to the row naming ``reference``."""
    rows = _per_call_rows(None)
    _add_text_name_rows(rows)
    print(f"\n{title}")
    print(f"{'what':<44} {'ns/call':>9} {'spread':>7} {'ratio':>7}")
    for operation in OPERATIONS:
        candidates = rows[operation]
        samples = interleaved(candidates, number, rounds)
        base_label = next((label for label, _ in candidates if label.startswith(reference)), None)
        base = median_and_spread(samples[base_label])[0] if base_label else None
        for label, _ in candidates:
            ns, spread = median_and_spread(samples[label])
            ratio = f"{ns / base:>6.2f}x" if base else "      -"
            print(f"{label:<44} {ns:>9.1f} {spread:>6.0%} {ratio}")
        print(f"  (ratio to {base_label or 'no ' + reference + ' row: not installed'})")


def _add_text_name_rows(rows: dict[str, list[Row]]) -> None:
    """uuid_utils.compat with a str name too: its bytes path (bench_speed.py's row, the form
    fastuuid takes) is the slower of its two."""
    try:
        import uuid_utils.compat as compat
    except ImportError:
        return
    namespace = uuid.NAMESPACE_DNS
    for operation in OPERATIONS:
        function = getattr(compat, operation)
        label = f"uuid_utils.compat.{operation}(ns, name)"
        rows[operation].append((label, _named(function, namespace, NAME)))


def main(argv: list[str]) -> int:
    number, rounds = (50_000, 3) if "--quick" in argv else (200_000, 7)
    if "--rounds" in argv:
        rounds = int(argv[argv.index("--rounds") + 1])
    if "--pure-table" in argv:
        table("pure path (UUIDKIT_PURE=1)", number, rounds, "uuid_utils.compat")
        return 0
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"Python {sys.version.split()[0]}; load average {load}")
    speedups = _accel.SPEEDUPS
    if speedups is None:
        print("the accelerator is not built (or UUIDKIT_PURE is set): pure path only")
    else:
        hardware = speedups._sha1_hardware(True)
        label = "SHA extensions" if hardware else "portable SHA-1 (no SHA extensions here)"
        table(f"compiled path, {label}", number, rounds, "fastuuid")
        if hardware:
            speedups._sha1_hardware(False)
            table("compiled path, portable SHA-1 forced", number, rounds, "fastuuid")
            speedups._sha1_hardware(True)
    child = {**os.environ, "UUIDKIT_PURE": "1"}
    sys.stdout.flush()
    command = [sys.executable, __file__, "--pure-table", *argv]
    return subprocess.run(command, env=child, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
