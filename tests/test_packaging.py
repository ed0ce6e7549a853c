"""pyproject.toml asks for what the code needs."""

import re
import tomllib

from tests.conftest import REPO


def test_numpy_pin_covers_bitwise_count():
    # store/vector_index.py uses np.bitwise_count, new in NumPy 2.0: an older NumPy fails at the first
    # large-space KNN with an AttributeError.
    assert "np.bitwise_count" in (REPO / "hela_cli" / "store" / "vector_index.py").read_text()
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    spec = next(d for d in deps if re.match(r"numpy\b", d))
    low = re.search(r">=\s*(\d+)", spec)
    assert low and int(low.group(1)) >= 2, spec
