import io

import numpy as np
from PIL import Image

from core.tasks.vap import png
from core.tasks.vap.png import BAND_ROWS, BandCache, encode_png, encoder_name


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
        data = encode_png(img, 1, cache, use_isal=False)
        back = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
        assert (back == img).all()
    # the unchanged bands are the cached bytes themselves
    assert cache.segments[3] in encode_png(frame, 1, cache, use_isal=False)
    assert cache.segments[1] not in encode_png(frame, 1, cache, use_isal=False)
    other = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)  # another shape: plain encoding
    assert (np.asarray(Image.open(io.BytesIO(encode_png(other, 1, cache, use_isal=False)))) == other).all()


def test_isal_frames_decode_exactly_and_name_their_encoder():
    """Level 1 goes through ISA-L (pinned): same pixels as the zlib path, the same bytes on every call, and the
    manifest's encoder name says which one wrote them."""
    assert png._isal is not None, "isal is pinned in requirements.txt"
    rng = np.random.default_rng(2)
    img = np.repeat(rng.integers(0, 256, (1, 300, 3), dtype=np.uint8), 200, axis=0)   # map-like: repeated rows
    img[50:90, 100:160] = rng.integers(0, 256, (40, 60, 3), dtype=np.uint8)
    fast = encode_png(img, 1)
    slow = encode_png(img, 1, use_isal=False)
    assert fast != slow and fast == encode_png(img.copy(), 1)
    for data in (fast, slow):
        assert (np.asarray(Image.open(io.BytesIO(data)).convert("RGB")) == img).all()
    assert encoder_name(1).startswith("isal ") and encoder_name(6).startswith("zlib ")
