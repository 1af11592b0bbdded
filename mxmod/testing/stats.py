"""Statistical checks of random generators (``mx.test_utils``): mean and variance bounds and
chi-square goodness of fit over buckets, repeated for a success rate."""
import numpy as np

__all__ = ['gen_buckets_probs_with_ppf', 'mean_check', 'var_check', 'chi_square_check',
           'verify_generator']


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` equally likely buckets ``(ppf(i/n), ppf((i+1)/n))`` of a distribution given
    by its quantile function ``ppf``; returns ``(buckets, probs)``."""
    if nbuckets <= 0:
        raise ValueError('gen_buckets_probs_with_ppf: nbuckets must be positive, got %r' % nbuckets)
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets))) for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator, mu, sigma, nsamples=1000000):
    """True when the mean of ``generator(nsamples)`` lies within ``mu +- 3 sigma / sqrt(n)``."""
    mean = np.array(generator(nsamples)).mean()
    bound = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - bound < mean < mu + bound)


def var_check(generator, sigma, nsamples=1000000):
    """True when the sample variance of ``generator(nsamples)`` lies within
    ``sigma^2 +- 3 sqrt(2 sigma^4 / (n - 1))``."""
    var = np.array(generator(nsamples)).var(ddof=1)
    bound = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - bound < var < sigma ** 2 + bound)


def _bucket_counts(samples, buckets):
    samples = np.asarray(samples).reshape(-1)
    if isinstance(buckets[0], (list, tuple)):
        edges = np.array([edge for bucket in buckets for edge in bucket], dtype=np.float64)
        if np.any(np.diff(edges) < 0):
            raise ValueError('chi_square_check: buckets must be ascending and disjoint, got %s'
                             % (buckets,))
        ids = np.searchsorted(edges, samples, side='right')
        inside = ids % 2 == 1     # between a bucket's low and high edge
        return np.bincount(ids[inside] // 2, minlength=len(buckets))[:len(buckets)]
    return np.array([np.count_nonzero(samples == value) for value in buckets])


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Chi-square goodness of fit of ``generator(nsamples)`` against bucket probabilities.

    Parameters
    ----------
    generator : callable
        ``generator(n)`` returns n i.i.d. samples.
    buckets : list
        ``(low, high)`` ranges (continuous distributions; ascending, disjoint) or the possible
        values (discrete distributions).
    probs : sequence of float
        The probability of each bucket.
    nsamples : int

    Returns
    -------
    (p, obs_freq, expected_freq)
        The p value (higher: more consistent), observed and expected counts per bucket.
    """
    import scipy.stats  # pylint: disable=import-outside-toplevel
    if not isinstance(buckets, list) or len(probs) != len(buckets):
        raise ValueError('chi_square_check: buckets must be a list with one entry per '
                         'probability, got %d buckets and %d probabilities'
                         % (len(buckets), len(probs)))
    obs_freq = _bucket_counts(generator(nsamples), buckets)
    probs = np.asarray(probs, dtype=np.float64)
    expected_freq = nsamples * probs / probs.sum()
    if obs_freq.sum() != nsamples:
        return 0.0, obs_freq, expected_freq     # samples outside every bucket: no fit
    _, p = scipy.stats.chisquare(f_obs=obs_freq, f_exp=expected_freq)
    return p, obs_freq, expected_freq


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    """Run chi_square_check ``nrepeat`` times; raise AssertionError unless at least
    ``nrepeat * success_rate`` runs give p > ``alpha``. Returns the p values."""
    runs = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    p_values = [p for p, _, _ in runs]
    if (np.array(p_values) > alpha).sum() < nrepeat * success_rate:
        raise AssertionError('Generator test fails, Chi-square p=%s, obs_freq=%s, expected_freq=%s.'
                             '\nbuckets=%s, probs=%s'
                             % (p_values, [r[1] for r in runs], [r[2] for r in runs], buckets,
                                list(probs)))
    return p_values
