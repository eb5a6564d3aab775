"""The prompt bank: our own subject descriptions per semantic, plus a style suffix that fixes viewpoint/look.

Why a YAML file: artists tune prompts far more often than code; the studio ships a default bank in
``resources/prompts/icon_prompts.yaml`` and prefers the user's editable copy in the data folder.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from core.base.errors import ConfigError
from core.base.paths import RESOURCES
from core.io.datadir import user_data_dir
from core.io.yamlio import LocatedDict, expect, load_yaml
from core.render.semantics import SEMANTICS, TILE_SEMANTICS

DEFAULT_PROMPT_FILE = RESOURCES / "prompts" / "icon_prompts.yaml"
POSTS = ("alpha", "tile", "none")
MIN_DESCRIPTIONS = 20


def user_prompt_file() -> Path:
    return user_data_dir() / "prompts" / "icon_prompts.yaml"


@dataclass(frozen=True)
class SemanticPrompts:
    """Prompts of one semantic. ``post``: "alpha" (remove background), "tile" (make seamless) or "none"."""

    semantic: str
    style: str
    negative: str
    post: str
    descriptions: tuple[str, ...]

    def full_prompt(self, description: str, style: str | None = None) -> str:
        st = self.style if style is None else style
        d = description.strip().rstrip(",")
        return f"{d}, {st}" if st.strip() else d


@dataclass(frozen=True)
class PromptBank:
    entries: Mapping[str, SemanticPrompts]
    negative: str
    source: Path

    def __getitem__(self, semantic: str) -> SemanticPrompts:
        return self.entries[semantic]

    def suggest(self, semantic: str, n: int, seed: int | None = None) -> list[str]:
        """``n`` distinct descriptions drawn at random (seeded) from the bank (repeats only when n > bank)."""
        ds = list(self.entries[semantic].descriptions)
        rng = np.random.default_rng(seed)
        out: list[str] = []
        while len(out) < n:
            out.extend(ds[int(i)] for i in rng.permutation(len(ds)))
        return out[:n]

    @classmethod
    def load(cls, path: str | Path | None = None) -> "PromptBank":
        """Load ``path``, else the user's copy when it exists, else the shipped default.

        Raises :class:`ConfigError` at the offending line for a malformed file.
        """
        if path is None:
            user = user_prompt_file()
            path = user if user.is_file() else DEFAULT_PROMPT_FILE
        path = Path(path)
        data = load_yaml(path)
        if not isinstance(data, LocatedDict):
            raise ConfigError("a prompt bank must be a mapping with a 'semantics' key", path, 1)
        negative = str(expect(data, "negative", str, required=False, default=""))
        sems = expect(data, "semantics", dict)
        entries: dict[str, SemanticPrompts] = {}
        for key in sems:
            if key not in SEMANTICS:
                raise sems.error(f"unknown semantic {key!r}; use one of {', '.join(SEMANTICS)}", key)
            e = sems[key]
            if not isinstance(e, LocatedDict):
                raise sems.error(f"{key!r} must be a mapping with 'style' and 'descriptions'", key)
            descs = expect(e, "descriptions", list, what=key)
            for i, d in enumerate(descs):
                if not isinstance(d, str) or not d.strip():
                    raise descs.error("each description must be a non-empty string", i)
            if len(descs) < 1:
                raise e.error(f"{key!r} needs at least one description", "descriptions")
            post = expect(e, "post", str, required=False, default="tile" if key in TILE_SEMANTICS else "alpha")
            if post not in POSTS:
                raise e.error(f"'post' must be one of {', '.join(POSTS)}", "post")
            entries[key] = SemanticPrompts(
                semantic=key, style=str(expect(e, "style", str, required=False, default="")).strip(),
                negative=str(expect(e, "negative", str, required=False, default=negative)).strip(),
                post=post, descriptions=tuple(d.strip() for d in descs))
        missing = [s for s in SEMANTICS if s not in entries]
        if missing:
            raise data.error(f"prompt bank lacks semantics: {', '.join(missing)}", "semantics")
        return cls(entries, negative.strip(), path)


def ensure_user_copy() -> Path:
    """Create the user's editable copy from the shipped bank (if absent) and return its path."""
    dst = user_prompt_file()
    if not dst.exists():
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DEFAULT_PROMPT_FILE, dst)
    return dst
