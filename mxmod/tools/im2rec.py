"""``python -m mxmod.tools.im2rec``: make image lists (.lst) and pack images into RecordIO
(.rec + .idx), with the options of MXNet 1.9.1's tools/im2rec.py.

    python -m mxmod.tools.im2rec --list --recursive --train-ratio 0.9 PREFIX ROOT
    python -m mxmod.tools.im2rec --resize 256 --quality 90 --num-thread 4 PREFIX ROOT

Lists are shuffled with Python's ``random`` seeded 100, as MXNet's tool does, so the same
folder gives the same .lst. Packing runs ``--num-thread`` OpenCV worker threads (OpenCV
releases the GIL) and writes records in list order."""
import argparse
import os
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from .. import recordio
from ..image.codec import require_cv2


def list_image(root, recursive, exts):
    """Yield (index, relative path, label) for the images under ``root``; with ``recursive``
    each sub-folder is a label (printed as "folder label")."""
    i = 0
    if recursive:
        labels = {}
        for path, dirs, files in os.walk(root, followlinks=True):
            dirs.sort()
            for fname in sorted(files):
                fpath = os.path.join(path, fname)
                if os.path.isfile(fpath) and os.path.splitext(fname)[1].lower() in exts:
                    labels.setdefault(path, len(labels))
                    yield (i, os.path.relpath(fpath, root), labels[path])
                    i += 1
        for folder, label in sorted(labels.items(), key=lambda kv: kv[1]):
            print(os.path.relpath(folder, root), label)
        return
    for fname in sorted(os.listdir(root)):
        fpath = os.path.join(root, fname)
        if os.path.isfile(fpath) and os.path.splitext(fname)[1].lower() in exts:
            yield (i, os.path.relpath(fpath, root), 0)
            i += 1


def write_list(path_out, image_list):
    """Write ``index<TAB>label(s)<TAB>path`` lines."""
    with open(path_out, 'w') as fout:
        for item in image_list:
            fout.write('%d\t%s%s\n' % (item[0], ''.join('%f\t' % j for j in item[2:]), item[1]))


def make_list(args):
    """Write PREFIX.lst (or _train/_val/_test lists, per chunk) for the images under ROOT."""
    image_list = list(list_image(args.root, args.recursive, args.exts))
    if args.shuffle:
        random.seed(100)
        random.shuffle(image_list)
    chunk_size = (len(image_list) + args.chunks - 1) // args.chunks
    for i in range(args.chunks):
        chunk = image_list[i * chunk_size:(i + 1) * chunk_size]
        suffix = '_%d' % i if args.chunks > 1 else ''
        sep = int(chunk_size * args.train_ratio)
        sep_test = int(chunk_size * args.test_ratio)
        if args.train_ratio == 1.0:
            write_list(args.prefix + suffix + '.lst', chunk)
            continue
        if args.test_ratio:
            write_list(args.prefix + suffix + '_test.lst', chunk[:sep_test])
        if args.train_ratio + args.test_ratio < 1.0:
            write_list(args.prefix + suffix + '_val.lst', chunk[sep_test + sep:])
        write_list(args.prefix + suffix + '_train.lst', chunk[sep_test:sep_test + sep])


def read_list(path_in):
    """Yield [index, path, label...] for each valid line of a .lst file (bad lines reported)."""
    with open(path_in) as fin:
        for line in fin:
            fields = [f.strip() for f in line.strip().split('\t')]
            if len(fields) < 3:
                print('lst should have at least has three parts, but only has %s parts for %s'
                      % (len(fields), fields))
                continue
            try:
                yield [int(fields[0]), fields[-1]] + [float(f) for f in fields[1:-1]]
            except ValueError as err:
                print('Parsing lst met error for %s, detail: %s' % (fields, err))


def _transform(cv2, img, args):
    if args.center_crop:
        rows, cols = img.shape[:2]
        if rows > cols:
            margin = (rows - cols) // 2
            img = img[margin:margin + cols, :]
        else:
            margin = (cols - rows) // 2
            img = img[:, margin:margin + rows]
    if args.resize:
        rows, cols = img.shape[:2]
        size = (args.resize, rows * args.resize // cols) if rows > cols \
            else (cols * args.resize // rows, args.resize)
        img = cv2.resize(img, size)
    return img


def image_encode(args, item):
    """The packed record for one list item, or None (with a message) when it fails."""
    fullpath = os.path.join(args.root, item[1])
    label = item[2:] if len(item) > 3 and args.pack_label else item[2]
    header = recordio.IRHeader(0, label, item[0], 0)
    try:
        if args.pass_through:
            with open(fullpath, 'rb') as fin:
                return recordio.pack(header, fin.read())
        cv2 = require_cv2()
        img = cv2.imread(fullpath, args.color)
        if img is None:
            print('imread read blank (None) image for file: %s' % fullpath)
            return None
        return recordio.pack_img(header, _transform(cv2, img, args), quality=args.quality,
                                 img_fmt=args.encoding)
    except Exception as err:  # pylint: disable=broad-except
        print('pack_img error on file: %s' % fullpath, err)
        return None


def write_record(args, lst_path, working_dir):
    """Pack the images of one .lst file into .rec and .idx files beside it."""
    base = os.path.splitext(os.path.basename(lst_path))[0]
    record = recordio.MXIndexedRecordIO(os.path.join(working_dir, base + '.idx'),
                                        os.path.join(working_dir, base + '.rec'), 'w')
    items = list(read_list(lst_path))
    start = time.time()
    with ThreadPoolExecutor(max(1, args.num_thread)) as pool:
        for count, (item, packed) in enumerate(zip(items, pool.map(
                lambda it: image_encode(args, it), items))):
            if packed is not None:
                record.write_idx(item[0], packed)
            if count % 1000 == 0:
                print('time:', time.time() - start, ' count:', count)
                start = time.time()
    record.close()


def parse_args(argv=None):
    """The command line (MXNet's im2rec options)."""
    parser = argparse.ArgumentParser(
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description='Create an image list or make a record database by reading from an '
                    'image list')
    parser.add_argument('prefix', help='prefix of input/output lst and rec files.')
    parser.add_argument('root', help='path to folder containing images.')
    cgroup = parser.add_argument_group('Options for creating image lists')
    cgroup.add_argument('--list', action='store_true',
                        help='make a list of images (PREFIX.lst) instead of a database')
    cgroup.add_argument('--exts', nargs='+', default=['.jpeg', '.jpg', '.png'],
                        help='list of acceptable image extensions.')
    cgroup.add_argument('--chunks', type=int, default=1, help='number of chunks.')
    cgroup.add_argument('--train-ratio', type=float, default=1.0,
                        help='Ratio of images to use for training.')
    cgroup.add_argument('--test-ratio', type=float, default=0,
                        help='Ratio of images to use for testing.')
    cgroup.add_argument('--recursive', action='store_true',
                        help='each sub-folder of ROOT is a class (label)')
    cgroup.add_argument('--no-shuffle', dest='shuffle', action='store_false',
                        help='keep the image order instead of shuffling the list')
    rgroup = parser.add_argument_group('Options for creating database')
    rgroup.add_argument('--pass-through', action='store_true',
                        help='store the image files as they are (no decode/transform)')
    rgroup.add_argument('--resize', type=int, default=0,
                        help='resize the shorter edge of images to this size (0: keep)')
    rgroup.add_argument('--center-crop', action='store_true',
                        help='crop the centre square of each image')
    rgroup.add_argument('--quality', type=int, default=95,
                        help='JPEG quality (1-100) or PNG compression (1-9)')
    rgroup.add_argument('--num-thread', type=int, default=1,
                        help='number of encoding threads')
    rgroup.add_argument('--color', type=int, default=1, choices=[-1, 0, 1],
                        help='1 colour, 0 grayscale, -1 as stored (with alpha)')
    rgroup.add_argument('--encoding', type=str, default='.jpg', choices=['.jpg', '.png'],
                        help='encoding of the stored images')
    rgroup.add_argument('--pack-label', action='store_true',
                        help='store every label of a multi-label .lst line in the record')
    args = parser.parse_args(argv)
    args.prefix = os.path.abspath(args.prefix)
    args.root = os.path.abspath(args.root)
    return args


def main(argv=None):
    """Run im2rec; returns the exit status."""
    args = parse_args(argv)
    if args.list:
        make_list(args)
        return 0
    working_dir = args.prefix if os.path.isdir(args.prefix) else os.path.dirname(args.prefix)
    count = 0
    for fname in sorted(os.listdir(working_dir)):
        path = os.path.join(working_dir, fname)
        if os.path.isfile(path) and path.startswith(args.prefix) and path.endswith('.lst'):
            print('Creating .rec file from', path, 'in', working_dir)
            write_record(args, path, working_dir)
            count += 1
    if not count:
        print('Did not find and list file with prefix %s' % args.prefix)
    return 0


if __name__ == '__main__':
    sys.exit(main())
