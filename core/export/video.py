"""Exporter ``video``: rendered animations of an episode range (GIF; MP4 where an encoder is installed).

Frames come from the icon renderer (:class:`core.render.renderer.Renderer`, the same drawing as
``python main.py render``), states ``first..last`` of each episode, ``ppc`` pixels per cell. Source: the episode
file given by ``--episode`` (one video), or ``episodes`` simulated episodes of the mode (episode ``e`` = seed
``seed + e``, one video each, one shard per episode). Files: ``videos/episode_NNNNN.gif`` (or ``.mp4``).

GIF is written with Pillow. MP4 is H.264 through imageio with the ``imageio-ffmpeg`` plugin (pinned; it bundles the
ffmpeg binary) or PyAV, byte-identical when redone (one encoder thread, bitexact flags); where neither is installed
the option is refused up front with that explanation.
"""
from __future__ import annotations

import importlib.util
import io
import tempfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from core.export.common import episode_plan, load_config, mode_files, sim_options, simulate
from core.export.registry import ExportError, ExporterSpec, Option, Shard, ShardResult, register, shard_name
from core.io.fileio import atomic_write_bytes

# The renderer, PIL, imageio and the simulator's replay are imported by the functions that use them: `python main.py
# --help` imports every exporter module to list its options (core/cli/export.py).

#: largest frame side in pixels (a typo in --ppc must not allocate gigabytes)
MAX_SIDE_PX = 4096


def mp4_encoder() -> str | None:
    """Name of an installed MP4 encoder plugin for imageio ("pyav" or "ffmpeg"), or None."""
    if importlib.util.find_spec("imageio") is None:
        return None
    if importlib.util.find_spec("av") is not None:
        return "pyav"
    if importlib.util.find_spec("imageio_ffmpeg") is not None:
        return "ffmpeg"
    return None


def _check(options: Mapping[str, Any]) -> None:
    if options["format"] == "mp4" and mp4_encoder() is None:
        raise ExportError("export video: --format mp4 needs an MP4 encoder (imageio with imageio-ffmpeg or PyAV); "
                          "neither is installed here. Use --format gif, or install imageio-ffmpeg.")
    if options["last"] != -1 and options["last"] < options["first"]:
        raise ExportError(f"export video: --last ({options['last']}) must be >= --first ({options['first']}) or -1")
    if options["episode"] and not Path(options["episode"]).is_file():
        raise ExportError("export video: --episode file not found", options["episode"])


def plan(options: Mapping[str, Any]) -> list[Shard]:
    if options["episode"]:
        return [Shard(0, shard_name(0), {"episode_file": str(options["episode"]), "episodes": [0], "seeds": []})]
    return episode_plan(options)


def config_files(options: Mapping[str, Any]) -> dict[str, Path]:
    if options["episode"]:
        return {"episode": Path(options["episode"])}
    return mode_files(options)


def render_frames(episode, city, first: int, last: int, ppc: int, seed: int = 0) -> list:
    """RGB frames (numpy arrays) of states ``first..last`` of ``episode``."""
    from core.render.renderer import Renderer

    if max(city.height, city.width) * ppc > MAX_SIDE_PX:
        raise ExportError(f"export video: the map ({city.height}x{city.width} cells) at --ppc {ppc} is larger than "
                          f"{MAX_SIDE_PX} px per side; use a smaller --ppc")
    last = episode.num_states - 1 if last == -1 else min(last, episode.num_states - 1)
    if first > last:
        raise ExportError(f"export video: --first {first} is beyond the episode's last state {last}")
    renderer = Renderer(city, px_per_cell=ppc, seed=seed)
    prev = renderer.render(episode.snapshot(first - 1)) if first > 0 else None
    frames = []
    for k in range(first, last + 1):
        prev = renderer.render(episode.snapshot(k), previous=prev)
        frames.append(prev.image)
    return frames


def encode(frames: list, fmt: str, fps: int) -> bytes:
    if fmt == "gif":
        from PIL import Image

        images = [Image.fromarray(np.ascontiguousarray(f[..., :3])) for f in frames]
        buf = io.BytesIO()
        images[0].save(buf, format="GIF", save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0)
        return buf.getvalue()
    return _encode_mp4([np.ascontiguousarray(f[..., :3]) for f in frames], fps)


def _encode_mp4(frames: list, fps: float) -> bytes:
    """H.264 MP4 through imageio's ffmpeg writer (imageio-ffmpeg bundles the ffmpeg binary), or PyAV.

    Byte-identical for the same frames (resumed exports must equal uninterrupted ones): one encoder thread and
    ffmpeg's bitexact flags (no encoder version string, no creation time). Frame sides are padded up to a
    multiple of 16 (H.264's macroblock; yuv420p needs even sides) by imageio."""
    plugin = mp4_encoder()
    with tempfile.TemporaryDirectory(prefix="mp4-") as tmp:
        path = Path(tmp) / "out.mp4"
        if plugin == "ffmpeg":
            import imageio.v2 as iio2

            writer = iio2.get_writer(str(path), format="FFMPEG", mode="I", fps=fps, codec="libx264",
                                     pixelformat="yuv420p", macro_block_size=16, quality=8,
                                     ffmpeg_log_level="error",
                                     output_params=["-threads", "1", "-fflags", "+bitexact",
                                                    "-flags:v", "+bitexact", "-map_metadata", "-1"])
            try:
                for f in frames:
                    writer.append_data(f)
            finally:
                writer.close()
        else:
            import imageio.v3 as iio

            iio.imwrite(path, np.stack(frames), plugin="pyav", codec="libx264", fps=fps)
        return path.read_bytes()


def run_shard(options: Mapping[str, Any], shard: Shard, out: Path) -> ShardResult:
    ext = options["format"]
    files, frames_total = [], 0
    if "episode_file" in shard.params:
        from core.sim.episode import load_episode
        from core.sim.replay import config_from_episode

        path = Path(shard.params["episode_file"])
        ep = load_episode(path)
        cfg = config_from_episode(ep.meta, path)
        ep.check_map(cfg.city.height, cfg.city.width)
        jobs = [(0, ep, cfg.city)]
    else:
        cfg = load_config(options)
        jobs = [(e, simulate(cfg, seed, int(options["steps"]), options.get("engine")).buffer, cfg.city)
                for e, seed in zip(shard.params["episodes"], shard.params["seeds"])]
    for e, ep, city in jobs:
        frames = render_frames(ep, city, int(options["first"]), int(options["last"]), int(options["ppc"]))
        rel = f"videos/episode_{e:05d}.{ext}"
        atomic_write_bytes(out / rel, encode(frames, ext, int(options["fps"])))
        files.append(rel)
        frames_total += len(frames)
    return ShardResult(shard.name, files, {"videos": len(files), "frames": frames_total})


SPEC = register(ExporterSpec(
    name="video", title="Rendered videos (GIF / MP4)",
    description="Animations of an episode range drawn with the icon renderer: GIF (Pillow) or MP4 (needs "
                "imageio-ffmpeg or PyAV).",
    options=sim_options(episodes=1, steps=40) + (
        Option("episode", "path", "", "render this episode file instead of simulating (optional)"),
        Option("first", "int", 0, "first state to render", minimum=0),
        Option("last", "int", -1, "last state to render (-1: the final state)", minimum=-1),
        Option("ppc", "int", 2, "pixels per map cell", minimum=1, maximum=32),
        Option("fps", "int", 8, "frames per second", minimum=1, maximum=60),
        Option("format", "choice", "gif", "gif (Pillow) or mp4 (needs imageio-ffmpeg or PyAV)",
               choices=("gif", "mp4")),
    ),
    plan=plan, run_shard=run_shard, config_files=config_files, check=_check, packages=("Pillow",)))
