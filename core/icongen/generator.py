"""Text-to-image icon generation with diffusers, from local weights only.

Why it looks like this:

* torch/diffusers are imported inside :meth:`IconGenerator.load` (importing them takes long), never when the
  studio or the tests start;
* every image has its own seed (``seed + k``) and a CPU ``torch.Generator``, so any image can be re-made alone
  from its sidecar, on any device, regardless of the batch it was made in;
* each finished image is handed to ``on_image`` (which saves it) before the next batch starts, and cancelling
  (``should_cancel`` checked after every denoising step) only abandons the batch in progress: nothing finished is
  lost;
* the loaded pipeline is cached (one at a time), so the second batch of a session starts immediately.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from core.base.errors import LogiCityError
from core.icongen.alpha import postprocess
from core.icongen.device import DeviceChoice, pick_device
from core.icongen.models import ModelError, ModelSource, resolve_model, single_file_config_dir
from core.icongen.prompts import PromptBank
from core.render.semantics import parse_semantic

#: Scheduler choices offered to users ("default" keeps the model's own).
SCHEDULERS: dict[str, str | None] = {
    "default": None, "euler": "EulerDiscreteScheduler", "euler_a": "EulerAncestralDiscreteScheduler",
    "dpmpp_2m": "DPMSolverMultistepScheduler", "ddim": "DDIMScheduler", "lcm": "LCMScheduler",
}


class GenerationError(LogiCityError):
    """Generation failed for a reason the user can act on (bad parameters, model cannot be loaded)."""


@dataclass(frozen=True)
class GenerationRequest:
    """What to generate. Image ``k`` (0-based) uses ``prompts[k % len(prompts)]`` and seed ``seed + k``."""

    semantic: str
    prompts: tuple[str, ...]
    negative_prompt: str = ""
    n: int = 4
    steps: int = 20
    guidance: float = 7.0
    seed: int = 0
    width: int | None = None    # None: the model's native size
    height: int | None = None
    batch_size: int = 1
    scheduler: str = "default"
    post: str = "alpha"         # "alpha" | "tile" | "none" (see core.icongen.alpha)

    def validate(self) -> None:
        parse_semantic(self.semantic)
        if not self.prompts or not all(p.strip() for p in self.prompts):
            raise GenerationError("at least one non-empty prompt is needed")
        if not 1 <= self.n <= 10_000:
            raise GenerationError("count must be between 1 and 10000")
        if not 1 <= self.steps <= 500:
            raise GenerationError("steps must be between 1 and 500")
        if not 0.0 <= self.guidance <= 50.0:
            raise GenerationError("guidance must be between 0 and 50")
        if not 0 <= self.seed < 2 ** 63 - self.n:
            raise GenerationError("seed must be a non-negative integer")
        if self.batch_size < 1:
            raise GenerationError("batch size must be at least 1")
        for v in (self.width, self.height):
            if v is not None and (v < 64 or v > 4096 or v % 8):
                raise GenerationError("width/height must be multiples of 8 between 64 and 4096")
        if self.scheduler not in SCHEDULERS:
            raise GenerationError(f"unknown scheduler {self.scheduler!r}; use one of {', '.join(SCHEDULERS)}")
        if self.post not in ("alpha", "tile", "none"):
            raise GenerationError("post must be alpha, tile or none")

    def seed_of(self, k: int) -> int:
        return self.seed + k

    def prompt_of(self, k: int) -> str:
        return self.prompts[k % len(self.prompts)]


def request_from_bank(semantic: str, descriptions: Sequence[str] | None = None, *, n: int = 4,
                      bank: PromptBank | None = None, style: str | None = None, negative: str | None = None,
                      **kw: Any) -> GenerationRequest:
    """A request whose prompts are ``description + ", " + style`` from the prompt bank (``descriptions`` None:
    ``n`` drawn from the bank with the request's seed)."""
    sem = parse_semantic(semantic)
    bank = bank or PromptBank.load()
    entry = bank[sem]
    if not descriptions:
        descriptions = bank.suggest(sem, n, seed=kw.get("seed", 0))
    prompts = tuple(entry.full_prompt(d, style) for d in descriptions)
    kw.setdefault("post", entry.post)
    return GenerationRequest(semantic=sem, prompts=prompts,
                             negative_prompt=entry.negative if negative is None else negative, n=n, **kw)


@dataclass(frozen=True)
class Progress:
    """Where a run is: ``images_done`` of ``images_total`` finished, the current batch at ``step``/``steps``."""

    images_done: int
    images_total: int
    step: int
    steps: int
    batch: tuple[int, ...] = ()   # image indices of the batch being denoised

    @property
    def fraction(self) -> float:
        per = 1.0 / max(self.images_total, 1)
        return min(1.0, self.images_done * per + len(self.batch) * per * self.step / max(self.steps, 1))


@dataclass
class GeneratedIcon:
    index: int
    seed: int
    prompt: str
    image: Any            # PIL RGBA (after post-processing)
    raw: Any              # PIL RGB as generated
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class GenerationResult:
    icons: list[GeneratedIcon]
    cancelled: bool
    seconds: float


class _Interrupted(Exception):
    pass


_CACHE_LOCK = threading.Lock()
_CACHE: dict[tuple, Any] = {}


def clear_pipeline_cache() -> None:
    with _CACHE_LOCK:
        _CACHE.clear()


class IconGenerator:
    """Generates icons from a local Stable Diffusion model (a diffusers folder or a single .safetensors file)."""

    def __init__(self, model: str | Path | None = None, device: str = "auto", dtype: str | None = None) -> None:
        self.source: ModelSource = resolve_model(model)  # fails fast, before any heavy import
        self._device_request = device
        self._dtype_request = dtype
        self.choice: DeviceChoice | None = None
        self.pipe: Any = None
        self._default_scheduler: Any = None

    # ----------------------------------------------------------------------------------------- loading ----
    def load(self, status: Callable[[str], None] | None = None) -> Any:
        """Import torch/diffusers and load the pipeline (cached across generators for the same model)."""
        if self.pipe is not None:
            return self.pipe
        say = status or (lambda _m: None)
        say("importing torch and diffusers…")
        try:
            self.choice = pick_device(self._device_request, self._dtype_request)
        except ValueError as exc:
            raise GenerationError(str(exc)) from None
        key = (str(self.source.path.resolve()), self.source.kind, self.choice.device, self.choice.dtype)
        with _CACHE_LOCK:
            pipe = _CACHE.get(key)
            if pipe is None:
                say(f"loading {self.source.name} on {self.choice.device} ({self.choice.dtype})…")
                pipe = _load_pipeline(self.source, self.choice)
                _CACHE.clear()  # keep one model in memory
                _CACHE[key] = pipe
        self.pipe = pipe
        self._default_scheduler = pipe.scheduler
        return pipe

    @property
    def model_name(self) -> str:
        return self.source.name

    # -------------------------------------------------------------------------------------- generating ----
    def generate(self, request: GenerationRequest, *, on_progress: Callable[[Progress], None] | None = None,
                 on_image: Callable[[GeneratedIcon], None] | None = None,
                 should_cancel: Callable[[], bool] | None = None,
                 status: Callable[[str], None] | None = None) -> GenerationResult:
        request.validate()
        cancel = should_cancel or (lambda: False)
        t0 = time.perf_counter()
        done: list[GeneratedIcon] = []
        if cancel():
            return GenerationResult(done, True, 0.0)
        pipe = self.load(status)
        if cancel():
            return GenerationResult(done, True, time.perf_counter() - t0)
        import torch

        pipe.scheduler = self._scheduler_for(request.scheduler)
        sched_name = type(pipe.scheduler).__name__
        assert self.choice is not None
        cancelled = False
        for b0 in range(0, request.n, request.batch_size):
            batch = tuple(range(b0, min(request.n, b0 + request.batch_size)))
            if cancel():
                cancelled = True
                break
            if on_progress:
                on_progress(Progress(len(done), request.n, 0, request.steps, batch))

            def on_step(_pipe, i, _t, kwargs, batch=batch):
                if on_progress:
                    on_progress(Progress(len(done), request.n, i + 1, request.steps, batch))
                if cancel():
                    raise _Interrupted
                return kwargs

            gens = [torch.Generator(device="cpu").manual_seed(request.seed_of(k)) for k in batch]
            call: dict[str, Any] = dict(
                prompt=[request.prompt_of(k) for k in batch], num_inference_steps=request.steps,
                guidance_scale=request.guidance, generator=gens, callback_on_step_end=on_step, output_type="pil")
            if request.negative_prompt.strip() and request.guidance > 1.0:
                call["negative_prompt"] = [request.negative_prompt] * len(batch)
            if request.width:
                call["width"] = request.width
            if request.height:
                call["height"] = request.height
            tb = time.perf_counter()
            try:
                with torch.inference_mode():
                    out = pipe(**call)
            except _Interrupted:
                cancelled = True
                break
            except (RuntimeError, ValueError, TypeError) as exc:  # OOM, bad size for the model, …
                raise GenerationError(f"generation failed: {exc}") from exc
            per_image = (time.perf_counter() - tb) / len(batch)
            for k, raw in zip(batch, out.images):
                raw = raw.convert("RGB")
                post = postprocess(raw, request.post)
                meta = {
                    "semantic": parse_semantic(request.semantic), "prompt": request.prompt_of(k),
                    "negative_prompt": call.get("negative_prompt", [""])[0], "seed": request.seed_of(k),
                    "model": self.source.name, "model_path": str(self.source.path), "model_kind": self.source.kind,
                    "pipeline": type(pipe).__name__, "scheduler": sched_name, "scheduler_choice": request.scheduler,
                    "steps": request.steps, "guidance": request.guidance, "generated_width": raw.width,
                    "generated_height": raw.height, "device": self.choice.device, "dtype": self.choice.dtype,
                    "generator": "torch.Generator('cpu').manual_seed(seed)", "batch_size": len(batch),
                    "post": request.post, "postprocess": post.info, "seconds": round(per_image, 3),
                }
                icon = GeneratedIcon(k, request.seed_of(k), request.prompt_of(k), post.image, raw, meta)
                done.append(icon)
                if on_image:
                    on_image(icon)
            if on_progress:
                on_progress(Progress(len(done), request.n, request.steps, request.steps, ()))
        return GenerationResult(done, cancelled, time.perf_counter() - t0)

    def _scheduler_for(self, choice: str) -> Any:
        name = SCHEDULERS.get(choice)
        if name is None:
            return self._default_scheduler
        import diffusers

        cls = getattr(diffusers, name)
        return cls.from_config(self._default_scheduler.config)


def _load_pipeline(source: ModelSource, choice: DeviceChoice) -> Any:
    import diffusers
    import transformers

    diffusers.utils.logging.disable_progress_bar()
    transformers.utils.logging.disable_progress_bar()
    dtype = choice.torch_dtype()
    try:
        if source.kind == "folder":
            kw: dict[str, Any] = dict(dtype=dtype, local_files_only=True)
            if "XL" not in source.pipeline_class:
                kw.update(safety_checker=None, requires_safety_checker=False)
            unet_dir = source.path / "unet"
            if unet_dir.is_dir() and not any(unet_dir.glob("diffusion_pytorch_model.safetensors")) \
                    and not any(unet_dir.glob("diffusion_pytorch_model.bin")) \
                    and any(unet_dir.glob("*.fp16.safetensors")):
                kw["variant"] = "fp16"
            pipe = diffusers.DiffusionPipeline.from_pretrained(str(source.path), **kw)
        else:
            cls = getattr(diffusers, source.pipeline_class)
            cfg = single_file_config_dir(source.family)
            kw = dict(config=str(cfg), local_files_only=True, dtype=dtype)
            if source.family == "sd1":
                kw.update(safety_checker=None, requires_safety_checker=False)
            pipe = cls.from_single_file(str(source.path), **kw)
    except ModelError:
        raise
    except (OSError, ValueError, KeyError, RuntimeError, EnvironmentError) as exc:
        raise GenerationError(f"cannot load the model: {exc}", source.path) from exc
    pipe.set_progress_bar_config(disable=True)
    pipe = pipe.to(choice.device)
    return pipe


def save_to_library(library, icon: GeneratedIcon, semantic: str, status: str = "pending"):
    """Store a generated icon (RGBA + raw + sidecar) in an :class:`core.render.library.IconLibrary`."""
    return library.add(semantic, icon.image, icon.meta, raw=icon.raw, status=status)
