import io

import numpy as np
from PIL import Image

from core.tasks.vap.png import encode_png


def test_encoded_png_decodes_to_the_same_pixels():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
    img[10:20] = img[9]          # repeated rows (the Up filter's zero rows)
    for level in (0, 1, 6):
        back = np.asarray(Image.open(io.BytesIO(encode_png(img, level))).convert("RGB"))
        assert back.shape == img.shape and (back == img).all()
