"""Sort a ThreadSanitizer log into races in uuidkit's C code and noise from the interpreter.

Usage::

    python3 tools/tsan_reports.py LOG [LOG ...]

``tools/tsan-check.sh`` runs the free-threaded stress tests with a ThreadSanitizer build of
``uuidkit._speedups`` on an interpreter that is not instrumented. TSan then sees only the
extension's own memory accesses and the C library calls (``memcpy``, ``free``) the interpreter
makes, but none of the interpreter's synchronisation (its mutexes, its allocator's ownership
hand-offs): it reports races between two of the interpreter's own accesses that are not races.
A report is the extension's when either of its two accesses was made by the extension, that is,
when the first frame of that access's stack outside the sanitizer runtime is in
``_speedups``; every other report is counted as noise and not shown.

Prints each of the extension's reports in full and a summary line; exits 1 when there is one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPORT = re.compile(r"^WARNING: ThreadSanitizer: (.*?)(?= \(pid=\d+\))", re.MULTILINE)
#: The headings of a report's two memory accesses (thread creation and location stacks follow).
ACCESS = re.compile(r"^  (?:Previous )?(?:[Aa]tomic )?(?:[Rr]ead|[Ww]rite)\b.*$", re.MULTILINE)
FRAME = re.compile(r"^\s+#\d+ (\S+) .*\((\S+?)\+0x[0-9a-f]+\)$", re.MULTILINE)
SECTION_END = re.compile(r"^\s*$|^  [A-Z]", re.MULTILINE)


def _accessors(report: str) -> list[str]:
    """The module of the first frame outside the sanitizer runtime, per access."""
    modules = []
    for heading in ACCESS.finditer(report):
        body = report[heading.end() :]
        end = SECTION_END.search(body, 1)
        for frame in FRAME.finditer(body[: end.start() if end else None]):
            if "libtsan" not in frame.group(2):
                modules.append(frame.group(2))
                break
    return modules


def split(text: str) -> tuple[list[str], int]:
    """The extension's reports, and how many others (noise) the log holds."""
    starts = [match.start() for match in REPORT.finditer(text)]
    ours: list[str] = []
    noise = 0
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        report = text[start:end].split("==================")[0]
        if any("_speedups" in module for module in _accessors(report)):
            ours.append(report)
        else:
            noise += 1
    return ours, noise


def main(paths: list[str]) -> int:
    ours: list[str] = []
    noise = 0
    for path in paths:
        found, ignored = split(Path(path).read_text(errors="replace"))
        ours += found
        noise += ignored
    for report in ours:
        print(report)
    print(f"tsan: {len(ours)} report(s) in uuidkit._speedups, {noise} in the interpreter (noise)")
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
