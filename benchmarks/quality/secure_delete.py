"""Does a deleted memory leave the file's bytes without a VACUUM? With ``PRAGMA secure_delete`` on (hela's
default on every connection) and off.

    python benchmarks/quality/secure_delete.py on|off

A space of 1,500 memories (the hash embedder of tests/conftest.py), a secret added after the first 700,
60 retrievals that learn (every fifth about the secret) each logged as an ask (those about the secret
quoting it in the answer); then ``Memory.delete`` of the secret. Prints the scrub report (``vacuumed``:
whether the byte search found a stale copy and the fallback VACUUM ran) and how often the secret and its
keyword occur in the database file and its WAL afterwards.
"""

import os
import random
import sys
import tempfile


import hela_cli.store.sqlite.connection as connection
from hela_cli.config import Config
from hela_cli.memory import Memory
from hela_cli.testing import HashEmbedder

secure = sys.argv[1:] != ["off"]
opened = connection.SqliteConnection._migrate


def migrate_then_pragma(self):
    opened(self)
    if not secure:
        self.db.execute("PRAGMA secure_delete=OFF")


connection.SqliteConnection._migrate = migrate_then_pragma
d = tempfile.mkdtemp()
cfg = Config(db=d + "/t.db")
m = Memory(cfg, embedder=HashEmbedder())
random.seed(1)
words = "apple river garden music travel office paper bread window mountain coffee yellow".split()
turns = [{"text": " ".join(random.choices(words, k=12)) + f" n{i}", "speaker": random.choice(["Ana", "Bo"])}
         for i in range(1500)]
m.add_many("s", turns[:700])
secret = "the vault code is QX-ZORBLAX-77-TANGERINE"
sid = m.add("s", secret, speaker="Ana")
m.add_many("s", turns[700:])
for i in range(60):
    q = "vault code tangerine zorblax" if i % 5 == 0 else " ".join(random.choices(words, k=3))
    r = m.retrieve(q, "s", learn=True)
    m.store.log_ask(m.store.require_space("s").id, q, "answer " + secret if i % 5 == 0 else "x",
                    [x["id"] for x in r.memories], 1)
rep = m.delete("s", [sid])
print("secure_delete", "on" if secure else "off", rep["scrub"], "asks deleted", rep["asks"])
m.close()
for f in [cfg.db, cfg.db + "-wal"]:
    b = open(f, "rb").read() if os.path.exists(f) else b""
    print(os.path.basename(f), len(b), "bytes; 'ZORBLAX':", b.count(b"ZORBLAX"), "'zorblax':", b.count(b"zorblax"))
