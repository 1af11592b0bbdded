"""Train a small LSTM language model with mx.mod.BucketingModule and mx.rnn: sentences are
grouped by length into buckets, one unrolled graph per bucket shares a single set of weights.
The MXNet workflow, unchanged but for the import.

The corpus is generated deterministically in this file from a small English-like grammar, so the
example needs no download; its structure is learnable, so validation perplexity must fall well
below the vocabulary size. The weights are checkpointed with mx.rnn.do_rnn_checkpoint (unpacked
per gate), reloaded with mx.rnn.load_rnn_checkpoint and scored again.

    python examples/lstm_bucketing.py                          # short default run (< 1 min)
    python examples/lstm_bucketing.py --epochs 10 --sentences 8000 --num-layers 2
    python examples/lstm_bucketing.py --fused                  # one fused RNN operator
    python examples/lstm_bucketing.py --gpus 0                 # on the first GPU (cupy)
"""
import argparse
import logging
import os
import random
import tempfile

import numpy as np

import mxmod as mx

GRAMMAR = {
    'S': [['NP', 'VP'], ['NP', 'VP', 'PP'], ['NP', 'VP', 'and', 'VP']],
    'NP': [['the', 'N'], ['a', 'N'], ['the', 'A', 'N'], ['my', 'N']],
    'VP': [['V'], ['V', 'NP'], ['V', 'NP'], ['quickly', 'V', 'NP']],
    'PP': [['P', 'NP']],
    'N': [['cat'], ['dog'], ['bird'], ['child'], ['teacher'], ['garden'], ['house'], ['ball']],
    'A': [['small'], ['old'], ['happy'], ['red']],
    'V': [['sees'], ['likes'], ['chases'], ['finds'], ['sleeps']],
    'P': [['in'], ['near'], ['behind'], ['under']],
}


def generate(symbol, rng):
    """Expand ``symbol`` of GRAMMAR into a list of words."""
    if symbol not in GRAMMAR:
        return [symbol]
    choice = GRAMMAR[symbol][rng.randint(len(GRAMMAR[symbol]))]
    return [word for part in choice for word in generate(part, rng)]


def corpus(count, seed):
    """``count`` sentences, each ending with '<eos>'."""
    rng = np.random.RandomState(seed)
    return [generate('S', rng) + ['<eos>'] for _ in range(count)]


def make_sym_gen(stack, vocab_size, num_embed, num_hidden):
    """sym_gen(seq_len) for BucketingModule: Embedding -> unrolled cells -> FC -> softmax."""
    def sym_gen(seq_len):
        data = mx.sym.Variable('data')
        label = mx.sym.Variable('softmax_label')
        embed = mx.sym.Embedding(data=data, input_dim=vocab_size, output_dim=num_embed,
                                 name='embed')
        stack.reset()
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.Reshape(outputs, shape=(-1, num_hidden))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=vocab_size, name='pred')
        label = mx.sym.Reshape(label, shape=(-1,))
        pred = mx.sym.SoftmaxOutput(data=pred, label=label, name='softmax')
        return pred, ('data',), ('softmax_label',)
    return sym_gen


def make_stack(args):
    """The recurrent part: a fused RNN operator or a stack of LSTMCells."""
    if args.fused:
        return mx.rnn.FusedRNNCell(args.num_hidden, num_layers=args.num_layers, mode='lstm',
                                   prefix='lstm_')
    stack = mx.rnn.SequentialRNNCell()
    for i in range(args.num_layers):
        stack.add(mx.rnn.LSTMCell(num_hidden=args.num_hidden, prefix='lstm_l%d_' % i))
    return stack


def contexts(args):
    """The devices to train on: the GPUs listed in --gpus, else the CPU."""
    if not args.gpus:
        return [mx.cpu()]
    return [mx.gpu(int(i)) for i in args.gpus.split(',')]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--epochs', type=int, default=5)
    parser.add_argument('--sentences', type=int, default=3000, help='training sentences')
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--num-hidden', type=int, default=64)
    parser.add_argument('--num-embed', type=int, default=32)
    parser.add_argument('--num-layers', type=int, default=1)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--buckets', default='6,8,10,13,17', help='comma-separated lengths')
    parser.add_argument('--fused', action='store_true', help='use FusedRNNCell')
    parser.add_argument('--gpus', default='', help="e.g. '0' or '0,1' (needs cupy); CPU if empty")
    parser.add_argument('--prefix', default=os.path.join(tempfile.gettempdir(), 'mxmod-lstm'))
    return parser.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format='%(message)s')
    mx.random.seed(7)
    np.random.seed(7)
    random.seed(7)   # BucketSentenceIter shuffles batches with python's random
    buckets = [int(b) for b in args.buckets.split(',')]
    start = 1   # id 0 is the padding label, ignored by the metric
    train_sent, vocab = mx.rnn.encode_sentences(corpus(args.sentences, seed=1), invalid_label=0,
                                                start_label=start)
    val_sent, _ = mx.rnn.encode_sentences(corpus(max(args.sentences // 5, args.batch_size * 4),
                                                 seed=2), vocab=vocab, invalid_label=0)
    train = mx.rnn.BucketSentenceIter(train_sent, args.batch_size, buckets=buckets,
                                      invalid_label=0)
    val = mx.rnn.BucketSentenceIter(val_sent, args.batch_size, buckets=buckets, invalid_label=0)
    vocab_size = len(vocab)   # ids 0 .. len(vocab)-1 ('\n' holds 0)
    logging.info('vocabulary %d words, %d training sentences', vocab_size, len(train_sent))

    stack = make_stack(args)
    sym_gen = make_sym_gen(stack, vocab_size, args.num_embed, args.num_hidden)
    model = mx.mod.BucketingModule(sym_gen, default_bucket_key=train.default_bucket_key,
                                   context=contexts(args))
    history = []
    model.fit(train, eval_data=val, eval_metric=mx.metric.Perplexity(0), num_epoch=args.epochs,
              optimizer='adam', optimizer_params={'learning_rate': args.lr},
              initializer=mx.init.Xavier(factor_type='in', magnitude=2.34),
              batch_end_callback=mx.callback.Speedometer(args.batch_size, 20),
              eval_end_callback=lambda p: history.append(p.eval_metric.get()[1]),
              epoch_end_callback=mx.rnn.do_rnn_checkpoint(stack, args.prefix, args.epochs))
    check_and_reload(args, stack, sym_gen, train, val, history, vocab_size)


def check_and_reload(args, stack, sym_gen, train, val, history, vocab_size):
    """Reload the checkpoint into a fresh module, score it, and require perplexity to fall."""
    _, arg_params, aux_params = mx.rnn.load_rnn_checkpoint(stack, args.prefix, args.epochs)
    restored = mx.mod.BucketingModule(sym_gen, default_bucket_key=train.default_bucket_key,
                                      context=contexts(args))
    restored.bind(data_shapes=train.provide_data, label_shapes=train.provide_label,
                  for_training=False)
    restored.set_params(arg_params, aux_params)
    perplexity = dict(restored.score(val, mx.metric.Perplexity(0)))['perplexity']
    logging.info('validation perplexity per epoch: %s; reloaded checkpoint: %.3f (vocabulary %d)',
                 ', '.join('%.3f' % p for p in history), perplexity, vocab_size)
    if not (history[-1] < history[0] or len(history) == 1) or perplexity > vocab_size / 2:
        raise SystemExit('training did not converge (perplexity %.3f)' % perplexity)


if __name__ == '__main__':
    main()
