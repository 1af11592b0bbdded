"""``python -m mxmod.profiler merge OUT IN [IN ...]``: join the trace files that the ranks of a
job wrote (``profile.rank0.json``, ``profile.rank1.json``, ...) into one Chrome trace."""
import argparse
import sys

from .trace import merge


def main(argv=None):
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog='python -m mxmod.profiler',
                                     description='Tools for mxmod profiler traces.')
    commands = parser.add_subparsers(dest='command', required=True)
    joined = commands.add_parser('merge', help='join per-rank trace files into one trace')
    joined.add_argument('output', help='the merged trace file to write')
    joined.add_argument('inputs', nargs='+', help='trace files of the ranks')
    args = parser.parse_args(argv)
    count = merge(args.output, args.inputs)
    print('%s: %d events from %d files' % (args.output, count, len(args.inputs)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
