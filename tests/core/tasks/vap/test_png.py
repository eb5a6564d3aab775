import io

import numpy as np
from PIL import Image

from core.tasks.vap.png import BAND_ROWS, BandCache, encode_png


def test_encoded_png_decodes_to_the_same_pixels():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
    img[10:20] = img[9]          # repeated rows (the Up filter's zero rows)
    for level in (0, 1, 6):
        back = np.asarray(Image.open(io.BytesIO(encode_png(img, level))).convert("RGB"))
        assert back.shape == img.shape and (back == img).all()


def test_frames_that_reuse_background_bands_decode_exactly():
    rng = np.random.default_rng(1)
    bg = rng.integers(0, 256, (5 * BAND_ROWS + 3, 40, 3), dtype=np.uint8)   # a partial last band too
    cache = BandCache(bg, 1)
    frame = bg.copy()
    frame[BAND_ROWS + 2: BAND_ROWS + 9, 5:20] = 7            # an "agent" in band 1 (and the Up filter of band 2)
    frame[-2:, :4] = 250                                      # and in the last, partial band
    for img in (bg, frame):
        data = encode_png(img, 1, cache)
        back = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
        assert (back == img).all()
    assert len(encode_png(bg, 1, cache)) < len(encode_png(frame, 1, cache)) + 10_000
    other = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)  # another shape: plain encoding
    assert (np.asarray(Image.open(io.BytesIO(encode_png(other, 1, cache)))) == other).all()
