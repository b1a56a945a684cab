"""Keys in a Dask dataframe on a distributed cluster of worker processes: a worker SIGKILLed
mid-job, its tasks rerun on another worker, and the keys equal those of a run without the
kill; every key distinct.

With ``UUIDKIT_REQUIRE_DASK=1`` (which ``.ci/run`` exports) a missing ``dask.distributed``
fails instead of skipping.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from uuidkit.generators import ManualNodeSource, NodeBoundV7Generator
from uuidkit.integrations.dask_keys import add_key
from uuidkit.integrations.engine_keys import KeyBlock
from uuidkit.nodelayouts import MULTICAST_BIT


def _engine(name: str) -> Any:
    if os.environ.get("UUIDKIT_REQUIRE_DASK") == "1":
        return importlib.import_module(name)  # missing: an error, not a skip
    return pytest.importorskip(name)


dd = _engine("dask.dataframe")
distributed = _engine("distributed")
cloudpickle = _engine("cloudpickle")
np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

NODE = 0x0200_0000_00AA | MULTICAST_BIT
PARTITIONS = 20
#: How long the victim task waits to be killed before it gives up (never reached when the
#: test works: the test kills it as soon as it has written its pid).
VICTIM_CAP_S = 120.0


def _partition(number: int, rows: int, marks: str | None) -> Any:
    """Partition ``number``'s rows. With ``marks``, partition 3's first attempt writes its
    worker's pid and waits there to be killed; every later attempt runs straight through."""
    if marks is not None and number == 3:
        try:
            fd = os.open(Path(marks, "first-attempt"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pass  # a rerun
        else:
            os.close(fd)
            Path(marks, "victim.tmp").write_text(str(os.getpid()))
            os.rename(Path(marks, "victim.tmp"), Path(marks, "victim"))
            deadline = time.monotonic() + VICTIM_CAP_S
            while time.monotonic() < deadline:  # killed here
                time.sleep(0.05)
    start = number * rows
    return pd.DataFrame({"x": np.arange(start, start + rows, dtype=np.int64)})


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    # The workers cannot import this test module: ship its functions by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as running:
        yield running


def _words(frame: Any) -> Any:
    """The key column as (n, 2) big-endian uint64 words: comparable, sortable."""
    storage = pa.array(frame["key"]).storage
    return np.frombuffer(storage.buffers()[1], dtype=">u8")[: 2 * len(storage)].reshape(-1, 2)


def _keyed(client: Any, block: KeyBlock, rows: int, marks: str | None) -> Any:
    frame = dd.from_map(_partition, range(PARTITIONS), rows=rows, marks=marks)
    return client.compute(add_key(frame, "key", block)[["key"]])


def _kill_when_running(marks: Path) -> None:
    victim = marks / "victim"
    deadline = time.monotonic() + VICTIM_CAP_S
    while not victim.exists():
        assert time.monotonic() < deadline, "the victim task never started"
        time.sleep(0.05)
    os.kill(int(victim.read_text()), signal.SIGKILL)


@pytest.mark.parametrize("total", [200_000, pytest.param(10_000_000, marks=pytest.mark.slow)])
def test_a_killed_workers_tasks_rerun_with_the_same_keys(
    client: Any, tmp_path: Path, total: int
) -> None:
    rows = total // PARTITIONS
    block = KeyBlock.reserve(NodeBoundV7Generator(ManualNodeSource(NODE)), PARTITIONS)
    calm = _words(_keyed(client, block, rows, None).result())

    future = _keyed(client, block, rows, str(tmp_path))
    _kill_when_running(tmp_path)
    killed = _words(future.result())

    assert (tmp_path / "first-attempt").exists()  # partition 3 did run twice
    assert len(calm) == total and np.array_equal(calm, killed)
    # Distinct: strictly ascending as 128-bit numbers (high word, then low word).
    high, low = calm[:, 0], calm[:, 1]
    ascending = (high[1:] > high[:-1]) | ((high[1:] == high[:-1]) & (low[1:] > low[:-1]))
    assert ascending.all()
