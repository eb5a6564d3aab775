"""Where the text-to-image weights come from: the configured model path, what kind of model it is, and the offline
config folders single-file checkpoints need.

Why here and not in the generator: the studio and the CLI must be able to tell the user "no model configured" or
"this file is an SD 2 checkpoint, use a diffusers folder" instantly, without importing torch/diffusers (which takes
long).
Everything in this module is pure Python.
"""
from __future__ import annotations

import gzip
import json
import os
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.base.errors import LogiCityError
from core.base.paths import RESOURCES
from core.io.datadir import cache_dir, user_data_dir

ENV_MODEL = "LOGICITY_ICON_MODEL"
SD_CONFIGS = RESOURCES / "sd_configs"
BPE_FILE = SD_CONFIGS / "bpe_simple_vocab_16e6.txt.gz"
#: single-file families we ship offline config folders for
SINGLE_FILE_FAMILIES = ("sd1", "sdxl")

NO_MODEL_MESSAGE = (
    "No text-to-image model is configured, so icons cannot be generated (the default icon art still works).\n"
    "Point the studio at Stable Diffusion weights on this computer, any of:\n"
    "  * a diffusers folder (it contains model_index.json), e.g. a copy of stabilityai/sd-turbo,\n"
    "    stabilityai/stable-diffusion-xl-base-1.0 or a Stable Diffusion 1.5 model;\n"
    "  * a single .safetensors checkpoint of Stable Diffusion 1.x or SDXL.\n"
    "Then either choose it in the Render dock's Model field, pass --model PATH to\n"
    f"`python main.py icons generate`, set the environment variable {ENV_MODEL}=PATH, or run\n"
    "`python main.py icons set-model PATH` once.\n"
    "Nothing is downloaded automatically. To download a model explicitly (needs network), run e.g.\n"
    "`python main.py icons download stabilityai/sd-turbo --out ~/models/sd-turbo`."
)


class ModelError(LogiCityError):
    """A missing, unreadable or unsupported model path."""


def settings_path() -> Path:
    return user_data_dir() / "settings.json"


def _read_settings() -> dict[str, Any]:
    try:
        data = json.loads(settings_path().read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def configured_model() -> str | None:
    """The model path from ``$LOGICITY_ICON_MODEL``, else from the settings file; None when not configured."""
    env = os.environ.get(ENV_MODEL)
    if env:
        return env
    value = _read_settings().get("icon_model")
    return str(value) if value else None


def set_configured_model(path: str | Path | None) -> None:
    """Remember (or forget, with None) the model path in ``<data dir>/settings.json``."""
    data = _read_settings()
    if path is None:
        data.pop("icon_model", None)
    else:
        data["icon_model"] = str(Path(path).expanduser().resolve())
    p = settings_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, p)


@dataclass(frozen=True)
class ModelSource:
    """A resolved model: a diffusers folder or a single ``.safetensors`` file of a known family."""

    path: Path
    kind: str            # "folder" | "single_file"
    family: str          # "sd1" | "sd2" | "sdxl" | "other"
    pipeline_class: str  # e.g. StableDiffusionPipeline

    @property
    def name(self) -> str:
        return self.path.stem if self.kind == "single_file" else self.path.name


def safetensors_header(path: Path) -> dict[str, Any]:
    """Tensor names → {dtype, shape} from a safetensors header (reads a few kB; no torch)."""
    try:
        with open(path, "rb") as fh:
            raw_len = fh.read(8)
            if len(raw_len) != 8:
                raise ModelError("file is too short to be a .safetensors checkpoint", path)
            (n,) = struct.unpack("<Q", raw_len)
            if n <= 0 or n > 100_000_000:
                raise ModelError("not a .safetensors file (bad header length)", path)
            header = json.loads(fh.read(n).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ModelError(f"cannot read checkpoint header: {exc}", path) from None
    if not isinstance(header, dict):
        raise ModelError("not a .safetensors file (header is not a mapping)", path)
    header.pop("__metadata__", None)
    return header


def detect_single_file_family(header: dict[str, Any]) -> str:
    """"sdxl", "sd1", "sd2" or "other" from the original (LDM) key names of a checkpoint."""
    keys = header.keys()
    if any(k.startswith("conditioner.embedders.1.model.") for k in keys):
        return "sdxl"
    if any(k.startswith("cond_stage_model.transformer.") for k in keys):
        return "sd1"
    if any(k.startswith("cond_stage_model.model.") for k in keys):
        return "sd2"
    return "other"


def resolve_model(path: str | Path | None = None) -> ModelSource:
    """Check ``path`` (or the configured model) and say what it is; raises :class:`ModelError` with advice."""
    if path is None or str(path).strip() == "":
        path = configured_model()
        if path is None:
            raise ModelError(NO_MODEL_MESSAGE)
    p = Path(path).expanduser()
    if not p.exists():
        raise ModelError("model path does not exist", p)
    if p.is_dir():
        index = p / "model_index.json"
        if not index.is_file():
            singles = sorted(p.glob("*.safetensors"))
            hint = (f"; it holds {singles[0].name}: pass that file instead" if len(singles) == 1 else
                    "; pass a diffusers folder (with model_index.json) or a single .safetensors file")
            raise ModelError("folder is not a diffusers model (no model_index.json)" + hint, p)
        try:
            idx = json.loads(index.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot read model_index.json: {exc}", index) from None
        cls = str(idx.get("_class_name", ""))
        family = "sdxl" if "XL" in cls else ("sd" if cls.startswith("StableDiffusion") else "other")
        if not cls.startswith("StableDiffusion") or "Img2Img" in cls or "Inpaint" in cls:
            raise ModelError(f"unsupported pipeline {cls!r}: use a text-to-image Stable Diffusion model "
                             "(SD 1.x, SD 2.x / SD-Turbo, SDXL / SDXL-Turbo)", index)
        return ModelSource(p, "folder", family, cls)
    if p.suffix.lower() in (".ckpt", ".pt", ".pth", ".bin"):
        raise ModelError("pickle checkpoints (.ckpt/.pt/.bin) can run arbitrary code and are not loaded; "
                         "use a .safetensors file or a diffusers folder", p)
    if p.suffix.lower() != ".safetensors":
        raise ModelError("expected a diffusers folder or a .safetensors file", p)
    header = safetensors_header(p)
    family = detect_single_file_family(header)
    if family not in SINGLE_FILE_FAMILIES:
        what = {"sd2": "a Stable Diffusion 2.x / SD-Turbo checkpoint"}.get(family, "not a recognised SD 1.x/SDXL "
                                                                                 "checkpoint")
        raise ModelError(f"this single file is {what}; single files are supported for SD 1.x and SDXL only. "
                         "Use the model's diffusers folder (with model_index.json) instead", p)
    conv = header.get("model.diffusion_model.input_blocks.0.0.weight", {}).get("shape")
    if conv is not None and len(conv) == 4 and conv[1] != 4:
        raise ModelError(f"this checkpoint's UNet takes {conv[1]} input channels (an inpainting or "
                         "image-conditioned model); use a plain text-to-image checkpoint", p)
    cls = "StableDiffusionXLPipeline" if family == "sdxl" else "StableDiffusionPipeline"
    return ModelSource(p, "single_file", family, cls)


# ------------------------------------------------------------------------ offline single-file configs -----
def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2/CLIP byte → printable character table (printable bytes map to themselves, others to 256+n)."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    table = {b: chr(b) for b in printable}
    n = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + n)
            n += 1
    return {b: table[b] for b in printable + [b for b in range(256) if b not in printable]}


def clip_vocab_and_merges(bpe_file: Path = BPE_FILE) -> tuple[dict[str, int], list[str]]:
    """CLIP's 49,408-token vocabulary and its 48,894 merges, built from the byte-pair file."""
    lines = gzip.open(bpe_file, "rt", encoding="utf-8").read().split("\n")
    merges = lines[1:49152 - 256 - 2 + 1]
    chars = list(_bytes_to_unicode().values())
    vocab = chars + [c + "</w>" for c in chars] + ["".join(m.split()) for m in merges]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    return {tok: i for i, tok in enumerate(vocab)}, merges


def single_file_config_dir(family: str) -> Path:
    """A complete diffusers config folder for ``family`` (configs + tokenizer files), built once in the cache."""
    if family not in SINGLE_FILE_FAMILIES:
        raise ModelError(f"no offline configuration for {family!r} single files")
    src = SD_CONFIGS / family
    dst = cache_dir() / "sd_configs" / f"{family}-v1"
    if (dst / ".complete").is_file():
        return dst
    tmp = dst.with_name(dst.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp)
    vocab, merges = clip_vocab_and_merges()
    for tok_dir in sorted(tmp.glob("tokenizer*")):
        (tok_dir / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
        (tok_dir / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    (tmp / ".complete").write_text("ok\n")
    shutil.rmtree(dst, ignore_errors=True)
    os.replace(tmp, dst)
    return dst


@dataclass(frozen=True)
class SuggestedSettings:
    steps: int
    guidance: float
    size: int
    note: str


def suggested_settings(source: ModelSource) -> SuggestedSettings:
    """Sensible defaults per model family (distilled "turbo"/LCM models need 1–4 steps and no guidance)."""
    name = source.path.name.lower() + " " + str(source.path).lower()
    size = 1024 if source.family == "sdxl" else 512
    if "turbo" in name or "lightning" in name:
        return SuggestedSettings(2, 0.0, size, "distilled turbo model: 1–4 steps, guidance 0")
    if "lcm" in name:
        return SuggestedSettings(6, 1.5, size, "LCM model: 4–8 steps, guidance 1–2")
    if source.family == "sdxl":
        return SuggestedSettings(30, 6.0, size, "SDXL: 25–40 steps, guidance 5–8")
    return SuggestedSettings(25, 7.0, size, "Stable Diffusion: 20–30 steps, guidance 6–8")
