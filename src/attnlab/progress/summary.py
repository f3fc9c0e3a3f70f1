"""One profile's progress at a glance, and the one resume rule every front end follows."""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.core.example import SECTION_COUNT


@dataclass(frozen=True)
class Summary:
    """One profile's progress at a glance."""

    profile: str
    completed: tuple[int, ...]
    assessments: dict[int, str]
    last_section: int | None
    attempts: int
    correct: int

    @property
    def percent(self) -> int:
        """Whole-number percentage of the 20 sections completed."""
        return round(100 * len(self.completed) / SECTION_COUNT)

    @property
    def to_review(self) -> tuple[int, ...]:
        """Sections whose check is marked "review", in page order."""
        return tuple(s for s in sorted(self.assessments) if self.assessments[s] == "review")

    def finished(self, section: int) -> bool:
        """Whether ``section`` is finished: completed, and not marked "review again"."""
        return section in self.completed and self.assessments.get(section) != "review"

    def unfinished(self) -> tuple[int, ...]:
        """The sections not finished yet, in page order."""
        return tuple(s for s in range(SECTION_COUNT) if not self.finished(s))

    def next_section(self) -> int | None:
        """Where the learner resumes (``attnlab quiz``, the web's "continue", ``attnlab
        progress``): the first unfinished section in page order, else None."""
        return next(iter(self.unfinished()), None)
