"""The example programs run_more_examples.py runs: where each lives in MXNet's example/ folder,
its command line, the data it needs (bench/example_data.py), what of its output is its result and
how far the two implementations' results may lie apart."""
import collections
import os
import shutil

import numpy as np

import example_data

DRIVERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'example_drivers')
FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'

Program = collections.namedtuple(
    'Program', 'name folder cwd script args data result tol flags timeout pre logs outputs '
    'deadline mxnet_env broken')


def program(name, folder, script, args=(), data=None, result=None, tol=None, flags=(),
            cwd='.', timeout=900, pre=(), logs=(), outputs=(), deadline=None, mxnet_env=None,
            broken=None):
    """One example run: ``folder`` is copied, ``script`` run in ``folder/cwd`` with ``args``;
    ``data(workdir, context)`` writes its inputs and ``pre`` (script, args) pairs of the example
    turn them into what ``script`` reads (run first, untimed, by MXNet's interpreter);
    ``result`` is (label, regex[, 'first']) whose last (first) match in the output (and in the files ``logs`` the
    program writes) is the run's result; ``tol`` the allowed absolute difference of the two
    results (None: not compared, e.g. a speed); ``outputs`` files the run must leave;
    ``deadline``: seconds after which a program whose epochs no argument shortens is stopped
    (its result is then the last one it printed); ``mxnet_env``: environment variables of
    the MXNet run only; ``broken``: why the example itself fails on both (its own bug)."""
    return Program(name, folder, cwd, script, list(args), data, result, tol, tuple(flags),
                   timeout, tuple(pre), tuple(logs), tuple(outputs), deadline, mxnet_env or {},
                   broken)


def _mnist_gz(work, ctx):
    example_data.mnist_gz(work, ctx['cache'])


def _mnist_gz_full(work, ctx):
    # svm_mnist.py splits the 70,000 images at 60,000: the full-size files
    example_data.mnist_gz(work, ctx['cache_full'])


def _mnist_ubyte_data(work, ctx):
    example_data.mnist_ubyte(os.path.join(work, 'data'), ctx['cache_full'])


def _mnist_ubyte_small(work, ctx):
    example_data.mnist_ubyte(os.path.join(work, 'data'), ctx['cache'])


def _electricity(work, ctx):
    example_data.electricity(os.path.dirname(work), _rng())
    os.makedirs(os.path.join(os.path.dirname(work), 'models'))  # the script saves there


def _vaegan(work, ctx):
    example_data.silhouettes(os.path.join(work, 'datasets', 'caltech101', 'data',
                                          'images32x32'), _rng())


def _neural_style(work, ctx):
    os.makedirs(os.path.join(work, 'input'), exist_ok=True)
    os.makedirs(os.path.join(work, 'output'), exist_ok=True)
    example_data.photo(os.path.join(work, 'input', 'IMG_4343.jpg'), _rng())
    example_data.photo(os.path.join(work, 'input', 'starry_night.jpg'),
                       np.random.RandomState(1), size=(80, 80))
    example_data.vgg19_params(os.path.join(work, 'model', 'vgg19.params'), _rng())


def _ctc(work, ctx):
    os.makedirs(os.path.join(work, 'fonts'), exist_ok=True)
    if os.path.exists(FONT):
        shutil.copy(FONT, os.path.join(work, 'fonts'))


_DEC_WEIGHTS = '''
import pickle
import numpy as np
dims = [784, 500, 500, 2000, 10]
rng = np.random.RandomState(0)
args = {}
for i in range(len(dims) - 1):
    args['encoder_%d_weight' % i] = rng.normal(0, np.sqrt(2. / dims[i]), (dims[i + 1], dims[i]))
    args['encoder_%d_bias' % i] = np.zeros(dims[i + 1])
    args['decoder_%d_weight' % i] = rng.normal(0, np.sqrt(2. / dims[i + 1]), (dims[i], dims[i + 1]))
    args['decoder_%d_bias' % i] = np.zeros(dims[i])
with open('data/mnist_pt.arg', 'wb') as out:
    pickle.dump({k: v.astype('float32') for k, v in args.items()}, out)
'''


def _dec(work, ctx):
    """MNIST for get_mnist, and a stand-in for the pre-trained autoencoder (data/mnist_pt.arg,
    a pickle of numpy arrays: random weights, written by MXNet's interpreter's numpy) so that
    dec.py skips its 150,000 pre-training iterations."""
    example_data.mnist_gz(work, ctx['cache'])
    os.makedirs(os.path.join(work, 'data'), exist_ok=True)
    with open(os.path.join(work, 'make_pretrained.py'), 'w') as out:
        out.write(_DEC_WEIGHTS)


def _rng():
    return np.random.RandomState(0)


PROGRAMS = [
    program('module/mnist_mlp', 'module', 'mnist_mlp.py', data=_mnist_ubyte_data,
            result=('val. acc.', r'^accuracy=([0-9.]+)'), tol=0.05),
    program('module/python_loss', 'module', 'python_loss.py', data=_mnist_ubyte_data,
            result=('val. acc.', r'Validation-accuracy=([0-9.]+)'), tol=0.15,
            flags=('gpu_as_cpu', 'plain_numba_jit')),
    program('module/sequential_module', 'module', 'sequential_module.py',
            data=_mnist_ubyte_data, result=('val. acc.', r'Validation-accuracy=([0-9.]+)'),
            tol=0.05, flags=('gpu_as_cpu',)),
    program('svm_mnist', 'svm_mnist', 'svm_mnist.py', data=_mnist_gz_full,
            result=('softmax acc. %', r'^softmax ([0-9.]+)'), tol=1.0, timeout=1800),
    program('cnn_text_classification', 'cnn_text_classification', 'text_cnn.py',
            ['--gpus', '0', '--num-epochs', '3', '--num-embed', '50', '--disp-batches', '20'],
            data=lambda work, ctx: example_data.rt_polarity(work, _rng()),
            result=('val. acc.', r'Validation-accuracy=([0-9.]+)'), tol=0.05,
            flags=('gpu_as_cpu',)),
    program('cnn_chinese_text_classification', 'cnn_chinese_text_classification', 'text_cnn.py',
            ['--gpus', '0', '--num-epochs', '3', '--num-embed', '50'],
            data=lambda work, ctx: example_data.chinese_text(work, _rng()),
            result=('val. acc.', r'Validation-accuracy=([0-9.]+)'), tol=0.05,
            flags=('gpu_as_cpu',)),
    program('restricted-boltzmann-machine/binary_rbm_module', 'restricted-boltzmann-machine',
            'binary_rbm_module.py', ['--no-cuda', '--num-hidden', '100', '--k', '5',
                                     '--num-epoch', '2', '--ais-num-batch', '2'],
            data=_mnist_gz, result=('test log-lik.', r'test log-likelihood (-?[0-9.]+)'),
            tol=25.0),
    program('multivariate_time_series', 'multivariate_time_series', 'lstnet.py',
            ['--num-epochs', '6', '--q', '48', '--batch-size', '32', '--num-filters', '20',
             '--recurrent-state-size', '20', '--filter-list', '6,12', '--save-period', '100'], cwd='src',
            data=_electricity,
            result=('val. RSE', r"Validation \{[^}]*'RSE': (?:np.float32\()?([0-9.]+)"), tol=0.15,
            flags=('pandas_compat',)),
    program('named_entity_recognition', 'named_entity_recognition', 'ner.py',
            ['--num-epochs', '2', '--batch-size', '32', '--word-embed', '30',
             '--word-filters', '20', '--lstm-state-size', '20'], cwd='src',
            data=lambda work, ctx: example_data.ner_csv(os.path.dirname(work), _rng()),
            pre=[('preprocess.py', [])], flags=('pandas_compat',),
            result=('train acc.', r'Train-accuracy=([0-9.]+)'), tol=0.05),
    program('svrg_module/api_usage_example', 'svrg_module', 'example_api_train.py',
            ['-e', '20'], cwd='api_usage_example',
            result=('train MSE', r'Train-mse=([0-9.e-]+)'), tol=0.05),
    program('svrg_module/linear_regression', 'svrg_module', 'train.py', ['-e', '5'],
            cwd='linear_regression', logs=('experiments.log',),
            data=lambda work, ctx: example_data.year_prediction(work, _rng()),
            result=('train MSE', r'Train-mse=([0-9.e-]+)'), tol=0.05),
    program('model-parallel/matrix_factorization', 'model-parallel', 'train.py',
            ['--num-epoch', '2', '--factor-size', '16', '--num-gpus', '2'],
            cwd='matrix_factorization', flags=('gpu_as_cpu',),
            data=lambda work, ctx: example_data.movielens_10m(work, _rng()),
            result=('val. MSE', r'Validation-mse=([0-9.e-]+)'), tol=0.1),
    program('rnn/old/lstm_bucketing', 'rnn', 'lstm_bucketing.py', cwd='old',
            broken='bucket_io.py takes np.floor of the data, not of its length',
            flags=('gpu_as_cpu',), data=lambda work, ctx: example_data.sherlock(work, _rng()),
            result=('val. perplexity', r'Validation-Perplexity=([0-9.e+]+)'), tol=2.0),
    program('rnn/old/gru_bucketing', 'rnn', 'gru_bucketing.py', cwd='old',
            broken='bucket_io.py takes np.floor of the data, not of its length',
            data=lambda work, ctx: example_data.sherlock(work, _rng()),
            result=('val. perplexity', r'Validation-Perplexity=([0-9.e+]+)'), tol=2.0),
    program('rnn/old/rnn_cell_demo', 'rnn', 'rnn_cell_demo.py', cwd='old',
            broken='bucket_io.py takes np.floor of the data, not of its length',
            flags=('gpu_as_cpu',), data=lambda work, ctx: example_data.sherlock(work, _rng()),
            result=('val. perplexity', r'Validation-Perplexity=([0-9.e+]+)'), tol=2.0),
    program('profiler/profiler_executor', 'profiler', 'profiler_executor.py',
            ['--iter_num', '3'], flags=('time_clock',), outputs=('profile_executor_5iter.json',),
            result=('ms/iter.', r'executor ([0-9.]+) ms / iteration'),
            data=lambda work, ctx: example_data.mnist_ubyte(os.path.join(work, 'mnist'),
                                                           ctx['cache'])),
    program('profiler/profiler_ndarray', 'profiler', 'profiler_ndarray.py',
            outputs=('profile_ndarray.json',)),
    program('profiler/profiler_imageiter', 'profiler', 'profiler_imageiter.py',
            data=lambda work, ctx: example_data.image_rec(os.path.join(work, 'test.rec'),
                                                          _rng(), count=660),
            result=('images/s', r'^([0-9.]+)$'), outputs=('profile_imageiter.json',)),
    program('profiler/profiler_matmul', 'profiler', 'profiler_matmul.py',
            ['--iter_num', '4', '--begin_profiling_iter', '1', '--end_profiling_iter', '3'],
            flags=('gpu_as_cpu', 'time_clock'), result=('s', r'duration: ([0-9.]+)s'),
            outputs=('profile_matmul_20iter.json',)),
    program('bayesian-methods/toy_SGLD', 'bayesian-methods', 'bdk_demo.py',
            ['-d', '0', '-l', '1'], broken='SGLD returns 2 values, run_toy_SGLD unpacks 3',
            data=lambda work, ctx: example_data.toy_regression(work, _rng())),
    program('bayesian-methods/mnist_DistilledSGLD', 'bayesian-methods', 'bdk_demo.py',
            ['-d', '1', '-l', '2', '-t', '5000'],
            data=lambda work, ctx: example_data.mnist_npz(work, ctx['cache']),
            # 20,000 iterations (fixed for -t < 10000): the first report (2,000) is compared
            deadline=400, result=('student test acc. at 2000 it.',
                                  r'Student: Test ACC \d+/\d+=([0-9.]+)', 'first'), tol=0.05),
    program('vae-gan', 'vae-gan', 'vaegan_mxnet.py',
            ['--train', '--use_cpu', '--num_epoch', '2', '--batch_size', '16', '--nef', '16',
             '--ndf', '16', '--ngf', '16', '--Z', '16', '--show_after_every', '2',
             '--save_after_every', '1', '--visualize_after_every', '1'], data=_vaegan,
            result=('D/L loss', r"^epoch: .* \[([0-9.]+)\]$"), tol=40.0,
            outputs=('checkpoints32x32_sigmoid/caltech_G-0001.params',),
            # MXNet's MKL-DNN cannot make the generator's Deconvolution (target_shape): 'could
            # not create a descriptor for a dilated deconvolution forward propagation primitive'
            mxnet_env={'MXNET_MKLDNN_ENABLED': '0'}),
    program('neural-style', 'neural-style', 'nstyle.py',
            ['--gpu', '-1', '--max-long-edge', '48', '--max-num-epochs', '12',
             '--save-epochs', '6', '--remove-noise', '0'], data=_neural_style,
            result=('last rel. change', r'relative change ([0-9.e-]+)'), tol=0.05,
            outputs=('output/final.jpg',)),
    program('deep-embedded-clustering', 'deep-embedded-clustering', 'dec.py', data=_dec,
            pre=[('make_pretrained.py', [])], flags=('gpu_as_cpu', 'numpy_aliases'),
            deadline=300, result=('first cluster acc.', r'^(0\.[0-9]+)$', 'first'), tol=0.05),
    program('ctc/lstm_ocr_train', 'ctc', 'lstm_ocr_train.py',
            ['fonts', '--cpu', '1', '--num_proc', '2'], data=_ctc, deadline=240,
            flags=('numpy_fromstring',), result=('samples/s', r'Speed: ([0-9.]+) samples/sec')),
    program('dsd', 'dsd', 'mlp.py',
            ['--pruning_switch_epoch', '1,2', '--weight_sparsity', '0,50',
             '--bias_sparsity', '0,30'], data=_mnist_ubyte_data,
            result=('val. acc.', r'Validation-accuracy=([0-9.]+)'), tol=0.05),
    program('capsnet', 'capsnet', 'capsulenet.py',
            ['--devices', 'cpu0', '--num_epoch', '2', '--batch_size', '50'],
            data=lambda work, ctx: example_data.mnist_gz_subset(work, ctx['cache']),
            flags=('numpy_fromstring', 'numpy_reshape_order'),
            broken='MNISTCustomIter never calls NDArrayIter.__init__ (no layout, idx, '
                   'num_data), written for an older NDArrayIter',
            result=('val. acc.', r'val acc: ([0-9.]+)'), tol=0.15),
    # capsnet's network, metric and scheduler (its own capsulenet.py imported), a few batches
    program('capsnet/batches', 'capsnet', os.path.join(DRIVERS, 'capsnet_batches.py'),
            ['--batch-size', '10', '--batches', '4'],
            data=lambda work, ctx: example_data.mnist_gz_subset(work, ctx['cache']),
            result=('final loss', r'final loss ([0-9.e-]+)'), tol=1e-4),
    program('numpy-ops/custom_softmax', 'numpy-ops', 'custom_softmax.py',
            data=_mnist_ubyte_small, flags=('numpy_aliases',),
            result=('val. acc.', r'Validation-accuracy=([0-9.]+)'), tol=0.05),
    # its second (CSR) half assigns a CSRNDArray gradient into the dense in_grad, which MXNet
    # 1.9.1's NDArray.__setitem__ rejects (TypeError) and mxmod accepts (as a dense copy)
    program('numpy-ops/custom_sparse_sqr', 'numpy-ops', 'custom_sparse_sqr.py'),
    program('numpy-ops/weighted_logistic_regression', 'numpy-ops',
            'weighted_logistic_regression.py',
            result=('LR grad[0,0]', r'^\[\[\s*(-?[0-9.e-]+)'), tol=1e-5),
    # train.py's loop and network (core/model.py, core/evaluate.py); batches drawn by numpy, as
    # train.py's gluon DataLoader is outside mxmod's scope; then model_optimizer.py's fused model
    program('neural_collaborative_filtering/train', 'neural_collaborative_filtering',
            os.path.join(DRIVERS, 'ncf_train.py'), ['--epoch', '2', '--batch-size', '256'],
            data=lambda work, ctx: example_data.ncf_ratings(work, _rng()),
            outputs=('model/neumf-0001.params',),
            result=('HR@10 (fused model)', r'Optimized model: HR = ([0-9.]+)'), tol=0.02),
    # VAE_example.ipynb's steps as a script (fewer images and epochs), with VAE.py's class
    program('autoencoder/variational_autoencoder', 'autoencoder',
            os.path.join(DRIVERS, 'vae_notebook.py'), ['--epochs', '2', '--class-epochs', '2'],
            cwd='variational_autoencoder',
            data=lambda work, ctx: example_data.mnist_gz_subset(work, ctx['cache'], 2000, 500),
            result=('test BCE', r'test reconstruction BCE ([0-9.]+)'), tol=0.5),
    # multi-task-learning.ipynb as a script; numpy batches for its gluon.data (outside scope);
    # its ReLU bottleneck dies at some seeds on both implementations: compare with --seeds 6
    program('multi-task', 'multi-task', os.path.join(DRIVERS, 'multitask_notebook.py'),
            ['--epochs', '2'], data=_mnist_gz,
            result=('test digit acc.', r"Testing Accuracies \(\('digits', ([0-9.]+)"), tol=0.03),
]
