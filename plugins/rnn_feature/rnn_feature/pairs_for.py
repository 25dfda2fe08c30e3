"""Training on the pairs that will be scored (``pysmt rnn train --pairs-for FILE``).

The decoder looks up only the phrase pairs whose source phrase occurs in its input (as its
[processing] prepares it, at most its maximum phrase length long): :class:`PairsFor` keeps exactly
those lines of the phrase table, what ``pysmt filter`` keeps for the same files
(:func:`pysmt.plugin.systems.input_phrases` and :func:`pysmt.plugin.systems.filter_table`, shared with it).
Only the files' source sides are read: the selection is transductive, never toward a reference.

The kept lines go into the model folder (:data:`FILTERED`, written atomically), once per job; the
training then reads them as it reads a whole table. The files and the system's config are part of
the job record (:meth:`PairsFor.job_inputs`), so a rerun with other files is refused.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pysmt.plugin import PysmtError
from pysmt.plugin.files import require_file

#: The phrase table's lines kept for the --pairs-for files, in the model folder.
FILTERED = "pairs-for.gz"
#: The system config beside a phrase table that ``pysmt train`` wrote (the default of ``-c``).
SYSTEM_CONFIG = "pysmt.toml"


@dataclass(frozen=True)
class PairsFor:
    """Source files the decoder will translate, and the system whose decoder reads them."""

    sources: tuple[Path, ...]
    config: Path  # its [processing] prepares the files, its max phrase length bounds the phrases
    prepared: bool = False  # the files are already tokenized and truecased (as `decode --prepared`)

    @classmethod
    def of(
        cls, sources: Iterable[str | Path], config: str | Path | None, prepared: bool = False, *, table: str | Path
    ) -> PairsFor:
        """Checked, every file existing (else one line naming it); the same files in any order are one job.
        Without ``config``, the system config beside ``table`` (``pysmt train`` writes SYSTEM/phrase-table.gz
        and SYSTEM/pysmt.toml), or an error saying to give ``-c``."""
        paths = {require_file(path, "--pairs-for").resolve() for path in sources}
        if not paths:
            raise PysmtError("--pairs-for: give at least one source file")
        if config is None:
            config = Path(table).parent / SYSTEM_CONFIG
            if not config.is_file():
                raise PysmtError(
                    f"--pairs-for: no {SYSTEM_CONFIG} beside --phrase-table {table}: give -c, the system whose "
                    "decoder reads these files (its [processing] and maximum phrase length, as `pysmt filter -c`)"
                )
        return cls(tuple(sorted(paths)), require_file(config, "-c").resolve(), prepared)

    @property
    def label(self) -> str:
        return "--pairs-for --prepared" if self.prepared else "--pairs-for"

    def job_inputs(self) -> dict[str, Path | None]:
        """What the job record holds: the config and every file (one entry each, in path order)."""
        inputs: dict[str, Path | None] = {"-c": self.config}
        for k, path in enumerate(self.sources, 1):
            inputs[self.label if k == 1 else f"{self.label} ({k})"] = path
        return inputs

    def filtered_table(self, table: Path, out: Path) -> Path:
        """``table``'s lines whose source phrase the decoder can look up in the files, in ``out`` (kept once made)."""
        path = out / FILTERED
        if path.is_file():  # written atomically: whole, and of this job (the record said so)
            return path
        from pysmt.plugin.systems import filter_table

        kept, read = filter_table(table, self.source_phrases(), path)
        if not kept:
            path.unlink()
            raise PysmtError(f"--pairs-for: none of the {read:,} pairs of {table} has a source phrase in {self.names}")
        print(
            f"pysmt rnn train: --pairs-for: kept {kept:,} of {read:,} pairs of {table} (their source phrases "
            f"occur in {self.names}, {self.how}) -> {path}",
            file=sys.stderr,
            flush=True,
        )
        return path

    def source_phrases(self) -> set[str]:
        """The source phrases the decoder can look up in the files: what ``pysmt filter`` keeps a table's lines for."""
        from pysmt.plugin.systems import input_phrases, load_config

        return input_phrases(load_config(self.config), self.sources, prepared=self.prepared)

    @property
    def names(self) -> str:
        return ", ".join(str(source) for source in self.sources)

    @property
    def how(self) -> str:
        return "as given (--prepared)" if self.prepared else f"as {self.config}'s decoder prepares them"
