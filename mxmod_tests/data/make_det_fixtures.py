"""Write fixtures/mxnet_det.npz: MXNet 1.9.1's detection augmenter outputs, ImageDetIter batches
and ImageDetRecordIter batches for det_cases.py (run with the oracle's Python, after
fixtures/det_images.rec exists):

    /tmp/mxnet-ref/bin/python mxmod_tests/data/make_det_fixtures.py

The rec file itself is made by mxmod (``det_cases.write_det_images``; OpenCV encodes the PNGs)."""
import os
import json
import random
import sys
import tempfile

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import det_cases  # noqa: E402

REC = os.path.join(HERE, 'fixtures', 'det_images.rec')


def _aug_cases(out):
    img, label = det_cases.aug_inputs()
    for name, (ctor, kwargs, seed) in det_cases.AUG_CASES.items():
        aug = getattr(mx.image, ctor)(**kwargs)
        random.seed(seed)
        np.random.seed(seed)
        outs = []
        for _ in range(3):                 # three draws in a row from the same seed
            res, lab = aug(mx.nd.array(img, dtype='uint8'), label.copy())
            outs.append((res.asnumpy(), np.asarray(lab)))
        for k, (res, lab) in enumerate(outs):
            out['aug_%s_%d_img' % (name, k)] = res
            out['aug_%s_%d_label' % (name, k)] = lab
        out['aug_%s_dumps' % name] = np.array(str(aug.dumps()))


def _create_cases(out):
    for name, kwargs in det_cases.CREATE_CASES.items():
        augs = mx.image.CreateDetAugmenter(**kwargs)
        out['create_%s_dumps' % name] = np.array(json.dumps([a.dumps() for a in augs]))


def _epoch(it):
    batches = list(it)
    return (np.concatenate([b.data[0].asnumpy() for b in batches]),
            np.concatenate([b.label[0].asnumpy() for b in batches]),
            np.array([b.pad for b in batches]))


def _iter_cases(out, items, root):
    sources = {
        'rec': dict(path_imgrec=REC, path_imgidx=REC[:-4] + '.idx'),
        'list': dict(imglist=[lab.tolist() + [name] for lab, name in items], path_root=root),
    }
    for src_name, src in sources.items():
        for name, cfg in det_cases.ITER_CASES.items():
            random.seed(1)
            np.random.seed(1)
            it = mx.image.ImageDetIter(**dict(cfg, **src))
            key = 'iter_%s_%s' % (src_name, name)
            out[key + '_label_shape'] = np.array(it.label_shape)
            out[key + '_provide_label'] = np.array(it.provide_label[0][1])
            epochs = [_epoch(it)]
            it.reset()
            epochs.append(_epoch(it))
            for k, (data, label, pad) in enumerate(epochs):
                out['%s_%d_label' % (key, k)] = label
                out['%s_%d_pad' % (key, k)] = pad
            if src_name == 'rec':
                out[key + '_0_data'] = epochs[0][0]
            else:       # the same pixels as from the .rec (kept once)
                assert np.array_equal(epochs[0][0], out['iter_rec_%s_0_data' % name])


def _rec_cases(out):
    for name, cfg in det_cases.REC_CASES.items():
        it = mx.io.ImageDetRecordIter(path_imgrec=REC, preprocess_threads=1, verbose=False,
                                      **cfg)
        data, label, pad = _epoch(it)
        out['rec_%s_data' % name] = data
        out['rec_%s_label' % name] = label
        out['rec_%s_pad' % name] = pad
        out['rec_%s_provide_label' % name] = np.array(it.provide_label[0][1])


def main():
    out = {}
    _aug_cases(out)
    _create_cases(out)
    with tempfile.TemporaryDirectory() as root:
        items = det_cases.extract_images(REC, root, mx.recordio)
        _iter_cases(out, items, root)
    _rec_cases(out)
    np.savez_compressed(os.path.join(HERE, 'fixtures', 'mxnet_det.npz'), **out)


if __name__ == '__main__':
    main()
