import pytest

from hela_cli.config import Config, load_config
from hela_cli.errors import HelaError


def test_defaults():
    c = Config()
    # the paper's values where they held up on LoCoMo ...
    assert (c.retrieval.k, c.retrieval.m) == (10, 3)
    assert (c.hebbian.eta, c.hebbian.decay, c.retrieval.tau_days) == (0.02, 0.995, 60.0)
    # ... and the measured ones where they did not (BENCHMARKS.md, "Retrieval defaults")
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
