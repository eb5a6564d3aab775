"""Export ranges and the GIF builder (cancel before anything is committed keeps the old file)."""
from __future__ import annotations

import numpy as np
import pytest


def test_export_ranges_and_gif(tmp_path):
    from PIL import Image

    from core.view.export import frame_name, parse_range, sequence_paths, write_gif

    assert parse_range("10-50", 100).steps()[:2] == [10, 11] and len(parse_range("10-50", 100)) == 41
    assert parse_range("", 5).steps() == [0, 1, 2, 3, 4, 5]
    assert parse_range("3-", 5, stride=2).steps() == [3, 5]
    assert parse_range("-2", 5).steps() == [0, 1, 2]
    assert parse_range("4", 5).steps() == [4]
    for bad in ("9-2", "1-99", "x", "-"):
        with pytest.raises(ValueError):
            parse_range(bad, 50)
    assert frame_name("f_{step:04d}.png", 0, 7) == "f_0007.png"
    with pytest.raises(ValueError):
        sequence_paths(tmp_path, "same.png", [1, 2])
    frames = [np.full((40, 60, 3), v, np.uint8) for v in (0, 120, 250)]
    out = tmp_path / "a.gif"
    assert write_gif(frames, out, fps=5)
    with Image.open(out) as im:
        assert im.n_frames == 3 and im.size == (60, 40)
    assert not write_gif(frames, tmp_path / "b.gif", cancelled=lambda: True)
    assert not (tmp_path / "b.gif").exists()


def test_gif_builder_save_honours_cancel_before_committing(tmp_path):
    import numpy as np

    from core.view.export import GifBuilder

    gb = GifBuilder(5)
    gb.add(np.zeros((8, 8, 3), np.uint8))
    out = tmp_path / "a.gif"
    out.write_bytes(b"old")
    assert gb.save(out, cancelled=lambda: True) is None
    assert out.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["a.gif"]
    assert gb.save(out, cancelled=lambda: False) == out and out.read_bytes()[:3] == b"GIF"
