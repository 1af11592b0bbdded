"""Write synthetic stand-ins for the files MXNet's helpers download, into MXNet's cache directory
($MXNET_HOME, default ~/.mxnet), so that get_mnist_ubyte / get_mnist / get_cifar10 (mxmod's,
through that cache) and the programs and tests that use them run without network.

    python bench/make_local_datasets.py [--dir DIR] [--small]
    python bench/make_local_datasets.py --text8 PATH

- mnist.zip and the four MNIST .gz files: 60,000 + 10,000 28x28 digits drawn with OpenCV's
  Hershey fonts at random scale, rotation, shift and stroke width, plus noise (learnable: an MLP
  reaches ~97%).
- cifar10.zip: cifar/train.rec (50,000 = 5,000 per class), cifar/test.rec (10,000), their .lst
  files; 32x32 colour JPEGs (quality 95), each class a shape (circle, square, triangle, ...) of a
  class-typical colour on a textured background.

- text8 (``--text8``): a stand-in for the text8 corpus of example/nce-loss, one line of
  space-separated words: sentences of 30 words, each drawn Zipf-like from one of 40 topics' 60
  words (topics overlap), 20 % of the words drawn from the whole vocabulary instead (context
  predicts the centre word, not perfectly). 200,000 words by default.

``--small`` writes 6,000/1,000 MNIST and 5,000/1,000 CIFAR images (for quick runs; MXNet's
test_io counts need the full sizes)."""
import argparse
import gzip
import io
import os
import struct
import sys
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _idx(array):
    head = struct.pack('>BBBB', 0, 0, 8, array.ndim) + struct.pack('>%dI' % array.ndim,
                                                                    *array.shape)
    return head + array.astype(np.uint8).tobytes()


def _digit(cv2, rng, digit):
    canvas = np.zeros((56, 56), np.uint8)
    font = [cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX,
            cv2.FONT_HERSHEY_TRIPLEX][rng.randint(4)]
    cv2.putText(canvas, str(digit), (14, 44), font, rng.uniform(1.2, 1.6), 255,
                int(rng.randint(3, 6)), cv2.LINE_AA)
    mat = cv2.getRotationMatrix2D((28, 28), rng.uniform(-15, 15), rng.uniform(0.85, 1.1))
    mat[:, 2] += rng.uniform(-3, 3, 2)
    canvas = cv2.warpAffine(canvas, mat, (56, 56))
    small = cv2.resize(canvas, (28, 28), interpolation=cv2.INTER_AREA).astype(np.float32)
    return np.clip(small + rng.normal(0, 12, small.shape), 0, 255).astype(np.uint8)


def make_mnist(cv2, folder, n_train, n_test):
    rng = np.random.RandomState(42)
    files = {}
    for split, count in (('train', n_train), ('t10k', n_test)):
        labels = rng.randint(0, 10, count).astype(np.uint8)
        images = np.stack([_digit(cv2, rng, d) for d in labels])
        files['%s-images-idx3-ubyte' % split] = _idx(images)
        files['%s-labels-idx1-ubyte' % split] = _idx(labels)
    with zipfile.ZipFile(os.path.join(folder, 'mnist.zip'), 'w', zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    for name, data in files.items():
        with gzip.open(os.path.join(folder, name + '.gz'), 'wb') as out:
            out.write(data)


_COLOURS = [(220, 40, 40), (40, 200, 40), (40, 40, 220), (220, 220, 40), (220, 40, 220),
            (40, 220, 220), (240, 140, 30), (130, 60, 200), (120, 120, 120), (250, 250, 250)]


def _cifar_image(cv2, rng, cls):
    bg = rng.uniform(0, 255, 3)
    img = np.clip(bg + rng.normal(0, 25, (32, 32, 3)), 0, 255).astype(np.uint8)
    colour = tuple(int(c) for c in np.clip(np.array(_COLOURS[cls]) + rng.normal(0, 25, 3),
                                           0, 255))
    cx, cy, r = rng.randint(10, 22), rng.randint(10, 22), rng.randint(6, 10)
    shape = cls % 5
    if shape == 0:
        cv2.circle(img, (cx, cy), r, colour, -1)
    elif shape == 1:
        cv2.rectangle(img, (cx - r, cy - r), (cx + r, cy + r), colour, -1)
    elif shape == 2:
        pts = np.array([[cx, cy - r], [cx - r, cy + r], [cx + r, cy + r]], np.int32)
        cv2.fillPoly(img, [pts], colour)
    elif shape == 3:
        cv2.line(img, (cx - r, cy - r), (cx + r, cy + r), colour, 3)
        cv2.line(img, (cx - r, cy + r), (cx + r, cy - r), colour, 3)
    else:
        cv2.ellipse(img, (cx, cy), (r, r // 2), rng.uniform(0, 180), 0, 360, colour, -1)
    return img


def _write_rec(cv2, recordio, path, count, rng):
    labels = np.arange(count) % 10
    rng.shuffle(labels)
    writer = recordio.MXRecordIO(path, 'w')
    with open(path[:-4] + '.lst', 'w') as lst:
        for i, cls in enumerate(labels):
            img = _cifar_image(cv2, rng, int(cls))
            writer.write(recordio.pack_img((0, float(cls), i, 0), img, quality=95))
            lst.write('%d\t%d\t%d_%d.png\n' % (i, cls, i, cls))
    writer.close()


def make_cifar(cv2, recordio, folder, n_train, n_test, work):
    rng = np.random.RandomState(7)
    os.makedirs(os.path.join(work, 'cifar'), exist_ok=True)
    for split, count in (('train', n_train), ('test', n_test)):
        _write_rec(cv2, recordio, os.path.join(work, 'cifar', split + '.rec'), count, rng)
    with zipfile.ZipFile(os.path.join(folder, 'cifar10.zip'), 'w', zipfile.ZIP_STORED) as zf:
        for name in ('train.rec', 'test.rec', 'train.lst', 'test.lst'):
            zf.write(os.path.join(work, 'cifar', name), 'cifar/' + name)


def make_text8(path, words=200000, vocab=2000, topics=40, seed=0):
    """Write the text8 stand-in (see the module docstring) to ``path``."""
    rng = np.random.RandomState(seed)
    members = [rng.choice(vocab, 60, replace=False) for _ in range(topics)]
    within = 1.0 / np.arange(1, 61)
    within /= within.sum()
    overall = 1.0 / np.arange(1, vocab + 1)
    overall /= overall.sum()
    out = []
    while len(out) < words:
        ids = members[rng.randint(topics)][rng.choice(60, 30, p=within)]
        noise = rng.rand(30) < 0.2
        ids[noise] = rng.choice(vocab, int(noise.sum()), p=overall)
        out.extend(ids.tolist())
    with open(path, 'w') as handle:
        handle.write(' ' + ' '.join('w%d' % i for i in out[:words]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dir', default=None, help='target (default $MXNET_HOME or ~/.mxnet)')
    ap.add_argument('--small', action='store_true')
    ap.add_argument('--text8', metavar='PATH', help='write only the text8 stand-in, to PATH')
    args = ap.parse_args()
    if args.text8:
        make_text8(args.text8)
        print('wrote %s' % args.text8)
        return
    sys.path.insert(0, ROOT)
    from mxmod import recordio
    from mxmod.dataset_utils import data_home
    from mxmod.image.codec import require_cv2
    import tempfile
    cv2 = require_cv2()
    folder = args.dir or data_home()
    os.makedirs(folder, exist_ok=True)
    sizes = (6000, 1000, 5000, 1000) if args.small else (60000, 10000, 50000, 10000)
    make_mnist(cv2, folder, sizes[0], sizes[1])
    with tempfile.TemporaryDirectory() as work:
        make_cifar(cv2, recordio, folder, sizes[2], sizes[3], work)
    print('wrote mnist.zip, the MNIST .gz files and cifar10.zip to %s' % folder)


if __name__ == '__main__':
    main()
