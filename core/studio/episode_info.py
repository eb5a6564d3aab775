"""What the studio's *Episode info* shows, as plain data (no Qt): the project's saved episodes as project.yaml lists
them (name, file, seed, steps, the city and agent hashes that produced each, the step a branch continued from) and
the recording on screen (its hashes, whether they match the edits, branch and rule segments).

Why: a researcher who keeps several recordings of a city being edited must be able to tell, from the project
alone, which city and which agents made each one (after edits and Apply). The hashes are those of
core/sim/provenance.py; the manifest copy is written by core/project/save.py when the episode is saved.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.sim.provenance import provenance, short
from core.studio.apply import apply_status
from core.studio.rule_branch import rules_segments_text

__all__ = ["EpisodeLine", "saved_episodes", "recording_lines"]


@dataclass(frozen=True)
class EpisodeLine:
    """One saved episode of the manifest."""

    name: str
    file: str
    seed: int
    steps: int
    city: str            # 12-character hash ("—" unknown)
    agents: str
    branched_at: int | None
    current: bool        # the episode the project opens with
    matches_edits: bool | None   # its hashes equal the current city/agents (None: unknown)

    def text(self) -> str:
        branch = f", branched at step {self.branched_at}" if self.branched_at is not None else ""
        match = "" if self.matches_edits is None else (" — matches the edits" if self.matches_edits else
                                                        " — made with another city or agents than the edits")
        return (f"{'● ' if self.current else ''}{self.name} ({self.file}): {self.steps} steps, seed {self.seed}"
                f"{branch}; city {self.city}, agents {self.agents}{match}")


def saved_episodes(session: Any) -> list[EpisodeLine]:
    """The episodes of the open project's manifest (as last saved), current one marked."""
    project = getattr(session, "project", None)
    if project is None:
        return []
    now = provenance(project.config)
    out = []
    for i, e in enumerate(project.episodes):
        prov = e.provenance or {}
        match = None if not prov else (prov.get("city") == now["city"] and prov.get("agents") == now["agents"])
        out.append(EpisodeLine(e.name, e.file, int(e.seed), int(e.steps), short(prov.get("city")),
                               short(prov.get("agents")), e.branched_at, i == project.current_episode, match))
    return out


def recording_lines(session: Any) -> list[str]:
    """The recording on screen: steps, hashes against the edits, branch, rule programs per step range."""
    if getattr(session, "history", None) is None:
        return ["No recording."]
    meta = session.history.meta
    lines = [f"{session.num_steps} steps, seed {meta.get('seed', '—')}"
             + (" (not saved yet)" if session.modified else "")]
    st = apply_status(session)
    if st is not None:
        lines.append(st.text())
    segments = rules_segments_text(meta)
    if segments:
        lines.append(segments)
    return lines
