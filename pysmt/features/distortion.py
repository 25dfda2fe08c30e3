"""Distance-based reordering cost, as Moses' ``Distortion``: minus the jump between consecutive phrases.

The jump is ``|end of previous phrase + 1 - start of this phrase|`` (the first phrase jumps from
the sentence start); there is no cost for the end of the sentence. The state is the previous
phrase's end, so hypotheses ending at the same place recombine.
"""

from __future__ import annotations

from pysmt import _core
from pysmt.config import SystemConfig
from pysmt.features.base import CompiledScores, CompiledTwin, StatefulFeature
from pysmt.features.parameters import ScoreCount
from pysmt.phrases import Sentence, TranslationOption


class DistortionFeature(StatefulFeature[int], CompiledTwin[_core.DistortionTwin], CompiledScores):
    default_label = "Distortion"
    parameters = ScoreCount

    @classmethod
    def from_config(cls, name: str, params: ScoreCount, system: SystemConfig) -> DistortionFeature:
        return cls(name, 1)

    def initial_state(self, sentence: Sentence) -> int:
        return 0

    def extend(self, state: int, option: TranslationOption) -> tuple[tuple[float], int]:
        return (-float(abs(state - option.start)),), option.end

    def core_feature(self) -> _core.DistortionTwin:
        return _core.DistortionTwin()

    def core_scores(self) -> None:
        """Distortion scores nothing in isolation."""
        return None
