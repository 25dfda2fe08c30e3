"""Builds pysmt's compiled search core, ``pysmt/search/_stack_search.cpp``, with KenLM compiled in.

Everything else is declared in pyproject.toml. KenLM's query code is compiled from its source
distribution (the one on PyPI, as ``scripts/build-kenlm-tools.sh`` uses for lmplz): from
``$PYSMT_KENLM_SOURCE`` or ``third_party/kenlm/src`` when ``setup.sh`` has fetched it there, else
fetched by pip into ``build/`` (sources only, no binaries). Needs a C++17 compiler and zlib's
headers; bzip2 and xz support are added when their headers are there, as KenLM's own build does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

from pybind11.setup_helpers import Pybind11Extension, ParallelCompile
from setuptools import setup

ROOT = Path(__file__).resolve().parent
KENLM_VERSION = "0.3.0"
#: The longest n-gram the decoder's LMs may have (the kenlm Python module's default too).
KENLM_MAX_ORDER = 6


def kenlm_source() -> Path:
    """A folder with KenLM's sources (lm/, util/)."""
    for candidate in (os.environ.get("PYSMT_KENLM_SOURCE"), ROOT / "third_party" / "kenlm" / "src",
                      ROOT / "build" / "kenlm-src"):
        if candidate and (Path(candidate) / "lm" / "model.hh").is_file():
            return Path(candidate)
    target = ROOT / "build" / "kenlm-src"
    download = ROOT / "build" / "kenlm-download"
    download.mkdir(parents=True, exist_ok=True)
    # a plain pip, not the one of the isolated build environment pip may be running this file in
    clean = {key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "PYTHON"))}
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", "kenlm",
                    f"kenlm=={KENLM_VERSION}", "-d", str(download)], check=True, env=clean)
    archive = next(download.glob("kenlm-*.tar.gz"))
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/")[0]
        tar.extractall(download, filter="data")
    (download / top).rename(target)
    return target


def has_header(name: str) -> bool:
    return any((Path(folder) / name).is_file() for folder in ("/usr/include", "/usr/local/include"))


def core_extension() -> Pybind11Extension:
    kenlm = kenlm_source()
    # setuptools wants source paths relative to this folder
    sources = sorted(os.path.relpath(p, ROOT) for pattern in ("util/*.cc", "lm/*.cc", "util/double-conversion/*.cc")
                     for p in kenlm.glob(pattern) if not p.name.endswith(("main.cc", "test.cc")))
    macros = [("KENLM_MAX_ORDER", str(KENLM_MAX_ORDER)), ("NDEBUG", None), ("HAVE_CLOCKGETTIME", None)]
    libraries = ["rt"]
    for header, macro, library in (("zlib.h", "HAVE_ZLIB", "z"), ("bzlib.h", "HAVE_BZLIB", "bz2"),
                                   ("lzma.h", "HAVE_XZLIB", "lzma")):
        if has_header(header):
            macros.append((macro, None))
            libraries.append(library)
    return Pybind11Extension(
        "pysmt.search._stack_search", ["pysmt/search/_stack_search.cpp", *sources],
        include_dirs=[str(kenlm)], define_macros=macros, libraries=libraries, cxx_std=17,
        extra_compile_args=["-O3", "-Wno-deprecated-declarations"])


ParallelCompile("PYSMT_BUILD_JOBS", default=0).install()  # all cores: KenLM is ~40 files
setup(ext_modules=[core_extension()])
