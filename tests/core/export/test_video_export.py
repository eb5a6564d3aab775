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
