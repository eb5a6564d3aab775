"""The repository stands alone: no comment or document cites numbered sections of reference notes that readers
do not have; they cite docs/reference.md, and every anchor of it they cite ("docs/reference.md" + "#section") is a
heading there.

Why a test: a citation of notes outside the repository points readers at text they cannot open. The facts live
in docs/reference.md; this keeps new citations pointing at it and keeps its anchors from rotting when a heading
is renamed.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT

REFERENCE = ROOT / "docs" / "reference.md"

#: Text files that hold code comments, docstrings, documentation or configuration.
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".rules", ".toml", ".cfg", ".ini", ".txt", ".sh", ".pyi"}
TEXT_NAMES = {"Makefile"}
#: Third-party data copied verbatim (the reference's own config files) is not ours to rewrite.
SKIP_PREFIXES = ("tests/data/",)
SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", "node_modules", ".pytest_cache", ".hypothesis"}

SECTION_SIGN = "\u00a7"  # written as an escape so this file does not cite anything itself
SECTION_CITATION = re.compile(SECTION_SIGN + r"\s*\d")
ANCHOR_CITATION = re.compile(r"(?:docs/)?reference\.md#([A-Za-z0-9_\-]+)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_FENCE = re.compile(r"^\s*(```|~~~)")
LOCAL_LINK = re.compile(r"\]\(#([A-Za-z0-9_\-]+)\)")
DOC_LINK = re.compile(r"\]\(([A-Za-z0-9_\-]+\.md)#([A-Za-z0-9_\-]+)\)")


def _text_files() -> list[Path]:
    """Tracked and new (not ignored) text files; a plain walk where git is unavailable."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                             capture_output=True, check=True, timeout=60).stdout.decode("utf-8", "replace")
        rels = [p for p in out.split("\0") if p]
    except (OSError, subprocess.SubprocessError):
        rels = []
        for path in ROOT.rglob("*"):
            if path.is_file() and not (set(path.relative_to(ROOT).parts) & SKIP_DIRS):
                rels.append(path.relative_to(ROOT).as_posix())
    files = []
    for rel in sorted(set(rels)):
        path = ROOT / rel
        if rel.startswith(SKIP_PREFIXES) or not path.is_file():
            continue
        if path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
            files.append(path)
    return files


def github_slug(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|__", "", title).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """Every heading anchor of a Markdown text (GitHub numbering of repeated titles included)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    fenced = False
    for line in markdown.splitlines():
        if CODE_FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if not m:
            continue
        slug = github_slug(m.group(2))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_slug_rules() -> None:
    assert github_slug("Pedestrian planning") == "pedestrian-planning"
    assert github_slug("Observation (" + SECTION_SIGN + "7.2)") == "observation-72"
    assert github_slug("Cars: the lane graph (`core.map.lanes.LaneGraph`)") == "cars-the-lane-graph-coremaplaneslanegraph"
    assert anchors("# A\n## B\n```\n# not a heading\n```\n## B\n") == {"a", "b", "b-1"}


def _text_lines():
    """(file, line number, line) of every line of the readable text files."""
    for path in _text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for no, line in enumerate(text.splitlines(), 1):
            yield path, no, line


def test_no_numbered_section_citations() -> None:
    """Nobody cites "section sign + number" of notes the repository does not contain."""
    bad = [f"{path.relative_to(ROOT)}:{no}: {line.strip()[:120]}" for path, no, line in _text_lines()
           if SECTION_CITATION.search(line)]
    assert not bad, ("cite docs/reference.md#<section> (and state the fact) instead of numbered sections of "
                     "reference notes:\n" + "\n".join(bad))


def test_reference_doc_has_the_promised_sections() -> None:
    have = anchors(REFERENCE.read_text(encoding="utf-8"))
    for slug in ("maps-and-layers", "intersections", "start-and-goal-sampling", "goal-arrival-and-new-trips",
                 "pedestrian-planning", "car-lane-graph", "car-routes", "field-of-view", "choosing-the-move",
                 "grounding-predicates", "collidingclose", "ontologies", "the-decision-procedure",
                 "task-rule-semantics", "spf-observation", "spf-reward", "spf-metrics", "vap-samples",
                 "vap-metrics", "rendering", "security", "deviations-at-a-glance"):
        assert slug in have, slug


def test_every_cited_reference_anchor_exists() -> None:
    have = anchors(REFERENCE.read_text(encoding="utf-8"))
    missing = []
    cited = 0
    for path, no, line in _text_lines():
        for m in ANCHOR_CITATION.finditer(line):
            cited += 1
            if m.group(1) not in have:
                missing.append(f"{path.relative_to(ROOT)}:{no}: #{m.group(1)}")
    assert cited > 0, "no file cites docs/reference.md#<section>; the scan found nothing to check"
    assert not missing, "cited anchors that are not headings of docs/reference.md:\n" + "\n".join(missing)


@pytest.mark.parametrize("doc", ["reference.md"])
def test_links_from_the_reference_doc_resolve(doc: str) -> None:
    """The reference page's own links (#anchor and other-doc.md#anchor) land on existing headings."""
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    own = anchors(text)
    broken = [f"#{a}" for a in LOCAL_LINK.findall(text) if a not in own]
    for name, anchor in DOC_LINK.findall(text):
        target = ROOT / "docs" / name
        if not target.exists() or anchor not in anchors(target.read_text(encoding="utf-8")):
            broken.append(f"{name}#{anchor}")
    assert not broken, f"broken links in docs/{doc}: {broken}"
