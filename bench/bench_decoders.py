"""JPEG decoders compared for mx.image / ImageRecordIter: OpenCV (cv2.imdecode), Pillow and
simplejpeg (libjpeg-turbo), single-threaded process CPU time per image, median of 7 rounds, at
three image sizes; also checks that they decode to the same pixels.

    python bench/bench_decoders.py     (needs opencv-python-headless, pillow, simplejpeg)
"""
import io
import time

import numpy as np


def _image(rng, h, w):
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([(x * 255 // w), (y * 255 // h), ((x + y) * 127 // (h + w))], -1)
    img = img.astype(np.float32) + rng.normal(0, 20, (h, w, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


def main():
    import cv2
    import simplejpeg
    from PIL import Image
    cv2.setNumThreads(1)
    rng = np.random.RandomState(0)
    decoders = {
        'opencv': lambda b: cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR),
        'pillow': lambda b: np.asarray(Image.open(io.BytesIO(b)).convert('RGB')),
        'simplejpeg': lambda b: simplejpeg.decode_jpeg(b, 'RGB'),
    }
    for h, w in [(32, 32), (256, 341), (375, 500)]:
        bufs = [cv2.imencode('.jpg', _image(rng, h, w), [cv2.IMWRITE_JPEG_QUALITY, 95])[1]
                .tobytes() for _ in range(20)]
        reps = 50 if h < 100 else 5
        times = {name: [] for name in decoders}
        for _ in range(7):
            for name, decode in decoders.items():
                start = time.process_time()
                for _ in range(reps):
                    for buf in bufs:
                        decode(buf)
                times[name].append((time.process_time() - start) / (reps * len(bufs)))
        print('%dx%d: ' % (w, h) + ', '.join('%s %.0f us' % (n, np.median(t) * 1e6)
                                              for n, t in times.items()))
    ref = decoders['opencv'](bufs[0])[:, :, ::-1].astype(int)
    print('max |difference| to OpenCV: pillow %d, simplejpeg %d'
          % (np.abs(ref - decoders['pillow'](bufs[0])).max(),
             np.abs(ref - decoders['simplejpeg'](bufs[0])).max()))


if __name__ == '__main__':
    main()
