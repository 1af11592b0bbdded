"""Fuzzing the loaders from real files (MXNet's golden files and fixtures): every mutated
``-symbol.json``, ``.params`` and ``.states`` either loads into something that works or is
refused with an MXNetError; no other exception leaks. A few hundred examples per format run in
CI (seconds); ``-m slow`` runs thousands."""
import pytest
from hypothesis import HealthCheck, given, settings

from mxmod_tests.hardening import fuzzing

FAST = settings(max_examples=150, deadline=None, database=None, derandomize=True,
                suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=4000, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))

JSON_SEEDS = fuzzing.json_seeds()
PARAMS_SEEDS = fuzzing.params_seeds()
STATES_SEEDS = fuzzing.states_seeds()


def test_seeds_load_unmutated():
    """The fuzz seeds themselves are accepted (so the fuzzing starts from valid files)."""
    assert len(JSON_SEEDS) >= 5 and len(PARAMS_SEEDS) >= 8 and len(STATES_SEEDS) >= 6
    for name, data in JSON_SEEDS.items():
        assert fuzzing.check_json(name, data) == 'ok', name
    for name, data in PARAMS_SEEDS.items():
        assert fuzzing.check_params(data) == 'ok', name
    for name, data in STATES_SEEDS.items():
        assert fuzzing.check_states(name, data) == 'ok', name


@FAST
@given(fuzzing.mutated_json(JSON_SEEDS))
def test_fuzz_symbol_json(case):
    fuzzing.check_json(*case)


@FAST
@given(fuzzing.mutated_bytes(PARAMS_SEEDS))
def test_fuzz_params(case):
    fuzzing.check_params(case[1])


@FAST
@given(fuzzing.mutated_bytes(STATES_SEEDS))
def test_fuzz_states(case):
    fuzzing.check_states(*case)


@pytest.mark.slow
@SLOW
@given(fuzzing.mutated_json(JSON_SEEDS))
def test_fuzz_symbol_json_long(case):
    fuzzing.check_json(*case)


@pytest.mark.slow
@SLOW
@given(fuzzing.mutated_bytes(PARAMS_SEEDS))
def test_fuzz_params_long(case):
    fuzzing.check_params(case[1])


@pytest.mark.slow
@SLOW
@given(fuzzing.mutated_bytes(STATES_SEEDS))
def test_fuzz_states_long(case):
    fuzzing.check_states(*case)
