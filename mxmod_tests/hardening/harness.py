"""The contract every wrong call must keep: it raises, within a time limit, an error that mxmod
raised on purpose (an MXNetError, or a TypeError/ValueError/OSError raised by a ``raise`` in
mxmod's own code, not one leaking from numpy or from an index out of range), and the message
names what is wrong."""
import linecache
import os
import re
import signal
import traceback

import mxmod as mx

MXMOD_DIR = os.path.dirname(os.path.abspath(mx.__file__))


class Hang(Exception):
    """The call ran past its time limit."""


def _on_alarm(signum, frame):
    raise Hang('the call did not return within the time limit (a hang)')


def _raised_on_purpose(err):
    """Whether the innermost frame of ``err`` is a ``raise`` statement in mxmod's code."""
    frames = traceback.extract_tb(err.__traceback__)
    if not frames:
        return False
    last = frames[-1]
    line = linecache.getline(last.filename, last.lineno).strip() or (last.line or '')
    return os.path.abspath(last.filename).startswith(MXMOD_DIR) and line.startswith('raise')


def refusal(call, names, limit=20):
    """Run ``call``; return the error it raised on purpose. Fails (AssertionError) when it
    returns, hangs, leaks a foreign exception or does not name every regex in ``names``."""
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(limit)
    try:
        call()
    except Hang:
        raise AssertionError('hang: no answer within %d s' % limit) from None
    except Exception as err:  # pylint: disable=broad-except
        error = err
    else:
        raise AssertionError('accepted silently: the call returned')
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    if not isinstance(error, mx.MXNetError):
        assert _raised_on_purpose(error), 'leaked %s: %s\n%s' % (
            type(error).__name__, error, ''.join(traceback.format_exception(error)))
    message = str(error)
    for name in names:
        assert re.search(name, message), '%r not in the message: %s' % (name, message)
    return error
