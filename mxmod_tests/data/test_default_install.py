"""Image decoding comes with the default install (``pip install mxmod``), as MXNet's wheel decodes
JPEG out of the box: setup.cfg's install_requires holds the package that provides the module
mxmod's codec imports; a slow test installs the project into a fresh venv and decodes a JPEG
there, comparing with OpenCV's pixels here."""
import configparser
import os
import shutil
import subprocess
import sys
from importlib import metadata

import numpy as np
import pytest

import mxmod as mx
from mxmod.image.codec import require_cv2

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _install_requires():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, 'setup.cfg'))
    return [line.strip() for line in cfg['options']['install_requires'].splitlines()
            if line.strip()]


def _name(requirement):
    for sep in '<>=!~;[ ':
        requirement = requirement.split(sep)[0]
    return requirement


def test_the_decoder_is_a_core_dependency():
    names = [_name(r) for r in _install_requires()]
    assert 'opencv-python-headless' in names, names
    try:
        files = metadata.files('opencv-python-headless') or []
    except metadata.PackageNotFoundError:
        pytest.skip('opencv-python-headless is not installed from a distribution here')
    # the distribution provides the module that mxmod's codec imports
    assert any(str(f).replace('\\', '/') == 'cv2/__init__.py' for f in files)
    assert require_cv2().__name__ == 'cv2'
    assert mx.runtime.Features().is_enabled('JPEG')


_DECODE = r'''
import sys, numpy as np, mxmod as mx
raw = open(sys.argv[1], 'rb').read()
np.save(sys.argv[2], mx.image.imdecode(raw).asnumpy())
'''


@pytest.mark.slow
def test_fresh_default_install_decodes_jpeg(tmp_path):
    """``pip install .`` into a new venv (the registry reachable), then mx.image.imdecode."""
    cv2 = require_cv2()
    rng = np.random.RandomState(0)
    img = rng.randint(0, 255, (24, 40, 3)).astype(np.uint8)
    jpeg = tmp_path / 'x.jpg'
    jpeg.write_bytes(cv2.imencode('.jpg', img)[1].tobytes())
    project = tmp_path / 'project'       # a copy: pip's in-tree build leaves build/ behind
    project.mkdir()
    for name in ('setup.cfg', 'setup.py', 'README.md', 'LICENSE'):
        shutil.copy(os.path.join(ROOT, name), str(project / name))
    shutil.copytree(os.path.join(ROOT, 'mxmod'), str(project / 'mxmod'),
                    ignore=shutil.ignore_patterns('__pycache__'))
    venv = tmp_path / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True, timeout=300)
    python = str(venv / 'bin' / 'python')
    subprocess.run([python, '-m', 'pip', 'install', '-q', str(project)], check=True,
                   timeout=1800)
    out = tmp_path / 'pixels.npy'
    subprocess.run([python, '-c', _DECODE, str(jpeg), str(out)], check=True, timeout=300,
                   cwd=str(tmp_path))
    want = cv2.imdecode(np.frombuffer(jpeg.read_bytes(), np.uint8), cv2.IMREAD_COLOR)[:, :, ::-1]
    np.testing.assert_array_equal(np.load(out), want)
