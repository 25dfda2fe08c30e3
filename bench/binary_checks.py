"""What checking a binarized table costs when it is loaded (pysmt/models/binary_checks.py), beside mapping it.

    python bench/binary_checks.py SYSTEM-bin/                   # every binary table the folder holds
    python bench/binary_checks.py SYSTEM-bin/ --cold            # the tables' pages dropped from the file cache first

Per table: its arrays' size; the digests the standard library offers, in MB/s over those files (why
CRC-32); loading as it was before checks (mapping and the header's sizes: ``open_table``); the
checksums alone and the ids and offsets alone; a first load (both checks, then recorded) and a later
load (the record found). Best of ``--repeat`` runs. Then what the checksums would cost on the full
news system's 918 MB folders at the measured CRC-32 throughput. ``--cold`` asks the kernel to drop
each file's cached pages before each run (``posix_fadvise``), so the files are read from the disk.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import mmap
import os
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

NEWS_MB = 918
DIGESTS: dict[str, Callable[[memoryview], Any]] = {
    "crc32": zlib.crc32,
    "adler32": zlib.adler32,
    "md5": lambda d: hashlib.md5(d).digest(),
    "sha1": lambda d: hashlib.sha1(d).digest(),
    "sha256": lambda d: hashlib.sha256(d).digest(),
    "blake2b": lambda d: hashlib.blake2b(d).digest(),
}


def drop_cache(files: list[Path]) -> None:
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def best(function: Callable[[], Any], repeat: int, before: Callable[[], None]) -> float:
    times = []
    for _ in range(repeat):
        before()
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(folder: Path, repeat: int, cold: bool) -> dict[str, Any]:
    from pysmt.models import binary_checks
    from pysmt.models.binary_table import ARRAYS, PHRASE_TABLE, open_table, read_header, table_header
    from pysmt.models.phrase_table import PhraseTable
    from pysmt.models.reordering_table import ReorderingTable

    header = read_header(folder)
    kind = header["kind"]
    files = [folder / f"{name}.npy" for name in ARRAYS[kind]]
    size = sum(path.stat().st_size for path in files)
    before = (lambda: drop_cache(files)) if cold else (lambda: None)
    result: dict[str, Any] = {"table": folder.name, "kind": kind, "mb": size / 1e6, "digests": {}}
    for name, digest in DIGESTS.items():

        def run(digest: Callable[[memoryview], Any] = digest) -> None:
            for path in files:  # through a memory map, as file_checksum reads them
                with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                    digest(memoryview(data))

        result["digests"][name] = size / 1e6 / best(run, repeat, before)
    arrays = open_table(folder, kind, header)
    if kind == PHRASE_TABLE:
        counts, num_scores = header["counts"], header["num_scores"]

        def load() -> Any:
            return PhraseTable(folder, log_scores=bool(header.get("log_scores")))

        def structure() -> None:
            binary_checks.check_phrase_arrays(folder, kind, arrays, counts, num_scores)
    else:

        def load() -> Any:
            return ReorderingTable(folder, num_scores=header["num_scores"], source_only=bool(header["source_only"]))

        def structure() -> None:
            binary_checks.check_reordering_arrays(folder, kind, arrays, header["counts"]["keys"], header["num_scores"])

    result["map_s"] = best(lambda: open_table(folder, kind, table_header(folder, kind)), repeat, before)
    result["checksums_s"] = best(lambda: binary_checks.check_checksums(folder, kind, header["arrays"]), repeat, before)
    result["structure_s"] = best(structure, repeat, lambda: (before(), open_table(folder, kind, header)))
    with tempfile.TemporaryDirectory() as cache:
        os.environ["XDG_CACHE_HOME"] = cache
        binary_checks.RECENT_NS = 0
        record = binary_checks.record_path(folder)
        assert record is not None
        result["first_load_s"] = best(load, repeat, lambda: (before(), record.unlink(missing_ok=True)))
        result["later_load_s"] = best(load, repeat, before)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("system", type=Path, help="a folder written by pysmt binarize (or one binary table)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="drop the tables' cached pages before each run")
    args = parser.parse_args()
    folders = (
        [args.system]
        if (args.system / "header.json").is_file()
        else sorted(p for p in args.system.iterdir() if (p / "header.json").is_file())
    )
    results = [measure(folder, args.repeat, args.cold) for folder in folders]
    for r in results:
        print(f"{r['table']} ({r['kind']}, {r['mb']:.1f} MB{', cold' if args.cold else ''}):")
        print("  digests, MB/s: " + ", ".join(f"{name} {rate:,.0f}" for name, rate in r["digests"].items()))
        print(
            f"  mapping {1e3 * r['map_s']:.1f} ms; checksums {1e3 * r['checksums_s']:.1f} ms "
            f"({r['mb'] / r['checksums_s']:,.0f} MB/s); ids and offsets {1e3 * r['structure_s']:.1f} ms; "
            f"first load {1e3 * r['first_load_s']:.1f} ms, later loads {1e3 * r['later_load_s']:.1f} ms"
        )
    mb = sum(r["mb"] for r in results)
    checks = sum(r["checksums_s"] + r["structure_s"] for r in results)
    maps = sum(r["map_s"] for r in results)
    crc = sum(r["checksums_s"] for r in results)
    print(
        f"all tables, {mb:.1f} MB: mapping {1e3 * maps:.1f} ms, checks {1e3 * checks:.1f} ms "
        f"({checks / maps:.0f}x), later loads {1e3 * sum(r['later_load_s'] for r in results):.1f} ms"
    )
    print(
        f"checksums {mb / crc:,.0f} MB/s: the full news system's {NEWS_MB} MB would take "
        f"{NEWS_MB / (mb / crc):.2f} s; both checks at these tables' rate {NEWS_MB / (mb / checks):.2f} s"
    )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
