"""example/autoencoder/variational_autoencoder's VAE_example.ipynb, its steps as a script with
fewer images and epochs (run in that folder by run_more_examples.py; the notebook hard-codes
60,000 images and 100 + 200 epochs): the notebook's own Module VAE (a random_normal sample in
the graph, MakeLoss of a Python sum(), fit with the 'Loss' metric and a batch-end callback that
keeps the loss), its decoder bound on its own with the learned parameters (and the extra
loss_label array the notebook passes), score on the test set; then VAE.py's VAE class (its
encoder, sampler and decoder in numpy).

    python vae_notebook.py [--train 2000] [--test 500] [--epochs 2] [--class-epochs 2]"""
import argparse
import logging
import os
import sys

import numpy as np

sys.path.insert(0, os.getcwd())
import mxnet as mx  # noqa: E402  pylint: disable=wrong-import-position
from VAE import VAE  # noqa: E402  pylint: disable=wrong-import-position,import-error


def notebook_model(image, image_test, label, epochs, batch_size=100, latent_dim=5):
    """The notebook's first part; returns the test loss and the reconstruction's mean."""
    features = image.shape[1]
    nd_iter = mx.io.NDArrayIter(data={'data': image}, label={'loss_label': label},
                                batch_size=batch_size)
    nd_iter_test = mx.io.NDArrayIter(data={'data': image_test},
                                     label={'loss_label': image_test}, batch_size=batch_size)
    data = mx.sym.var('data')
    loss_label = mx.sym.var('loss_label')
    encoder_h = mx.sym.FullyConnected(data=data, name="encoder_h", num_hidden=400)
    act_h = mx.sym.Activation(data=encoder_h, act_type="tanh", name="activation_h")
    mu = mx.sym.FullyConnected(data=act_h, name="mu", num_hidden=latent_dim)
    logvar = mx.sym.FullyConnected(data=act_h, name="logvar", num_hidden=latent_dim)
    z = mu + mx.symbol.broadcast_mul(mx.symbol.exp(0.5 * logvar),
                                     mx.symbol.random_normal(loc=0, scale=1,
                                                             shape=(batch_size, latent_dim)),
                                     name="z")
    decoder_z = mx.sym.FullyConnected(data=z, name="decoder_z", num_hidden=400)
    act_z = mx.sym.Activation(data=decoder_z, act_type="tanh", name="activation_z")
    decoder_x = mx.sym.FullyConnected(data=act_z, name="decoder_x", num_hidden=features)
    y = mx.sym.Activation(data=decoder_x, act_type="sigmoid", name='activation_x')
    kl = 0.5 * mx.symbol.sum(1 + logvar - pow(mu, 2) - mx.symbol.exp(logvar), axis=1)
    loss = -mx.symbol.sum(mx.symbol.broadcast_mul(loss_label, mx.symbol.log(y))
                          + mx.symbol.broadcast_mul(1 - loss_label, mx.symbol.log(1 - y)),
                          axis=1) - kl
    output = mx.symbol.MakeLoss(sum(loss), name='loss')
    nd_iter.reset()
    logging.getLogger().setLevel(logging.DEBUG)
    training_loss = []

    def log_to_list(period, lst):
        def _callback(param):
            if param.nbatch % period == 0:
                lst.append(param.eval_metric.get()[1])
        return _callback

    model = mx.mod.Module(symbol=output, data_names=['data'], label_names=['loss_label'])
    model.fit(nd_iter, initializer=mx.init.Normal(0.01), optimizer='sgd',
              optimizer_params={'learning_rate': 1e-3, 'wd': 1e-2},
              batch_end_callback=log_to_list(len(image) / batch_size, training_loss),
              num_epoch=epochs, eval_metric='Loss')
    print('notebook training loss list', ['%.2f' % v for v in training_loss])
    arg_params = model.get_params()[0]
    nd_iter_test.reset()
    test_batch = nd_iter_test.next()
    names = ['encoder_h_weight', 'encoder_h_bias', 'mu_weight', 'mu_bias', 'logvar_weight',
             'logvar_bias', 'decoder_z_weight', 'decoder_z_bias', 'decoder_x_weight',
             'decoder_x_bias']
    args = dict({name: arg_params[name] for name in names}, data=test_batch.data[0],
                loss_label=label)
    exe = y.bind(mx.cpu(), args)
    x_construction = exe.forward()[0].asnumpy()
    metric = mx.metric.Loss()
    score = model.score(nd_iter_test, metric)
    return score[0][1], float(x_construction.mean())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--train', type=int, default=2000)
    ap.add_argument('--test', type=int, default=500)
    ap.add_argument('--epochs', type=int, default=2)
    ap.add_argument('--class-epochs', type=int, default=2)
    args = ap.parse_args()
    mnist = mx.test_utils.get_mnist()
    image = np.reshape(mnist['train_data'][:args.train], (args.train, 28 * 28))
    image_test = np.reshape(mnist['test_data'][:args.test], (args.test, 28 * 28))
    test_loss, mean = notebook_model(image, image_test, image, args.epochs)
    print('notebook test loss %.4f, reconstruction mean %.4f' % (test_loss, mean))
    out = VAE(n_latent=2, x_train=image, x_valid=image_test, num_epoch=args.class_epochs)
    mu, logvar = VAE.encoder(out, image_test)
    z = VAE.sampler(mu, logvar)
    x_construction = VAE.decoder(out, z)
    eps = 1e-7
    bce = -np.mean(np.sum(image_test * np.log(x_construction + eps)
                          + (1 - image_test) * np.log(1 - x_construction + eps), axis=1))
    print('VAE class: %d training losses, test reconstruction BCE %.4f'
          % (len(out.training_loss), bce))


if __name__ == '__main__':
    main()
