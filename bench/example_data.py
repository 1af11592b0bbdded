"""Synthetic stand-ins for the files MXNet 1.9.1's example programs download, in the formats the
programs read (used by run_more_examples.py; no network). Each writer takes the folder the
program reads from and a seeded ``numpy.random.RandomState``; sizes are small and the data are
learnable (the label is a function of the input plus noise), so a few epochs move the metric."""
import bz2
import gzip
import os
import shutil
import struct
import zipfile

import numpy as np


def mnist_gz(folder, cache, names=None):
    """Copy the four MNIST .gz files of ``cache`` (bench/make_local_datasets.py) to ``folder``."""
    os.makedirs(folder, exist_ok=True)
    for name in names or ('train-labels-idx1-ubyte.gz', 'train-images-idx3-ubyte.gz',
                          't10k-labels-idx1-ubyte.gz', 't10k-images-idx3-ubyte.gz'):
        shutil.copy(os.path.join(cache, name), folder)


def mnist_ubyte(folder, cache):
    """Extract mnist.zip of ``cache`` (the four idx files) into ``folder``."""
    os.makedirs(folder, exist_ok=True)
    with zipfile.ZipFile(os.path.join(cache, 'mnist.zip')) as archive:
        archive.extractall(folder)


_POS = ['good', 'great', 'fine', 'superb', 'lovely', 'moving', 'witty', 'fresh', 'clever', 'warm']
_NEG = ['bad', 'dull', 'poor', 'boring', 'flat', 'weak', 'tired', 'stale', 'clumsy', 'cold']
_NEUTRAL = ['the', 'a', 'film', 'movie', 'story', 'plot', 'actors', 'is', 'was', 'and', 'of',
            'with', 'this', 'it', 'director', 'script', 'scenes', 'very', 'quite', 'rather']


def _sentence(rng, cues, low=5, high=18):
    words = list(rng.choice(_NEUTRAL, rng.randint(low, high)))
    for _ in range(rng.randint(1, 3)):
        words.insert(rng.randint(len(words) + 1), str(rng.choice(cues)))
    return ' '.join(words)


def rt_polarity(folder, rng, per_class=1300):
    """data/rt-polaritydata/rt-polarity.pos and .neg: one English sentence a line, the class
    given by a few cue words among neutral ones (example/cnn_text_classification)."""
    path = os.path.join(folder, 'data', 'rt-polaritydata')
    os.makedirs(path, exist_ok=True)
    for suffix, cues in (('pos', _POS), ('neg', _NEG)):
        with open(os.path.join(path, 'rt-polarity.' + suffix), 'w') as out:
            out.writelines(_sentence(rng, cues) + '\n' for _ in range(per_class))


def chinese_text(folder, rng, per_class=1300):
    """data/pos.txt and data/neg.txt: one sentence of Chinese characters a line (each character
    a token), the class given by cue characters (example/cnn_chinese_text_classification); an
    empty data/neg file as well, which the example checks for before it tries to download."""
    path = os.path.join(folder, 'data')
    os.makedirs(path, exist_ok=True)
    common = [chr(0x4e00 + i) for i in range(60)]
    cues = {'pos': [chr(0x5000 + i) for i in range(8)], 'neg': [chr(0x6000 + i) for i in range(8)]}
    for name, cue in cues.items():
        with open(os.path.join(path, name + '.txt'), 'w', encoding='utf-8') as out:
            for _ in range(per_class):
                chars = list(rng.choice(common, rng.randint(6, 24)))
                for _ in range(rng.randint(1, 3)):
                    chars.insert(rng.randint(len(chars) + 1), str(rng.choice(cue)))
                out.write(''.join(chars) + '\n')
    open(os.path.join(path, 'neg'), 'w').close()


def electricity(folder, rng, rows=600, columns=8):
    """data/electricity.txt: comma-separated rows of ``columns`` series with a daily (24-step)
    season, a trend and noise (example/multivariate_time_series)."""
    path = os.path.join(folder, 'data')
    os.makedirs(path, exist_ok=True)
    t = np.arange(rows)[:, None]
    phase = rng.uniform(0, 2 * np.pi, columns)
    level = rng.uniform(50, 200, columns)
    series = level * (1 + 0.3 * np.sin(2 * np.pi * t / 24 + phase) + 0.0005 * t)
    series += rng.normal(0, 3, series.shape)
    np.savetxt(os.path.join(path, 'electricity.txt'), series, fmt='%.3f', delimiter=',')


def ner_csv(folder, rng, sentences=600):
    """data/ner_dataset.csv as the Kaggle entity-annotated corpus lays it out ('Sentence #',
    Word, POS, Tag; the sentence number only on a sentence's first word; ISO-8859-1), tags
    following from the words (example/named_entity_recognition; preprocess.py reads it)."""
    path = os.path.join(folder, 'data')
    os.makedirs(path, exist_ok=True)
    names = ['John', 'Mary', 'Paris', 'London', 'Obama', 'Berlin', 'Google', 'Iran']
    tags = {'John': 'B-per', 'Mary': 'B-per', 'Obama': 'B-per', 'Paris': 'B-geo',
            'London': 'B-geo', 'Berlin': 'B-geo', 'Google': 'B-org', 'Iran': 'B-gpe'}
    rows = ['Sentence #,Word,POS,Tag']
    for number in range(1, sentences + 1):
        words = list(rng.choice(_NEUTRAL, rng.randint(4, 12)))
        for _ in range(rng.randint(1, 3)):
            words.insert(rng.randint(len(words) + 1), str(rng.choice(names)))
        for index, word in enumerate(words):
            first = 'Sentence: %d' % number if index == 0 else ''
            pos = 'NNP' if word in tags else 'NN'
            rows.append('%s,%s,%s,%s' % (first, word, pos, tags.get(word, 'O')))
    with open(os.path.join(path, 'ner_dataset.csv'), 'w', encoding='ISO-8859-1') as out:
        out.write('\n'.join(rows) + '\n')


def year_prediction(folder, rng, rows=2000, features=90):
    """data/YearPredictionMSD.bz2: libsvm lines 'label index:value ...' of a linear target
    (example/svrg_module/linear_regression)."""
    path = os.path.join(folder, 'data')
    os.makedirs(path, exist_ok=True)
    x = rng.normal(0, 1, (rows, features))
    y = 1998 + x @ rng.normal(0, 2, features) + rng.normal(0, 1, rows)
    lines = ['%.0f %s' % (label, ' '.join('%d:%.5f' % (j + 1, v) for j, v in enumerate(row)))
             for label, row in zip(y, x)]
    with bz2.open(os.path.join(path, 'YearPredictionMSD.bz2'), 'wt') as out:
        out.write('\n'.join(lines) + '\n')


def idx_file(path, array):
    """Write ``array`` (uint8) in the idx format MNIST uses, gzipped when ``path`` ends .gz."""
    head = struct.pack('>BBBB', 0, 0, 8, array.ndim) + struct.pack('>%dI' % array.ndim,
                                                                    *array.shape)
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'wb') as out:
        out.write(head + array.astype(np.uint8).tobytes())


def movielens_10m(folder, rng, users=300, movies=200, ratings=12000):
    """ml-10M100K/r1.train and r1.test ('user::movie::rating::time' lines of a low-rank
    rating model) and an empty ml-10m.zip, which the script checks before it downloads
    (example/model-parallel/matrix_factorization)."""
    path = os.path.join(folder, 'ml-10M100K')
    os.makedirs(path, exist_ok=True)
    open(os.path.join(folder, 'ml-10m.zip'), 'w').close()
    u, m = rng.normal(0, 1, (users + 1, 4)), rng.normal(0, 1, (movies + 1, 4))
    for name, count in (('r1.train', ratings), ('r1.test', ratings // 5)):
        who, what = rng.randint(1, users + 1, count), rng.randint(1, movies + 1, count)
        score = np.clip(np.round(3 + (u[who] * m[what]).sum(1) * 0.6 + rng.normal(0, 0.3, count)),
                        1, 5)
        with open(os.path.join(path, name), 'w') as out:
            out.writelines('%d::%d::%d::%d\n' % (a, b, s, 978300760 + i)
                           for i, (a, b, s) in enumerate(zip(who, what, score)))


_WORDS = ('the a holmes watson said and of to in was it that his he i you at my with which '
          'had as for is but door street night there me not this upon be from man have case '
          'one all been so no by what lestrade letter very house room little time out baker')


def sherlock(folder, rng, lines=(700, 150, 150)):
    """data/sherlockholmes.{train,valid,test}.txt: lines of words drawn from a first-order
    Markov chain over a small vocabulary (example/rnn/old)."""
    path = os.path.join(folder, 'data')
    os.makedirs(path, exist_ok=True)
    words = _WORDS.split()
    chain = rng.dirichlet(np.full(len(words), 0.1), len(words))
    for name, count in zip(('train', 'valid', 'test'), lines):
        text = []
        for _ in range(count):
            state, line = rng.randint(len(words)), []
            for _ in range(rng.randint(4, 30)):
                line.append(words[state])
                state = rng.choice(len(words), p=chain[state])
            text.append(' ' + ' '.join(line) + ' ')
        with open(os.path.join(path, 'sherlockholmes.%s.txt' % name), 'w') as out:
            out.write('\n'.join(text) + '\n')


def toy_regression(folder, rng, train=20, test=100):
    """toy_data_train.txt and toy_data_test_whole.txt: 'x y' lines of y = x^3 + noise
    (example/bayesian-methods, the toy data set of the SGLD paper)."""
    for name, count, noise in (('toy_data_train.txt', train, 3.0),
                               ('toy_data_test_whole.txt', test, 0.0)):
        x = rng.uniform(-4, 4, count) if noise else np.linspace(-6, 6, count)
        y = x ** 3 + rng.normal(0, noise, count) if noise else x ** 3
        np.savetxt(os.path.join(folder, name), np.stack([x, y], 1), fmt='%.6f')


def mnist_npz(folder, cache, path='mnist.npz'):
    """mnist.npz with X (N, 784) and X_test as 0-255 floats and Y, Y_test labels, from the
    MNIST .gz files of ``cache`` (example/bayesian-methods)."""
    arrays = {}
    for key, split in (('', 'train'), ('_test', 't10k')):
        with gzip.open(os.path.join(cache, '%s-images-idx3-ubyte.gz' % split)) as source:
            images = np.frombuffer(source.read()[16:], np.uint8).reshape(-1, 784)
        with gzip.open(os.path.join(cache, '%s-labels-idx1-ubyte.gz' % split)) as source:
            labels = np.frombuffer(source.read()[8:], np.uint8)
        arrays['X' + key], arrays['Y' + key] = images.astype(np.float32), labels.astype(np.int64)
    np.savez(os.path.join(folder, path), **arrays)


def image_rec(path, rng, count=64, size=256):
    """A .rec (no index) of ``count`` JPEG images (``size`` x ``size``, 3 channels, label =
    the image's index modulo 10), written with PIL in MXNet's RecordIO framing (magic, length,
    IRHeader 'IfQQ', payload padded to 4 bytes) (example/profiler/profiler_imageiter.py)."""
    import io  # pylint: disable=import-outside-toplevel
    from PIL import Image  # pylint: disable=import-outside-toplevel
    with open(path, 'wb') as out:
        for index in range(count):
            pixels = rng.randint(0, 255, (size // 8, size // 8, 3)).astype(np.uint8)
            image = Image.fromarray(pixels).resize((size, size))
            buffer = io.BytesIO()
            image.save(buffer, format='JPEG', quality=90)
            payload = struct.pack('<IfQQ', 0, float(index % 10), index, 0) + buffer.getvalue()
            out.write(struct.pack('<II', 0xced7230a, len(payload)))
            out.write(payload + b'\0' * (-len(payload) % 4))


def silhouettes(folder, rng, count=96, size=32):
    """``count`` grayscale PNGs of white shapes (ellipses, boxes, triangles) on black, ``size``
    pixels square (example/vae-gan reads a folder of 32x32 caltech101 silhouettes)."""
    from PIL import Image, ImageDraw  # pylint: disable=import-outside-toplevel
    os.makedirs(folder, exist_ok=True)
    for index in range(count):
        image = Image.new('L', (size, size), 0)
        draw = ImageDraw.Draw(image)
        x0, y0 = rng.randint(2, size // 3, 2)
        x1, y1 = rng.randint(2 * size // 3, size - 2, 2)
        kind = index % 3
        if kind == 0:
            draw.ellipse([x0, y0, x1, y1], fill=255)
        elif kind == 1:
            draw.rectangle([x0, y0, x1, y1], fill=255)
        else:
            draw.polygon([(x0, y1), ((x0 + x1) // 2, y0), (x1, y1)], fill=255)
        image.save(os.path.join(folder, 'image_%04d.png' % index))


def photo(path, rng, size=(96, 72)):
    """A smooth colour JPEG (gradients and blobs), for example/neural-style's content and
    style images."""
    from PIL import Image, ImageFilter  # pylint: disable=import-outside-toplevel
    width, height = size
    yy, xx = np.mgrid[0:height, 0:width] / max(size)
    channels = [np.sin(6 * xx * rng.uniform(0.5, 2) + rng.uniform(0, 6)) *
                np.cos(5 * yy * rng.uniform(0.5, 2)) for _ in range(3)]
    pixels = ((np.stack(channels, -1) + 1) * 127.5).astype(np.uint8)
    Image.fromarray(pixels).filter(ImageFilter.GaussianBlur(1)).save(path, quality=92)


def vgg19_params(path, rng):
    """model/vgg19.params: He-scaled random weights (arg:conv*_weight/bias) of the VGG-19 layers
    example/neural-style's model_vgg19.py loads, written by mxmod's nd.save (MXNet's format;
    the MXNet run reads the same file)."""
    import mxmod  # pylint: disable=import-outside-toplevel
    os.makedirs(os.path.dirname(path), exist_ok=True)
    channels = [(3, 64), (64, 64), (64, 128), (128, 128)] + [(128, 256)] + [(256, 256)] * 3 + \
        [(256, 512)] + [(512, 512)] * 4
    names = ['1_1', '1_2', '2_1', '2_2', '3_1', '3_2', '3_3', '3_4', '4_1', '4_2', '4_3', '4_4',
             '5_1']
    arrays = {}
    for name, (cin, cout) in zip(names, channels):
        weight = rng.normal(0, np.sqrt(2.0 / (9 * cin)), (cout, cin, 3, 3)).astype(np.float32)
        arrays['arg:conv%s_weight' % name] = mxmod.nd.array(weight)
        arrays['arg:conv%s_bias' % name] = mxmod.nd.array(rng.normal(0, 0.01, cout))
    mxmod.nd.save(path, arrays)


def mnist_gz_subset(folder, cache, train=1000, test=200):
    """The four MNIST .gz files of ``cache``, cut to their first ``train`` and ``test`` images
    (example/capsnet: a capsule network epoch on CPU takes minutes at 6,000 images)."""
    os.makedirs(folder, exist_ok=True)
    for prefix, count in (('train', train), ('t10k', test)):
        for kind, head in (('labels-idx1', 8), ('images-idx3', 16)):
            name = '%s-%s-ubyte.gz' % (prefix, kind)
            with gzip.open(os.path.join(cache, name)) as src:
                raw = src.read()
            item = 1 if kind.startswith('labels') else 28 * 28
            header = raw[:4] + struct.pack('>I', count) + raw[8:head]
            with gzip.open(os.path.join(folder, name), 'wb') as out:
                out.write(header + raw[head:head + count * item])


def ncf_ratings(folder, rng, users=200, items=300, per_user=15, negatives=49):
    """data/ml-20m/{train-ratings,test-ratings,test-negative}.csv as the NCF example's convert.py
    writes them (tab-separated user, item, rating; one held-out rating per user; that user's
    ``negatives`` unrated items): each user rates the items nearest to it in a 4-d taste space
    (example/neural_collaborative_filtering)."""
    path = os.path.join(folder, 'data', 'ml-20m')
    os.makedirs(path, exist_ok=True)
    taste_u, taste_i = rng.normal(size=(users, 4)), rng.normal(size=(items, 4))
    with open(os.path.join(path, 'train-ratings.csv'), 'w') as train, \
            open(os.path.join(path, 'test-ratings.csv'), 'w') as test, \
            open(os.path.join(path, 'test-negative.csv'), 'w') as negs:
        for user in range(users):
            score = taste_i @ taste_u[user] + rng.normal(0, 0.5, items)
            rated = np.argsort(-score)[:per_user + 1]
            for item in rated[1:]:
                train.write('%d\t%d\t1\n' % (user, item))
            test.write('%d\t%d\t1\n' % (user, rated[0]))
            unrated = np.setdiff1d(np.arange(items), rated)
            negs.write('\t'.join(str(i) for i in rng.choice(unrated, negatives, False)) + '\n')
