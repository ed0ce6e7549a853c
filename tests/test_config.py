import pytest

from hela_cli.config import Config, load_config
from hela_cli.errors import HelaError


def test_defaults():
    c = Config()
    # the paper's values where they held up on LoCoMo ...
    assert (c.retrieval.k, c.retrieval.m) == (10, 3)
    assert (c.hebbian.eta, c.hebbian.decay, c.retrieval.tau_days) == (0.02, 0.995, 60.0)
    # ... and the measured ones where they did not (docs/benchmarks/ablations.md, "Retrieval defaults")
    assert (c.retrieval.beta, c.retrieval.theta, c.retrieval.time_decay) == (1.0, 1.0, False)


def test_precedence_yaml_env_flags(tmp_path):
    y = tmp_path / "c.yaml"
    y.write_text("retrieval:\n  k: 7\n  m: 2\nhebbian:\n  eta: 0.05\n")
    c = load_config(y, env={"HELA_RETRIEVAL_M": "4"}, overrides={"retrieval.k": None})
    assert (c.retrieval.k, c.retrieval.m, c.hebbian.eta) == (7, 4, 0.05)
    c = load_config(y, env={"HELA_RETRIEVAL_K": "8"}, overrides={"retrieval.k": 9})
    assert c.retrieval.k == 9
    assert load_config(None, env={"HELA_DB": "/x/y.db"}).db == "/x/y.db"


@pytest.mark.parametrize("body, needle", [
    ("retrieval:\n  kk: 3\n", "retrieval.kk"),
    ("retrieval:\n  k: many\n", "retrieval.k"),
    ("retrieval:\n  spreading: maybe\n", "retrieval.spreading"),
    ("nosuch:\n  k: 1\n", "nosuch.k"),
    ("retrieval: [1, 2\n", "line"),
    ("- just\n- a list\n", "mapping"),
])
def test_yaml_errors_name_the_key(tmp_path, body, needle):
    y = tmp_path / "bad.yaml"
    y.write_text(body)
    with pytest.raises(HelaError) as e:
        load_config(y, env={})
    assert needle in str(e.value) and "bad.yaml" in str(e.value) and "\n" not in str(e.value)


def test_env_errors_name_the_variable():
    with pytest.raises(HelaError, match="HELA_RETRIEVAL_K"):
        load_config(None, env={"HELA_RETRIEVAL_K": "ten"})


def test_missing_config_file(tmp_path):
    with pytest.raises(HelaError, match="not found"):
        load_config(tmp_path / "nope.yaml", env={})


def test_example_config_matches_defaults():
    from pathlib import Path

    c = load_config(Path(__file__).resolve().parents[1] / "config.example.yaml", env={})
    assert c == Config()


@pytest.mark.parametrize("decay", ["1e-300", "0.5", "0.9", "0.9999", "1"])
def test_every_decay_in_0_1_is_accepted(decay):
    # tests/test_edges.py drives these (0.5 ... 0.9999) through 8k / 100k learning steps
    assert load_config(None, env={"HELA_HEBBIAN_DECAY": decay}).hebbian.decay == float(decay)


@pytest.mark.parametrize("key, value, needle", [
    ("HELA_HEBBIAN_DECAY", "0", "> 0 and <= 1"), ("HELA_HEBBIAN_DECAY", "1.01", "> 0 and <= 1"),
    ("HELA_HEBBIAN_CAP", "1e300", "<= 1e+250"), ("HELA_INGEST_INITIAL_WEIGHT", "1e260", "<= 1e+250"),
])
def test_values_that_cannot_work_are_refused(key, value, needle):
    with pytest.raises(HelaError, match=needle.replace("+", r"\+")):
        load_config(None, env={key: value})
