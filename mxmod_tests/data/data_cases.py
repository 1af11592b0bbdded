"""Inputs shared by the data tests and make_fixtures.py (which runs them through MXNet)."""
import struct

import numpy as np

MAGIC = struct.pack('<I', 0xced7230a)

# deterministic ImageRecordIter settings compared with MXNet (uint8 ones exactly)
ITER_CASES = {
    'plain': dict(data_shape=(3, 16, 16), batch_size=4),
    'resize': dict(data_shape=(3, 16, 16), batch_size=4, resize=20),
    'norm': dict(data_shape=(3, 16, 16), batch_size=4, resize=24, mean_r=123, mean_g=117,
                 mean_b=104, std_r=58, std_g=57, std_b=57, scale=1 / 255.),
    'pad': dict(data_shape=(3, 16, 16), batch_size=3, pad=4, fill_value=0, dtype='uint8'),
    'gray': dict(data_shape=(1, 16, 16), batch_size=5, mirror=True, resize=30),
}


def payloads():
    """Record payloads: empty, odd lengths, and ones holding the magic word (aligned or not)."""
    rng = np.random.RandomState(3)
    out = [b'', b'a', b'abcd', b'abcde', MAGIC, b'xx' + MAGIC + b'yy', b'abcd' + MAGIC,
           MAGIC + MAGIC + b'z', b'1234' + MAGIC + b'5678' + MAGIC + b'9']
    out += [rng.bytes(int(n)) for n in rng.randint(0, 300, 6)]
    return out


def write_images(path, count=10):
    """Pack ``count`` small blurred-noise JPEGs (labels i % 3) with mxmod.recordio."""
    from mxmod import recordio
    from mxmod.image.codec import require_cv2
    cv2 = require_cv2()
    rng = np.random.RandomState(0)
    writer = recordio.MXIndexedRecordIO(path[:-4] + '.idx', path, 'w')
    for i in range(count):
        h, w = rng.randint(20, 60), rng.randint(20, 60)
        img = cv2.GaussianBlur(rng.randint(0, 255, (h, w, 3)).astype(np.uint8), (5, 5), 2)
        writer.write_idx(i, recordio.pack_img((0, float(i % 3), i, 0), img, quality=90))
    writer.close()
