"""Every speed ratio of the compiled core, the pure path, bulk arrays, threads and start-up.

Run: ``python3 bench/bench_speed.py`` (``--quick`` for a smoke run). Build the accelerator
first (``python3 setup.py build_ext --inplace``); peers are timed when installed
(``pip install -e '.[bench,bulk]'``): ``uuid_utils.compat`` (Rust, returns ``uuid.UUID``)
and ``fastuuid`` (Rust, returns its own ``UUID`` type).

CPython 3.14's ``uuid`` module (``uuid6``, ``uuid7``) is loaded from a ``Lib/uuid.py`` of a
3.14 source tree given with ``--cpython-uuid PATH``; without it the 3.14 rows use a stated
stand-in: the running Python's ``uuid.uuid4()`` for ``uuid7`` (3.14's ``uuid7`` is
``os.urandom`` plus integer arithmetic and ``UUID._from_int``, the same path as its
``uuid4``) and the running Python's ``uuid.uuid1()`` for ``uuid6``.

Per call, the candidates of an operation take turns: seven rounds (three with ``--quick``)
in which each runs 200,000 calls, the order rotating; each row prints the median and the
spread (max - min over the median) of its rounds, and its ratio is of medians. The
pure-Python table is measured in a child process with ``UUIDKIT_PURE=1``.

The start-up rows (median of 20 fresh ``python -S`` processes; ``--startup-only`` runs just
them) compile uuidkit's bytecode first, and time CPython 3.12's ``-m uuid`` through the real
executable (found under ``$PYENV_ROOT`` or by ``pyenv prefix``), never a shim; the output
names both interpreters. Besides plain ``uuidkit gen``, its other plain forms
(:data:`PLAIN_GEN_FORMS`: every version without a name, a count, an encoded format) are timed
in the same turns and compared with the same peer. The installed ``uuidkit`` console
script (as a user runs it: site-packages, no ``-S``) is timed against ``python -m uuid``.

References: RFC 9562 §5.1, §5.4, §5.6, §5.7, §4.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import timeit
import uuid
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import uuidkit
import uuidkit.bulk
from bench_new_millisecond import new_millisecond
from uuidkit import _accel

MILLION = 1_000_000
#: A typical name-based input: a host name (RFC 9562 §5.3, §5.5; one 64-byte block).
NAME = "www.example.com"
HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "src"


def _optional(module: str) -> ModuleType | None:
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _cpython_uuid(argv: list[str]) -> ModuleType | None:
    """3.14's ``Lib/uuid.py`` from ``--cpython-uuid PATH``, loaded without its ``_uuid``
    helper (an older interpreter's ``_uuid`` lacks what 3.14's module reads from it; its
    uuid6 and uuid7 never use it)."""
    if "--cpython-uuid" not in argv:
        return None
    return load_cpython_uuid(argv[argv.index("--cpython-uuid") + 1])


def load_cpython_uuid(path: str) -> ModuleType:
    """A 3.14 ``Lib/uuid.py`` loaded in this interpreter without its ``_uuid`` helper."""
    spec = importlib.util.spec_from_file_location("cpython314_uuid", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    saved = sys.modules.get("_uuid")
    sys.modules["_uuid"] = None  # type: ignore[assignment]  # makes "import _uuid" fail
    try:
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            del sys.modules["_uuid"]
        else:
            sys.modules["_uuid"] = saved
    return module


Row = tuple[str, Callable[[], object]]


def _per_call_rows(cpython: ModuleType | None) -> dict[str, list[Row]]:
    """Per operation: the baseline first, then uuidkit, then the peers."""
    text = str(uuid.uuid4())
    value = uuid.UUID(text)
    # Every row calls a function bound beforehand, as the peers' rows do: a lookup of
    # ``uuidkit.name`` per call would add the module attribute's cost (unspecialised on
    # 3.11-3.13 because the package has a module __getattr__ for its lazy names).
    parse = uuidkit.parse
    timestamp_datetime = uuidkit.timestamp_datetime
    seven_value = uuidkit.uuid7()
    # CPython 3.14 and later have their own uuid6 and uuid7: those are the baselines there.
    own = uuid if hasattr(uuid, "uuid7") else None
    seven = getattr(own or cpython, "uuid7", None)
    six = getattr(own or cpython, "uuid6", None)
    origin = "stdlib" if own else "3.14"
    rows: dict[str, list[Row]] = {
        "uuid4": [("stdlib uuid.uuid4()", uuid.uuid4), ("uuidkit.uuid4()", uuidkit.uuid4)],
        "uuid7": [
            (f"{origin} uuid.uuid7()", seven)
            if seven
            else ("stand-in: stdlib uuid4()", uuid.uuid4),
            ("uuidkit.uuid7()", uuidkit.uuid7),
        ],
        "uuid1": [("stdlib uuid.uuid1()", uuid.uuid1), ("uuidkit.uuid1()", uuidkit.uuid1)],
        "uuid6": [
            (f"{origin} uuid.uuid6()", six) if six else ("stand-in: stdlib uuid1()", uuid.uuid1),
            ("uuidkit.uuid6()", uuidkit.uuid6),
        ],
        "uuid3": [
            ("stdlib uuid.uuid3(ns, name)", _named(uuid.uuid3)),
            ("uuidkit.uuid3(ns, name)", _named(uuidkit.uuid3)),
            ("uuidkit.uuid3(ns, b'name')", _named(uuidkit.uuid3, name=NAME.encode())),
        ],
        "uuid5": [
            ("stdlib uuid.uuid5(ns, name)", _named(uuid.uuid5)),
            ("uuidkit.uuid5(ns, name)", _named(uuidkit.uuid5)),
            ("uuidkit.uuid5(ns, b'name')", _named(uuidkit.uuid5, name=NAME.encode())),
        ],
        "parse": [
            ("stdlib uuid.UUID(s)", _bind(uuid.UUID, text)),
            ("uuidkit.parse(s)", _bind(parse, text)),
            ("uuidkit.parse(s, strict=True)", lambda: parse(text, strict=True)),
            ("uuidkit.parse(s), looked up per call", lambda: uuidkit.parse(text)),
        ],
        "format": [
            ("stdlib str(u)", _bind(str, value)),
            ("uuidkit.format_uuid(u)", _bind(uuidkit.format_uuid, value)),
            ("uuidkit.to_hyphenated(u)", _bind(uuidkit.to_hyphenated, value)),
        ],
        "bytes": [
            ("stdlib u.bytes", lambda: value.bytes),
            ("uuidkit.to_bytes(u)", _bind(uuidkit.to_bytes, value)),
        ],
        "datetime": [
            ("stdlib u.time (v7)", lambda: seven_value.time),
            ("uuidkit.timestamp_datetime(v7)", _bind(timestamp_datetime, seven_value)),
            ("uuidkit.timestamp_datetime(v1)", _bind(timestamp_datetime, uuidkit.uuid1())),
            ("uuidkit.timestamp_datetime(v6)", _bind(timestamp_datetime, uuidkit.uuid6())),
        ],
        "fields": [
            ("stdlib u.fields", lambda: value.fields),
            ("uuidkit.fields(u)", _bind(uuidkit.fields, value)),
        ],
    }
    _add_peers(rows, text)
    return rows


def _add_peers(rows: dict[str, list[Row]], text: str) -> None:
    for module_name in ("uuid_utils.compat", "fastuuid"):
        peer = _optional(module_name)
        if peer is None:
            continue
        for operation in ("uuid4", "uuid7", "uuid1", "uuid6"):
            function = getattr(peer, operation, None)
            if function is not None:
                rows[operation].append((f"{module_name}.{operation}()", function))
        peer_class: Callable[[str], object] = peer.UUID
        namespace = peer_class(str(uuid.NAMESPACE_DNS))  # a peer may take only its own class
        for operation in ("uuid3", "uuid5"):
            function = getattr(peer, operation, None)
            if function is not None:
                # fastuuid takes the name as bytes only; uuidkit's own bytes row is beside it.
                label = f"{module_name}.{operation}(ns, b'name')"
                rows[operation].append((label, _named(function, namespace, NAME.encode())))
        peer_value = peer_class(text)
        rows["parse"].append((f"{module_name}.UUID(s)", _bind(peer_class, text)))
        rows["format"].append((f"str({module_name}.UUID)", _bind(str, peer_value)))


def _named(
    function: Callable[[Any, Any], object],
    namespace: object = uuid.NAMESPACE_DNS,
    name: str | bytes = NAME,
) -> Callable[[], object]:
    return lambda: function(namespace, name)


def _bind(function: Callable[[Any], object], argument: object) -> Callable[[], object]:
    return lambda: function(argument)


#: Targets of the compiled path: operation -> (max ratio to the baseline of the row).
TARGETS = {
    "uuid4": 0.10,
    "uuid7": 0.12,
    "uuid1": 0.10,
    "uuid6": 0.10,
    "parse": 0.20,
    "format": 0.25,
}


def interleaved(
    candidates: list[Row],
    number: int,
    rounds: int,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, list[float]]:
    """Nanoseconds per call of each candidate in each of ``rounds`` rounds.

    Within a round every candidate runs once (``number`` calls, collector paused as
    ``timeit`` does), so a change of the machine's load weighs on all of them alike; the
    order rotates between rounds so that no candidate always runs first after the others
    warmed the caches. ``clock`` is wall time by default; ``time.process_time`` counts only
    this process's CPU time.
    """
    samples: dict[str, list[float]] = {label: [] for label, _ in candidates}
    for round_index in range(rounds):
        shift = round_index % len(candidates)
        for label, call in candidates[shift:] + candidates[:shift]:
            seconds = timeit.timeit(call, number=number, timer=clock)
            samples[label].append(seconds / number * 1e9)
    return samples


def median_and_spread(values: list[float]) -> tuple[float, float]:
    """The median and the spread (max - min) as a fraction of the median."""
    middle = statistics.median(values)
    return middle, (max(values) - min(values)) / middle


def per_call(number: int, rounds: int, cpython: ModuleType | None, title: str) -> None:
    rows = _per_call_rows(cpython)
    print(f"\n{title}")
    print(f"{'operation':<8} {'what':<36} {'ns/call':>9} {'spread':>7} {'ratio':>7}  target")
    for operation, candidates in rows.items():
        samples = interleaved(candidates, number, rounds)
        base, _ = median_and_spread(samples[candidates[0][0]])
        for label, _ in candidates:
            ns, spread = median_and_spread(samples[label])
            target = TARGETS.get(operation) if label.startswith("uuidkit") else None
            mark = ""
            if target and not _accel.PURE_REQUESTED:
                verdict = "met" if ns / base <= target else "MISSED"
                mark = f"<= {target:.2f}x {verdict}"
            print(
                f"{operation:<8} {label:<36} {ns:>9.1f} {spread:>6.0%} {ns / base:>6.2f}x  {mark}"
            )


def _per_uuid(function: Callable[[], object], repeat: int) -> float:
    best = min(_elapsed(function) for _ in range(repeat))
    return best / MILLION * 1e9


def _elapsed(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def bulk(repeat: int) -> None:
    np = _optional("numpy")
    generate = uuidkit.bulk.generate
    print("\nbulk, 1,000,000 values, ns per UUID (garbage collector on)")
    results = {
        "list of uuid.UUID v7  [<= 150]": _per_uuid(lambda: generate(7, MILLION), repeat),
        "list of uuid.UUID v4": _per_uuid(lambda: generate(4, MILLION), repeat),
        "stdlib [uuid4() for _ in range(n)]": _per_uuid(
            lambda: [uuid.uuid4() for _ in range(MILLION)], repeat
        ),
    }
    if np is not None:
        results |= {
            "numpy v7  [<= 30]": _per_uuid(lambda: generate(7, MILLION, into="numpy"), repeat),
        }
    results |= _bulk_arrays(max(repeat, 3))
    fast = _optional("fastuuid")
    if fast is not None:
        results |= {
            "fastuuid.uuid4_bulk(n)": _per_uuid(lambda: fast.uuid4_bulk(MILLION), repeat),
            "fastuuid.uuid7_bulk(n)": _per_uuid(lambda: fast.uuid7_bulk(MILLION), repeat),
            "fastuuid.uuid4_as_strings_bulk(n)": _per_uuid(
                lambda: fast.uuid4_as_strings_bulk(MILLION), repeat
            ),
            "fastuuid.uuid7_as_strings_bulk(n)": _per_uuid(
                lambda: fast.uuid7_as_strings_bulk(MILLION), repeat
            ),
        }
    for label, ns in results.items():
        print(f"  {label:<46} {ns:>8.1f}")
    peers = [ns for label, ns in results.items() if label.startswith("fastuuid")]
    ours = [ns for label, ns in results.items() if "[<=" in label]
    if peers and ours:
        print(
            f"  slowest uuidkit target row / fastest fastuuid bulk function: "
            f"{max(ours) / min(peers):.2f}x (target < 1.00x)"
        )


def _bulk_arrays(repeat: int) -> dict[str, float]:
    """Random arrays against the CSPRNG floor, then format/parse/timestamps of arrays."""
    np, pa = _optional("numpy"), _optional("pyarrow")
    if np is None or pa is None:
        return {}
    bulk = uuidkit.bulk
    speedups = _accel.SPEEDUPS
    rows = {
        "numpy v4  [<= 45]": lambda: bulk.generate(4, MILLION, into="numpy"),
        "numpy v8": lambda: bulk.generate(8, MILLION, into="numpy"),
        "arrow v4": lambda: bulk.generate(4, MILLION, into="arrow"),
        "os.urandom(16 * n) alone": lambda: os.urandom(16 * MILLION),
    }
    if speedups is not None:
        # The CSPRNG floor measured the way random_records fills: getrandom(2) in 64 KiB
        # chunks into a buffer allocated (and page-faulted) once, 1 and 2 threads.
        buffer = bytearray(16 * MILLION)
        rows["floor: getrandom into a buffer, 1 thread"] = lambda: speedups.getrandom_into(
            buffer, 1
        )
        rows["floor: getrandom into a buffer, 2 threads"] = lambda: speedups.getrandom_into(
            buffer, 2
        )
    v4 = bulk.generate(4, MILLION, into="numpy")
    v4_arrow, v4_list = bulk.generate(4, MILLION, into="arrow"), bulk.to_list(v4)
    v7 = bulk.generate(7, MILLION, into="numpy")
    texts, arrow_texts, listed = bulk.format(v4), bulk.format(v4_arrow), bulk.format(v4_list)
    rows |= {
        "format numpy -> '<U36'  [<= 60]": lambda: bulk.format(v4),
        "format arrow.uuid -> Arrow string  [<= 60]": lambda: bulk.format(v4_arrow),
        "format list[UUID] -> list[str]": lambda: bulk.format(v4_list),
        "parse '<U36' -> numpy  [<= 60]": lambda: bulk.parse(texts),
        "parse '<U36' -> numpy, strict  [<= 60]": lambda: bulk.parse(texts, strict=True),
        "parse Arrow string -> arrow.uuid  [<= 60]": lambda: bulk.parse(arrow_texts, into="arrow"),
        "parse list[str] -> numpy": lambda: bulk.parse(listed),
        "timestamps of numpy v7 -> int64 ns": lambda: bulk.timestamps(v7),
    }
    return {label: _per_uuid(call, repeat) for label, call in rows.items()}


def collector(repeat: int) -> None:
    """The same list of a million v7 UUIDs with the collector scanning it and without."""
    from uuidkit._construct import from_ints_unchecked
    from uuidkit.generators import DEFAULT_V7

    ints = DEFAULT_V7.generate_ints(MILLION)
    print("\ngarbage collector and a list of 1,000,000 uuid.UUID, ns per UUID")
    tracked = _per_uuid(lambda: from_ints_unchecked(ints), repeat)
    print(f"  {'pure path, objects tracked, GC on (before)':<46} {tracked:>8.1f}")
    gc.disable()
    try:
        paused = _per_uuid(lambda: from_ints_unchecked(ints), repeat)
    finally:
        gc.enable()
    print(f"  {'pure path, GC paused during the loop (after)':<46} {paused:>8.1f}")
    if _accel.SPEEDUPS is not None:
        compiled = _per_uuid(lambda: _accel.SPEEDUPS.uuids_from_ints(ints), repeat)
        print(f"  {'compiled, objects untracked, GC on (after)':<46} {compiled:>8.1f}")


def threads(repeat: int = 5) -> None:
    """Best of ``repeat`` (one-thread and four-thread runs taking turns, as the per-call rows
    take the best of five): a single run of either moves by 10-20 % on this machine."""
    uuid7 = uuidkit.uuid7

    def work(count: int) -> None:
        for _ in range(count):
            uuid7()

    def four_threads() -> None:
        workers = [threading.Thread(target=work, args=(MILLION // 4,)) for _ in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    one = four = float("inf")
    for _ in range(repeat):
        one = min(one, _elapsed(lambda: work(MILLION)))
        four = min(four, _elapsed(four_threads))
    print(f"\nthreads: uuidkit.uuid7(), 1,000,000 in total (best of {repeat})")
    print(f"  1 thread x 1,000,000: {one * 1e3:8.1f} ms")
    print(f"  4 threads x 250,000:  {four * 1e3:8.1f} ms  ({four / one:.2f}x, target <= 1.00x)")


def _run_ms(command: list[str], environment: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) milliseconds of one fresh process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status:
        raise SystemExit(f"{command} failed")
    return wall * 1e3, (usage.ru_utime + usage.ru_stime) * 1e3


def _medians_ms(
    commands: dict[str, list[str]], runs: int, environment: dict[str, str] | None = None
) -> dict[str, tuple[float, float]]:
    """Median wall and CPU milliseconds of ``runs`` fresh processes of each command.

    The commands take turns (one of each per round), so a change in the machine's load
    during the measurement weighs on all of them alike instead of on whichever ran then.
    """
    if environment is None:
        environment = dict(os.environ, PYTHONPATH=str(SOURCE))
    samples: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, command in commands.items():
            samples[label].append(_run_ms(command, environment))
    return {
        label: (
            statistics.median(wall for wall, _ in values),
            statistics.median(cpu for _, cpu in values),
        )
        for label, values in samples.items()
    }


def _python312() -> str | None:
    """The real CPython 3.12 executable (not a pyenv shim, whose bash start-up would be timed).

    Tried in order: ``$PYENV_ROOT/versions/3.12*``, ``pyenv prefix 3.12``, then a
    ``python3.12`` on PATH that resolves to an executable file; each must run.
    """
    candidates = sorted(
        Path(os.environ.get("PYENV_ROOT", "~/.pyenv"))
        .expanduser()
        .glob("versions/3.12*/bin/python3.12")
    )
    try:
        prefix = subprocess.run(
            ["pyenv", "prefix", "3.12"], capture_output=True, text=True, timeout=30
        ).stdout.strip()
        if prefix:
            candidates.append(Path(prefix) / "bin" / "python3.12")
    except OSError:
        pass
    on_path = shutil.which("python3.12")
    if on_path and "shims" not in Path(on_path).parts:
        candidates.append(Path(on_path))
    for candidate in candidates:
        try:
            done = subprocess.run([str(candidate), "-S", "-c", "import uuid"], timeout=30)
        except OSError:
            continue
        if done.returncode == 0:
            return str(candidate)
    return None


def _compile_bytecode(python: str) -> None:
    """Write uuidkit's bytecode for ``python`` (the environment may set
    PYTHONDONTWRITEBYTECODE, and then no child would ever write it), so that every process
    timed loads compiled bytecode, as the standard library's modules do."""
    subprocess.run(
        [python, "-m", "compileall", "-q", str(SOURCE / "uuidkit")],
        env=dict(os.environ, PYTHONPATH=str(SOURCE)),
        check=True,
        stdout=subprocess.DEVNULL,
    )


#: The other plain forms of ``uuidkit gen`` (the ones that skip the argument parser), timed
#: beside ``gen`` itself: every version without a name, a count, and an encoded format.
PLAIN_GEN_FORMS = [
    ["-v", "1"],
    ["-v", "4"],
    ["-v", "6"],
    ["-v", "8"],
    ["-n", "100"],
    ["--format", "base58btc"],
]


def startup(runs: int) -> None:
    """Fresh interpreters with -S (no site-packages .pth hooks), bytecode already compiled."""
    python = sys.executable
    _compile_bytecode(python)
    python312 = _python312()
    label = "python3.12 -m uuid" if python312 else "python3 -m uuid"
    gen = [python, "-S", "-m", "uuidkit", "gen"]
    forms = {" ".join(form): [*gen, *form] for form in PLAIN_GEN_FORMS}
    times = _medians_ms(
        {
            "bare": [python, "-S", "-c", "pass"],
            "uuid": [python, "-S", "-c", "import uuid"],
            "uuidkit": [python, "-S", "-c", "import uuidkit"],
            "gen": gen,
            "peer": [python312 or python, "-S", "-m", "uuid"],
            **forms,
        },
        runs,
    )
    bare, stdlib, ours, cli, peer = (
        times[key] for key in ("bare", "uuid", "uuidkit", "gen", "peer")
    )
    print(f"\nstart-up, median of {runs} fresh processes each, in turns (python -S), ms wall / cpu")
    print(f"  interpreter: {python} (bytecode compiled first)")
    print(f"  bare interpreter      {bare[0]:7.1f} / {bare[1]:6.1f}")
    print(f"  import uuid           {stdlib[0]:7.1f} / {stdlib[1]:6.1f}")
    print(f"  import uuidkit        {ours[0]:7.1f} / {ours[1]:6.1f}")
    ratio = (ours[1] - bare[1]) / (stdlib[1] - bare[1])
    wall_ratio = (ours[0] - bare[0]) / (stdlib[0] - bare[0])
    print(
        f"  import uuidkit above bare: {ratio:.2f}x import uuid's (cpu; target <= 2.00x), "
        f"{wall_ratio:.2f}x (wall)"
    )
    print(f"  peer interpreter: {python312 or 'no CPython 3.12 found: ' + python}")
    print(f"  uuidkit gen           {cli[0]:7.1f} / {cli[1]:6.1f}")
    print(f"  {label:<21} {peer[0]:7.1f} / {peer[1]:6.1f}")
    print(
        f"  uuidkit gen: {cli[0] / peer[0]:.2f}x {label} (wall; target <= 1.50x), "
        f"{cli[1] / peer[1]:.2f}x (cpu)"
    )
    for form in forms:
        wall, cpu = times[form]
        print(
            f"  uuidkit gen {form:<18} {wall:7.1f} / {cpu:6.1f}  "
            f"{wall / peer[0]:.2f}x {label} (wall), {cpu / peer[1]:.2f}x (cpu)"
        )


def console_script(runs: int) -> None:
    """The installed ``uuidkit`` console script, as a user runs it (site-packages, no -S),
    against ``python -m uuid`` of the same interpreter and of CPython 3.12, taking turns."""
    script = shutil.which("uuidkit") or str(Path(sys.executable).with_name("uuidkit"))
    if not Path(script).is_file():
        print("\nconsole script: none installed (pip install -e .); rows skipped")
        return
    python312 = _python312()
    commands = {"script": [script, "gen"], "uuid": [sys.executable, "-m", "uuid"]}
    if python312:
        commands["uuid312"] = [python312, "-m", "uuid"]
    times = _medians_ms(commands, runs, dict(os.environ))
    print(f"\nconsole script, median of {runs} fresh processes each, in turns, ms wall / cpu")
    print(f"  {script} gen  {times['script'][0]:7.1f} / {times['script'][1]:6.1f}")
    for key, label in (("uuid", f"{sys.executable} -m uuid"), ("uuid312", f"{python312} -m uuid")):
        if key in times:
            wall, cpu = times[key]
            ratio = times["script"][0] / wall
            print(f"  {label}  {wall:7.1f} / {cpu:6.1f}  (script: {ratio:.2f}x wall)")


USAGE = """usage: bench_speed.py [--quick] [--rounds N] [--cpython-uuid PATH] [--startup-only]

  --quick            3 rounds of 20,000 calls per operation, shorter bulk and new-ms blocks
  --rounds N         interleaved rounds per operation (7, or 3 with --quick)
  --cpython-uuid P   a CPython 3.14 Lib/uuid.py for the uuid6/uuid7 rows before 3.14
  --startup-only     only the start-up and console-script rows
  --help             this text

Each goal of the running interpreter next to its figure: bench/bench_goals.py."""


def main(argv: list[str]) -> int:
    if "--help" in argv or "-h" in argv:
        print(USAGE)
        return 0
    quick = "--quick" in argv
    if "--startup-only" in argv:
        startup(20)
        console_script(20)
        return 0
    number, rounds = (20_000, 3) if quick else (200_000, 7)
    if "--rounds" in argv:
        rounds = int(argv[argv.index("--rounds") + 1])
    cpython = _cpython_uuid(argv)
    compiled = _accel.SPEEDUPS is not None
    print(f"Python {sys.version.split()[0]}, uuidkit {uuidkit.__version__}")
    origin = "not given (stand-ins named in the rows)"
    if cpython is not None:
        origin = f"loaded from {cpython.__file__}"
    if hasattr(uuid, "uuid7"):
        origin = "this interpreter's own (uuid6 and uuid7 rows)"
    print(f"3.14 uuid module: {origin}")
    path = "compiled accelerator" if compiled else "pure Python"
    title = f"per call, {path} (median of {rounds} interleaved rounds x {number:,} calls)"
    per_call(number, rounds, cpython, title)
    if "--pure-table" in argv:
        return 0
    if compiled:
        child = [sys.executable, __file__, "--pure-table", *argv]
        subprocess.run(child, env=dict(os.environ, UUIDKIT_PURE="1"), check=True)
    repeat = 1 if quick else 3
    new_millisecond(samples=300 if quick else 2000, number=20_000 if quick else 200_000)
    bulk(repeat)
    collector(repeat)
    threads()
    startup(20)
    console_script(20)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
