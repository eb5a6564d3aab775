"""Video export: GIF frames of an episode range read back with Pillow; MP4 refused clearly without an encoder."""
from __future__ import annotations

import pytest

from core.export.registry import ExportError
from core.export.runner import run_export
from core.export.video import mp4_encoder


def test_gif_of_an_episode_file_range(tmp_path):
    from PIL import Image

    run_export("episodes", {"episodes": 1, "steps": 6}, tmp_path / "ep", backend="inline")
    src = tmp_path / "ep" / "episodes" / "episode_00000.npz"
    report = run_export("video", {"episode": str(src), "first": 2, "last": 5, "ppc": 1, "fps": 4}, tmp_path / "v",
                        backend="inline")
    assert report.manifest["counts"]["frames"] == 4
    with Image.open(tmp_path / "v" / "videos" / "episode_00000.gif") as im:
        assert im.n_frames == 4 and im.size == (241, 241) and im.info["duration"] == 250
        im.seek(3)
        assert len(im.convert("RGB").getcolors(1 << 20)) > 5     # a drawn city, not a blank frame
    with pytest.raises(ExportError, match="--last .* must be >= --first"):
        run_export("video", {"episode": str(src), "first": 4, "last": 2}, tmp_path / "bad", backend="inline")


@pytest.mark.skipif(mp4_encoder() is not None, reason="an MP4 encoder is installed")
def test_mp4_without_an_encoder_is_refused_before_any_work(tmp_path):
    with pytest.raises(ExportError, match="needs an MP4 encoder"):
        run_export("video", {"format": "mp4"}, tmp_path / "v", backend="inline")
    assert not (tmp_path / "v").exists()


@pytest.mark.skipif(mp4_encoder() is None, reason="no MP4 encoder installed")
def test_mp4_of_an_episode_range_decodes_and_is_byte_identical_when_redone(tmp_path):
    import imageio.v2 as iio2

    run_export("episodes", {"episodes": 1, "steps": 6}, tmp_path / "ep", backend="inline")
    src = tmp_path / "ep" / "episodes" / "episode_00000.npz"
    opts = {"episode": str(src), "first": 1, "last": 5, "ppc": 1, "fps": 5, "format": "mp4"}
    report = run_export("video", opts, tmp_path / "a", backend="inline")
    assert report.manifest["counts"]["frames"] == 5
    video = tmp_path / "a" / "videos" / "episode_00000.mp4"
    reader = iio2.get_reader(str(video), format="FFMPEG")
    try:
        frames = [f for f in reader]
        assert reader.get_meta_data()["fps"] == 5
    finally:
        reader.close()
    assert len(frames) == 5
    assert frames[0].shape[:2] == (256, 256)   # 241 padded to H.264's 16-pixel macroblocks
    assert frames[0].std() > 10                # a drawn city, not a blank frame
    run_export("video", opts, tmp_path / "b", backend="inline")
    assert (tmp_path / "b" / "videos" / "episode_00000.mp4").read_bytes() == video.read_bytes()
