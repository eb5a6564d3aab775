"""A tiny random-weight Stable Diffusion pipeline built offline, saved as a diffusers folder (test helper).

Built once per test session (a few seconds, most of it importing torch/diffusers), following the recipe in
shared/notes/stack.md: byte-level CLIP tokenizer, 2-layer text encoder, 2-block UNet, 4-block VAE, Euler.
Images are 64×64 and take well under a second for a few steps on a CPU.
"""
from __future__ import annotations

from pathlib import Path

_BUILT: dict[str, Path] = {}


def _byte_vocab() -> dict[str, int]:
    from core.icongen.models import _bytes_to_unicode

    chars = list(_bytes_to_unicode().values())
    toks = chars + [c + "</w>" for c in chars] + ["<|startoftext|>", "<|endoftext|>"]
    return {t: i for i, t in enumerate(toks)}


def _tiny_vae():
    """The 4-block, 32-channel VAE of both tiny pipelines (64x64 images)."""
    from diffusers import AutoencoderKL

    return AutoencoderKL(
        in_channels=3, out_channels=3, latent_channels=4, layers_per_block=1, block_out_channels=(32, 32, 32, 32),
        down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4,
        norm_num_groups=32, sample_size=64)


def build_tiny_pipeline(out_dir: Path) -> Path:
    import torch
    from diffusers import EulerDiscreteScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = CLIPTokenizer(vocab=_byte_vocab(), merges=[], model_max_length=77)
    torch.manual_seed(0)
    text_encoder = CLIPTextModel(CLIPTextConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=77, projection_dim=32,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id))
    unet = UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8, norm_num_groups=32)
    vae = _tiny_vae()
    scheduler = EulerDiscreteScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
                                       timestep_spacing="trailing", steps_offset=1)
    pipe = StableDiffusionPipeline(vae=vae, text_encoder=text_encoder, tokenizer=tokenizer, unet=unet,
                                   scheduler=scheduler, safety_checker=None, feature_extractor=None,
                                   image_encoder=None, requires_safety_checker=False)
    model = out_dir / "tiny-sd"
    pipe.save_pretrained(model)
    return model


def tiny_model(tmp_path_factory) -> Path:
    """The session's tiny model folder (built on first use)."""
    if "path" not in _BUILT:
        _BUILT["path"] = build_tiny_pipeline(tmp_path_factory.mktemp("tiny_sd"))
    return _BUILT["path"]


def build_tiny_sdxl(out_dir: Path) -> Path:
    """A tiny random-weight SDXL pipeline (two text encoders, text-time conditioning), saved as a folder."""
    import torch
    from diffusers import EulerDiscreteScheduler, StableDiffusionXLPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection, CLIPTokenizer

    vocab = _byte_vocab()
    tok = CLIPTokenizer(vocab=vocab, merges=[], model_max_length=77)
    tok2 = CLIPTokenizer(vocab=vocab, merges=[], model_max_length=77, pad_token="!")
    torch.manual_seed(0)
    cfg = dict(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
               max_position_embeddings=77, projection_dim=32, bos_token_id=tok.bos_token_id,
               eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    te, te2 = CLIPTextModel(CLIPTextConfig(**cfg)), CLIPTextModelWithProjection(CLIPTextConfig(**cfg))
    unet = UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        attention_head_dim=(2, 4), use_linear_projection=True, addition_embed_type="text_time",
        addition_time_embed_dim=8, transformer_layers_per_block=(1, 1), projection_class_embeddings_input_dim=80,
        cross_attention_dim=64, norm_num_groups=32)
    vae = _tiny_vae()
    sched = EulerDiscreteScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
                                   timestep_spacing="leading", steps_offset=1)
    pipe = StableDiffusionXLPipeline(vae=vae, text_encoder=te, text_encoder_2=te2, tokenizer=tok, tokenizer_2=tok2,
                                     unet=unet, scheduler=sched, image_encoder=None, feature_extractor=None,
                                     force_zeros_for_empty_prompt=True)
    model = out_dir / "tiny-sdxl"
    pipe.save_pretrained(model)
    return model
