"""The Keras programs of the harness: each case builds, trains and evaluates one model with
keras-mxnet 2.2.4.3 on generated data, for one seed, and returns its figures.

Runs under whichever ``mxnet`` is importable: MXNet 1.9.1 itself, or mxmod behind the alias of
``run_case.py``. The data of a case is the same for every seed (drawn from its own generator);
the seed sets the weights' initialisers and numpy's generator (Keras's shuffling)."""
import os
import time

import numpy as np

EPOCHS = 4


# ---- data -------------------------------------------------------------------------------------
def blobs(n=1200, dim=20, classes=3):
    """Gaussian blobs: ``n`` points of ``dim`` features in ``classes`` overlapping clusters."""
    rng = np.random.RandomState(1234)
    centers = rng.randn(classes, dim) * 1.2
    labels = rng.randint(0, classes, n)
    points = centers[labels] + rng.randn(n, dim) * 3.0
    return points.astype('float32'), labels


def images(n=800, side=12, classes=4):
    """Small one-channel images: a bright bar whose orientation/position gives the class."""
    rng = np.random.RandomState(4321)
    labels = rng.randint(0, classes, n)
    x = rng.rand(n, side, side).astype('float32') * 1.2
    for i, label in enumerate(labels):
        pos = rng.randint(2, side - 2)
        if label == 0:
            x[i, pos, :] += 1.0
        elif label == 1:
            x[i, :, pos] += 1.0
        elif label == 2:
            np.fill_diagonal(x[i], x[i].diagonal() + 1.0)
        else:
            np.fill_diagonal(x[i][:, ::-1], x[i][:, ::-1].diagonal() + 1.0)
    return x, labels


def sequences(n=800, length=20, vocab=50):
    """Token sequences; the label says whether token 1 occurs before token 2 (order matters)."""
    rng = np.random.RandomState(2468)
    x = rng.randint(3, vocab, (n, length))
    labels = rng.randint(0, 2, n)
    for i, label in enumerate(labels):
        a, b = sorted(rng.choice(length, 2, replace=False))
        x[i, a], x[i, b] = (1, 2) if label else (2, 1)
    return x.astype('float32'), labels


def sparse_rows(n=1024, dim=500, nnz=12):
    """Bag-of-words rows as scipy CSR: the label is whether more of the non-zeros fall in the
    first half of the vocabulary."""
    import scipy.sparse as sp  # pylint: disable=import-outside-toplevel
    rng = np.random.RandomState(97)
    cols = rng.randint(0, dim, (n, nnz))
    labels = ((cols < dim // 2).sum(1) > nnz // 2).astype('int64')
    rows = np.repeat(np.arange(n), nnz)
    data = np.ones(n * nnz, dtype='float32')
    matrix = sp.csr_matrix((data, (rows, cols.ravel())), shape=(n, dim), dtype='float32')
    matrix.sum_duplicates()
    return matrix, labels


# ---- helpers ----------------------------------------------------------------------------------
def _keras():
    import keras  # pylint: disable=import-outside-toplevel
    return keras


def _init(seed):
    keras = _keras()
    return keras.initializers.glorot_uniform(seed=seed + 1)


def _figures(history, started, epochs):
    """Last epoch's metrics from a History, with the seconds per epoch."""
    out = {key: float(values[-1]) for key, values in history.history.items() if values}
    out['s_per_epoch'] = (time.time() - started) / epochs
    return out


def _fit(model, x, y, epochs=EPOCHS, **kwargs):
    kwargs.setdefault('batch_size', 32)
    started = time.time()
    history = model.fit(x, y, epochs=epochs, verbose=0, validation_split=0.2, **kwargs)
    return _figures(history, started, epochs)


def _mlp(seed, optimizer, classes=3, dim=20):
    keras = _keras()
    from keras.layers import Dense  # pylint: disable=import-outside-toplevel
    model = keras.models.Sequential([
        Dense(64, activation='relu', input_shape=(dim,), kernel_initializer=_init(seed)),
        Dense(32, activation='tanh', kernel_initializer=_init(seed + 10)),
        Dense(classes, activation='softmax', kernel_initializer=_init(seed + 20))])
    model.compile(optimizer, 'categorical_crossentropy', metrics=['accuracy'])
    return model


def _onehot(labels, classes):
    return _keras().utils.to_categorical(labels, classes)


# ---- the cases --------------------------------------------------------------------------------
def mlp_sgd(seed, workdir):
    """Sequential MLP, plain SGD."""
    x, y = blobs()
    keras = _keras()
    return _fit(_mlp(seed, keras.optimizers.SGD(lr=0.05)), x, _onehot(y, 3))


def optimizer_case(name, **kwargs):
    """An MLP case trained with keras.optimizers.<name>(**kwargs)."""
    def case(seed, workdir):
        x, y = blobs()
        optimizer = getattr(_keras().optimizers, name)(**kwargs)
        return _fit(_mlp(seed, optimizer), x, _onehot(y, 3))
    case.__doc__ = 'Sequential MLP, keras.optimizers.%s(%s).' % (
        name, ', '.join('%s=%r' % kv for kv in sorted(kwargs.items())))
    return case


def cnn(seed, workdir):
    """Conv2D/MaxPooling2D CNN with biases (channels_last, Keras's default)."""
    keras = _keras()
    from keras.layers import Conv2D, MaxPooling2D, Flatten, Dense  # pylint: disable=import-outside-toplevel
    x, y = images()
    model = keras.models.Sequential([
        Conv2D(8, (3, 3), activation='relu', input_shape=(12, 12, 1),
               kernel_initializer=_init(seed)),
        MaxPooling2D((2, 2)),
        Conv2D(16, (3, 3), activation='relu', padding='same', kernel_initializer=_init(seed + 1)),
        MaxPooling2D((2, 2)),
        Flatten(),
        Dense(4, activation='softmax', kernel_initializer=_init(seed + 2))])
    model.compile(keras.optimizers.Adam(lr=0.005), 'categorical_crossentropy',
                  metrics=['accuracy'])
    return _fit(model, x[..., None], _onehot(y, 4), epochs=4)


def recurrent_case(layer, unroll):
    """An Embedding + <layer>(unroll) + Dense classifier of ``sequences()``."""
    def case(seed, workdir):
        keras = _keras()
        from keras.layers import Embedding, Dense  # pylint: disable=import-outside-toplevel
        x, y = sequences()
        model = keras.models.Sequential([
            Embedding(50, 16, input_length=20,
                      embeddings_initializer=keras.initializers.uniform(seed=seed)),
            getattr(keras.layers, layer)(32, unroll=unroll, kernel_initializer=_init(seed + 1),
                                         recurrent_initializer=keras.initializers.orthogonal(
                                             seed=seed + 2)),
            Dense(1, activation='sigmoid', kernel_initializer=_init(seed + 3))])
        model.compile(keras.optimizers.Adam(lr=0.01), 'binary_crossentropy',
                      metrics=['accuracy'])
        return _fit(model, x, y, epochs=3)
    case.__doc__ = 'Embedding + %s(32, unroll=%s) + Dense on order-dependent sequences.' % (
        layer, unroll)
    return case


def batchnorm_callbacks(seed, workdir):
    """Dense + BatchNormalization + Dropout with ModelCheckpoint, EarlyStopping,
    ReduceLROnPlateau, LearningRateScheduler and CSVLogger."""
    keras = _keras()
    from keras.layers import Dense, BatchNormalization, Dropout, Activation  # pylint: disable=import-outside-toplevel
    x, y = blobs()
    model = keras.models.Sequential([
        Dense(64, input_shape=(20,), kernel_initializer=_init(seed)),
        BatchNormalization(), Activation('relu'), Dropout(0.2),
        Dense(3, activation='softmax', kernel_initializer=_init(seed + 1))])
    model.compile(keras.optimizers.SGD(lr=0.05, momentum=0.9), 'categorical_crossentropy',
                  metrics=['accuracy'])
    best = os.path.join(workdir, 'best_%d.h5' % seed)
    log = os.path.join(workdir, 'log_%d.csv' % seed)
    callbacks = [
        keras.callbacks.ModelCheckpoint(best, monitor='val_loss', save_best_only=True),
        keras.callbacks.EarlyStopping(monitor='val_loss', patience=3),
        keras.callbacks.ReduceLROnPlateau(monitor='val_loss', factor=0.5, patience=1),
        keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.9 if epoch else lr),
        keras.callbacks.CSVLogger(log)]
    out = _fit(model, x, _onehot(y, 3), epochs=6, callbacks=callbacks)
    with open(log) as lines:
        out['csv_rows'] = float(len(lines.read().strip().splitlines()) - 1)
    reloaded = keras.models.load_model(best)
    out['best_val_loss'] = float(reloaded.evaluate(x[-240:], _onehot(y[-240:], 3),
                                                   verbose=0)[0])
    return out


def sparse_input(seed, workdir):
    """A CSR (scipy.sparse) input into a Dense layer with a sparse weight."""
    keras = _keras()
    from keras.layers import Dense, Input  # pylint: disable=import-outside-toplevel
    x, y = sparse_rows()
    inputs = Input(shape=(x.shape[1],), sparse=True)
    hidden = Dense(16, activation='relu', sparse_weight=True,
                   kernel_initializer=_init(seed))(inputs)
    outputs = Dense(1, activation='sigmoid', kernel_initializer=_init(seed + 1))(hidden)
    model = keras.models.Model(inputs, outputs)
    model.compile(keras.optimizers.SGD(lr=0.1), 'binary_crossentropy', metrics=['accuracy'])
    started = time.time()
    # batches of one size: MXNet 1.9.1 cannot reshape an executor holding a sparse weight
    history = model.fit(x[:832], y[:832], epochs=EPOCHS, batch_size=32, verbose=0,
                        validation_data=(x[832:], y[832:]))
    return _figures(history, started, EPOCHS)


def embedding(seed, workdir):
    """Embedding(sparse_grad=True) + Flatten + Dense."""
    keras = _keras()
    from keras.layers import Embedding, Flatten, Dense  # pylint: disable=import-outside-toplevel
    x, y = sequences()
    model = keras.models.Sequential([
        Embedding(50, 8, input_length=20, sparse_grad=True,
                  embeddings_initializer=keras.initializers.uniform(seed=seed)),
        Flatten(),
        Dense(16, activation='relu', kernel_initializer=_init(seed + 1)),
        Dense(1, activation='sigmoid', kernel_initializer=_init(seed + 2))])
    model.compile(keras.optimizers.Adam(lr=0.01), 'binary_crossentropy', metrics=['accuracy'])
    return _fit(model, x, y)


def save_load(seed, workdir):
    """model.save (HDF5), keras.models.load_model: the same predictions, then training goes on
    from the loaded optimizer state."""
    keras = _keras()
    x, y = blobs()
    model = _mlp(seed, keras.optimizers.Adam(lr=0.01))
    out = _fit(model, x, _onehot(y, 3), epochs=2)
    path = os.path.join(workdir, 'model_%d.h5' % seed)
    model.save(path)
    loaded = keras.models.load_model(path)
    out['reload_max_diff'] = float(np.abs(loaded.predict(x) - model.predict(x)).max())
    history = loaded.fit(x, _onehot(y, 3), epochs=2, batch_size=32, verbose=0)
    out['loss_after_reload'] = float(history.history['loss'][-1])
    return out


def export_mxnet(seed, workdir):
    """keras.models.save_mxnet_model: symbol and params that mx.mod.Module loads for inference
    (here, and in the other implementation through ``harness.py``)."""
    import mxnet as mx  # pylint: disable=import-outside-toplevel
    keras = _keras()
    x, y = blobs()
    model = _mlp(seed, keras.optimizers.SGD(lr=0.05, momentum=0.9))
    out = _fit(model, x, _onehot(y, 3), epochs=2)
    prefix = os.path.join(workdir, 'exported_%d' % seed)
    data_names, data_shapes = keras.models.save_mxnet_model(model, prefix)
    expected = model.predict(x[:64])
    np.save(prefix + '-input.npy', x[:64])
    np.save(prefix + '-expected.npy', expected)
    with open(prefix + '-data_name.txt', 'w') as name_file:
        name_file.write(data_names[0])
    got = module_predict(mx, prefix, data_names[0], x[:64])
    out['module_max_diff'] = float(np.abs(got - expected).max())
    return out


def module_predict(mx, prefix, data_name, x):
    """Predictions of a saved checkpoint through plain mx.mod.Module (no Keras)."""
    sym, args, auxs = mx.model.load_checkpoint(prefix, 0)
    mod = mx.mod.Module(symbol=sym, data_names=[data_name], context=mx.cpu(), label_names=None)
    mod.bind(for_training=False, data_shapes=[(data_name, x.shape)])
    mod.set_params(args, auxs, allow_missing=True)
    return mod.predict(mx.io.NDArrayIter(x, batch_size=len(x))).asnumpy()


CASES = {
    'mlp_sgd': mlp_sgd,
    'mlp_adam': optimizer_case('Adam', lr=0.005),
    'cnn': cnn,
    'lstm_unrolled': recurrent_case('LSTM', True),
    'lstm_foreach': recurrent_case('LSTM', False),
    'gru_unrolled': recurrent_case('GRU', True),
    'gru_foreach': recurrent_case('GRU', False),
    'batchnorm_callbacks': batchnorm_callbacks,
    'sparse_input': sparse_input,
    'embedding': embedding,
    'save_load_model': save_load,
    'export_mxnet_model': export_mxnet,
    'opt_sgd_nesterov': optimizer_case('SGD', lr=0.02, momentum=0.9, nesterov=True),
    'opt_rmsprop': optimizer_case('RMSprop', lr=0.002),
    'opt_adagrad': optimizer_case('Adagrad', lr=0.05),
    'opt_adadelta': optimizer_case('Adadelta', lr=1.0),
    'opt_adamax': optimizer_case('Adamax', lr=0.004),
    'opt_nadam': optimizer_case('Nadam', lr=0.004),
    'opt_sgd_decay': optimizer_case('SGD', lr=0.1, decay=0.01),
}
