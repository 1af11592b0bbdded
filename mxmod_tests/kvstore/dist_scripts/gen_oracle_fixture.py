"""Regenerate fixtures/dist_sync_2bit_oracle.json with MXNet 1.9.1's own ps-lite dist_sync
(a scheduler, one server and two workers on localhost running oracle_sequence.py).

Usage: /tmp/mxnet-ref/bin/python gen_oracle_fixture.py"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, '..', 'fixtures', 'dist_sync_2bit_oracle.json')


def main():
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, 'oracle.json')
    env = dict(os.environ, DMLC_PS_ROOT_URI='127.0.0.1', DMLC_PS_ROOT_PORT='9391',
               DMLC_NUM_SERVER='1', DMLC_NUM_WORKER='2', MXMOD_ORACLE='1', OMP_NUM_THREADS='1')
    procs = [subprocess.Popen([sys.executable, '-c', 'import mxnet'],
                              env=dict(env, DMLC_ROLE=role)) for role in ('scheduler', 'server')]
    procs += [subprocess.Popen([sys.executable, os.path.join(HERE, 'oracle_sequence.py'), out],
                               env=dict(env, DMLC_ROLE='worker')) for _ in range(2)]
    codes = [p.wait(timeout=120) for p in procs]
    if any(codes):
        raise SystemExit('MXNet processes exited with %s' % codes)
    shutil.copy(out.replace('.json', '.rank0.json'), FIXTURE)
    print('wrote', FIXTURE)


if __name__ == '__main__':
    main()
