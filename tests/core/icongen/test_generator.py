"""Icon generator: end to end on a tiny random-weight pipeline (offline), cancel, seeds, device choice, model
resolution, offline single-file configs, background removal, the prompt bank."""
from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from core.base.errors import ConfigError
from core.icongen.alpha import make_tileable, remove_background
from core.icongen.models import (
    ModelError,
    configured_model,
    detect_single_file_family,
    resolve_model,
    set_configured_model,
    single_file_config_dir,
)
from core.icongen.prompts import MIN_DESCRIPTIONS, PromptBank, ensure_user_copy
from core.render.library import IconLibrary
from core.render.semantics import SEMANTICS
from tests.support.paths import ROOT

pytestmark = pytest.mark.usefixtures("icon_user_data")


# ---------------------------------------------------------------------------------------- end to end -----
def test_generate_end_to_end_into_library(tiny_sd_model, tmp_path):
    from core.icongen.generator import IconGenerator, request_from_bank, save_to_library

    lib = IconLibrary(tmp_path / "lib")
    gen = IconGenerator(tiny_sd_model)
    req = request_from_bank("ambulance", n=3, steps=2, guidance=2.0, seed=40, batch_size=2)
    progress, saved = [], []
    res = gen.generate(req, on_progress=progress.append,
                       on_image=lambda ic: saved.append(save_to_library(lib, ic, "ambulance")))
    assert not res.cancelled and [ic.seed for ic in res.icons] == [40, 41, 42]
    assert [r.seed for r in saved] == [40, 41, 42]
    # per-step progress for both batches, ending complete
    assert [(p.step, p.batch) for p in progress if p.batch] == [(0, (0, 1)), (1, (0, 1)), (2, (0, 1)),
                                                               (0, (2,)), (1, (2,)), (2, (2,))]
    assert progress[-1].fraction == 1.0
    recs = lib.list("ambulance")
    assert len(recs) == 3 and all(r.status == "pending" for r in recs)
    meta = recs[0].meta
    for key in ("prompt", "negative_prompt", "seed", "model", "scheduler", "steps", "guidance", "status"):
        assert key in meta, key
    assert meta["model"] == "tiny-sd" and meta["scheduler"] == "EulerDiscreteScheduler" and meta["steps"] == 2
    assert meta["prompt"] == req.prompts[0] and "top-down" in meta["prompt"]
    assert recs[0].raw_png.is_file()
    with Image.open(recs[0].png) as im:
        assert im.mode == "RGBA"


def test_same_seed_reproduces_an_image_alone(tiny_sd_model):
    """Image k of a batch can be re-made from its sidecar seed and prompt alone."""
    from core.icongen.generator import GenerationRequest, IconGenerator

    gen = IconGenerator(tiny_sd_model)
    prompts = ("a red bus", "a green bus")
    batch = gen.generate(GenerationRequest("bus", prompts, n=2, steps=2, guidance=1.0, seed=7, batch_size=2,
                                           post="none"))
    again = gen.generate(GenerationRequest("bus", ("a green bus",), n=1, steps=2, guidance=1.0, seed=8,
                                           post="none"))
    a = np.asarray(batch.icons[1].raw).astype(int)
    b = np.asarray(again.icons[0].raw).astype(int)
    assert np.abs(a - b).max() <= 2
    other = gen.generate(GenerationRequest("bus", ("a green bus",), n=1, steps=2, guidance=1.0, seed=9,
                                           post="none"))
    assert np.abs(np.asarray(other.icons[0].raw).astype(int) - b).mean() > 1


def test_cancel_keeps_finished_images(tiny_sd_model, tmp_path):
    from core.icongen.generator import GenerationRequest, IconGenerator, save_to_library

    lib = IconLibrary(tmp_path / "lib")
    gen = IconGenerator(tiny_sd_model)
    state = {"images": 0, "steps_after": 0}

    def on_image(ic):
        state["images"] += 1
        save_to_library(lib, ic, "car")

    def on_progress(p):
        if state["images"] >= 2 and p.step >= 1:
            state["steps_after"] += 1

    req = GenerationRequest("car", ("a car",), n=6, steps=4, guidance=1.0, seed=1, post="alpha")
    res = gen.generate(req, on_image=on_image, on_progress=on_progress,
                       should_cancel=lambda: state["steps_after"] >= 1)
    assert res.cancelled and len(res.icons) == 2 and len(lib.list("car")) == 2
    # cancelled before anything starts: nothing is loaded or generated
    res0 = IconGenerator(tiny_sd_model).generate(req, should_cancel=lambda: True)
    assert res0.cancelled and res0.icons == []


def test_request_validation(tiny_sd_model):
    from core.icongen.generator import GenerationError, GenerationRequest, IconGenerator

    gen = IconGenerator(tiny_sd_model)
    for bad in (dict(prompts=()), dict(n=0), dict(steps=0), dict(guidance=-1.0), dict(width=100),
                dict(scheduler="magic"), dict(seed=-3)):
        kw = dict(semantic="car", prompts=("x",), n=1, steps=1)
        kw.update(bad)
        with pytest.raises(GenerationError):
            gen.generate(GenerationRequest(**kw))


def test_scheduler_choice_is_recorded(tiny_sd_model):
    from core.icongen.generator import GenerationRequest, IconGenerator

    res = IconGenerator(tiny_sd_model).generate(GenerationRequest("tiro", ("x",), n=1, steps=2, scheduler="euler_a",
                                                          guidance=1.0, post="tile"))
    assert res.icons[0].meta["scheduler"] == "EulerAncestralDiscreteScheduler"
    assert res.icons[0].image.size == (64, 64)  # tiles are not trimmed


def test_imports_stay_lazy():
    code = ("import sys, core.icongen.generator, core.icongen.models, core.icongen.prompts, core.render.renderer\n"
            "import core.cli.icons\n"
            "heavy = [m for m in ('torch', 'diffusers', 'transformers') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


# ------------------------------------------------------------------------------------------ devices -----
def test_device_selection(monkeypatch):
    import torch

    from core.icongen.device import pick_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert (pick_device().device, pick_device().dtype) == ("cuda", "float16")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert (pick_device().device, pick_device().dtype) == ("mps", "float16")
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert (pick_device("auto").device, pick_device().dtype) == ("cpu", "float32")
    assert pick_device("cpu", "bfloat16").dtype == "bfloat16"
    with pytest.raises(ValueError, match="CUDA"):
        pick_device("cuda")
    with pytest.raises(ValueError):
        pick_device("tpu")


# ------------------------------------------------------------------------------------------- models -----
def _fake_safetensors(path: Path, keys: dict[str, list[int]]) -> Path:
    header = {k: {"dtype": "F16", "shape": shape, "data_offsets": [0, 0]} for k, shape in keys.items()}
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)
    return path


def test_no_model_configured_gives_clear_advice():
    with pytest.raises(ModelError) as err:
        resolve_model(None)
    msg = str(err.value)
    assert "No text-to-image model is configured" in msg and "LOGICITY_ICON_MODEL" in msg
    assert "--model" in msg and "Render dock" in msg and "Nothing is downloaded automatically" in msg


def test_model_setting_roundtrip(tiny_sd_model, monkeypatch):
    assert configured_model() is None
    set_configured_model(tiny_sd_model)
    assert configured_model() == str(tiny_sd_model.resolve())
    assert resolve_model(None).kind == "folder"
    monkeypatch.setenv("LOGICITY_ICON_MODEL", "/elsewhere")
    assert configured_model() == "/elsewhere"
    set_configured_model(None)
    monkeypatch.delenv("LOGICITY_ICON_MODEL")
    assert configured_model() is None


def test_resolve_model_kinds(tiny_sd_model, tmp_path):
    src = resolve_model(tiny_sd_model)
    assert (src.kind, src.pipeline_class, src.name) == ("folder", "StableDiffusionPipeline", "tiny-sd")
    with pytest.raises(ModelError, match="does not exist"):
        resolve_model(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="model_index.json"):
        resolve_model(tmp_path / "empty")
    (tmp_path / "x.ckpt").write_bytes(b"\x80\x04")
    with pytest.raises(ModelError, match="pickle"):
        resolve_model(tmp_path / "x.ckpt")
    sd1 = _fake_safetensors(tmp_path / "sd15.safetensors", {
        "cond_stage_model.transformer.text_model.embeddings.token_embedding.weight": [49408, 768],
        "model.diffusion_model.input_blocks.0.0.weight": [320, 4, 3, 3]})
    assert (resolve_model(sd1).family, resolve_model(sd1).kind) == ("sd1", "single_file")
    xl = _fake_safetensors(tmp_path / "xl.safetensors", {
        "conditioner.embedders.0.transformer.text_model.embeddings.token_embedding.weight": [49408, 768],
        "conditioner.embedders.1.model.token_embedding.weight": [49408, 1280]})
    assert resolve_model(xl).pipeline_class == "StableDiffusionXLPipeline"
    sd2 = _fake_safetensors(tmp_path / "turbo.safetensors", {"cond_stage_model.model.ln_final.weight": [1024]})
    with pytest.raises(ModelError, match="diffusers folder"):
        resolve_model(sd2)
    inpaint = _fake_safetensors(tmp_path / "inpaint.safetensors", {
        "cond_stage_model.transformer.text_model.final_layer_norm.weight": [768],
        "model.diffusion_model.input_blocks.0.0.weight": [320, 9, 3, 3]})
    with pytest.raises(ModelError, match="9 input channels"):
        resolve_model(inpaint)
    (tmp_path / "junk.safetensors").write_bytes(b"\xff" * 16)
    with pytest.raises(ModelError):
        resolve_model(tmp_path / "junk.safetensors")
    assert detect_single_file_family({"foo": {}}) == "other"


def test_single_file_config_folders_match_the_real_architectures():
    """The shipped SD 1.x / SDXL configs build models with exactly the published parameter counts."""
    from accelerate import init_empty_weights
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection, CLIPTokenizer

    def count(m):
        return sum(p.numel() for p in m.parameters())

    sd1, xl = single_file_config_dir("sd1"), single_file_config_dir("sdxl")
    with init_empty_weights():
        assert count(UNet2DConditionModel.from_config(UNet2DConditionModel.load_config(sd1 / "unet"))) == 859_520_964
        assert count(AutoencoderKL.from_config(AutoencoderKL.load_config(sd1 / "vae"))) == 83_653_863
        assert count(CLIPTextModel(CLIPTextConfig.from_pretrained(sd1 / "text_encoder"))) == 123_060_480
        assert count(UNet2DConditionModel.from_config(UNet2DConditionModel.load_config(xl / "unet"))) == 2_567_463_684
        assert count(CLIPTextModelWithProjection(CLIPTextConfig.from_pretrained(xl / "text_encoder_2"))) \
            == 694_659_840
    tok = CLIPTokenizer.from_pretrained(sd1 / "tokenizer")
    assert len(tok) == 49408 and tok.model_max_length == 77
    assert tok("a photo of a cat").input_ids == [49406, 320, 1125, 539, 320, 2368, 49407]
    tok2 = CLIPTokenizer.from_pretrained(xl / "tokenizer_2")
    assert tok2.pad_token_id == 0  # "!" pads the OpenCLIP tokenizer


# -------------------------------------------------------------------------------------- post-process -----
def test_remove_background_keeps_enclosed_and_trims():
    img = Image.new("RGB", (100, 80), (250, 250, 250))
    d = ImageDraw.Draw(img)
    d.ellipse([20, 10, 70, 60], fill=(200, 30, 30))
    d.ellipse([35, 25, 55, 45], fill=(250, 250, 250))  # white hole enclosed by red: must stay opaque
    res = remove_background(img, margin=2)
    a = np.asarray(res.image)
    assert res.image.size == (51 + 4, 51 + 4)
    assert a[0, 0, 3] == 0 and a[a.shape[0] // 2, a.shape[1] // 2, 3] == 255
    assert a[a.shape[0] // 2, 8, 3] == 255 and tuple(a[a.shape[0] // 2, 8, :3]) == (200, 30, 30)
    assert res.info["background_rgb"] == [250, 250, 250] and "warning" not in res.info
    busy = Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8))
    assert "warning" in remove_background(busy).info


def test_make_tileable_has_no_seams():
    rng = np.random.default_rng(1)
    grad = np.linspace(0, 255, 64)[None, :, None] * np.ones((64, 1, 3))
    img = Image.fromarray(np.clip(grad + rng.normal(0, 3, (64, 64, 3)), 0, 255).astype(np.uint8))
    a = np.asarray(img).astype(float)
    before = np.abs(a[:, 0] - a[:, -1]).mean()
    t = np.asarray(make_tileable(img).image).astype(float)
    after = np.abs(t[:, 0] - t[:, -1]).mean()
    assert before > 200 and after < 20


# -------------------------------------------------------------------------------------- prompt bank -----
def test_prompt_bank_default_covers_every_semantic():
    bank = PromptBank.load()
    assert set(bank.entries) == set(SEMANTICS)
    for sem in SEMANTICS:
        e = bank[sem]
        assert len(e.descriptions) >= MIN_DESCRIPTIONS and len(set(e.descriptions)) == len(e.descriptions), sem
        assert e.style and e.negative
    assert bank["crossing"].post == "tile" and bank["bus"].post == "alpha"
    picks = bank.suggest("bus", 5, seed=3)
    assert len(set(picks)) == 5 and picks == bank.suggest("bus", 5, seed=3)


def test_prompt_bank_user_copy_and_errors(tmp_path):
    path = ensure_user_copy()
    assert PromptBank.load().source == path
    path.write_text(path.read_text().replace("      - yellow school bus\n", "      - a flying bus\n"))
    assert "a flying bus" in PromptBank.load()["bus"].descriptions
    bad = tmp_path / "bad.yaml"
    bad.write_text("negative: x\nsemantics:\n  spaceship:\n    descriptions: [a]\n")
    with pytest.raises(ConfigError) as err:
        PromptBank.load(bad)
    assert err.value.line == 3 and "spaceship" in str(err.value)
    bad.write_text("semantics:\n  car:\n    descriptions: [a, 3]\n")
    with pytest.raises(ConfigError, match="non-empty string"):
        PromptBank.load(bad)


def test_single_file_checkpoint_is_loaded_with_the_offline_config(tiny_sd_model, tmp_path, monkeypatch):
    """The single-file branch passes the local config folder and local_files_only (no hub access); the real
    conversion is diffusers' own, stood in for here by the tiny pipeline."""
    import diffusers

    from core.icongen.generator import GenerationRequest, IconGenerator, clear_pipeline_cache

    calls = []

    def fake_from_single_file(path, **kw):
        calls.append((path, kw))
        return diffusers.StableDiffusionPipeline.from_pretrained(str(tiny_sd_model), local_files_only=True)

    monkeypatch.setattr(diffusers.StableDiffusionPipeline, "from_single_file", fake_from_single_file)
    ckpt = _fake_safetensors(tmp_path / "my-sd15.safetensors", {
        "cond_stage_model.transformer.text_model.embeddings.token_embedding.weight": [49408, 768]})
    clear_pipeline_cache()
    res = IconGenerator(ckpt).generate(GenerationRequest("car", ("x",), n=1, steps=1, guidance=1.0))
    clear_pipeline_cache()
    (path, kw), = calls
    assert path == str(ckpt) and kw["local_files_only"] is True and kw["safety_checker"] is None
    cfg = Path(kw["config"])
    assert (cfg / "model_index.json").is_file() and (cfg / "tokenizer" / "vocab.json").is_file()
    assert cfg.is_relative_to(Path(__import__("os").environ["LOGICITY_DATA_DIR"]))
    assert res.icons[0].meta["model"] == "my-sd15" and res.icons[0].meta["model_kind"] == "single_file"


def test_sdxl_folder_end_to_end_and_cancel(tmp_path_factory):
    """An SDXL pipeline (two text encoders) goes through the same path: batches, negative prompt, cancel."""
    from core.icongen.generator import GenerationRequest, IconGenerator, clear_pipeline_cache
    from tests.support.tiny_sd import build_tiny_sdxl

    xl = build_tiny_sdxl(tmp_path_factory.mktemp("tiny_sdxl"))
    gen = IconGenerator(xl)
    assert gen.source.pipeline_class == "StableDiffusionXLPipeline" and gen.source.family == "sdxl"
    req = GenerationRequest("bus", ("a bus", "b bus"), negative_prompt="blurry", n=4, steps=2, guidance=3.0,
                            seed=3, batch_size=2)
    steps = []
    res = gen.generate(req, on_progress=lambda p: steps.append(p.step),
                       should_cancel=lambda: len(steps) >= 5)  # during the second batch
    clear_pipeline_cache()
    assert res.cancelled and [ic.seed for ic in res.icons] == [3, 4]
    assert res.icons[0].meta["pipeline"] == "StableDiffusionXLPipeline"
    assert res.icons[0].meta["negative_prompt"] == "blurry"
