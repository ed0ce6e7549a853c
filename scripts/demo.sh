#!/usr/bin/env bash
# The hela demo: ingest the sample conversation into a fresh demo database, ask questions offline.
set -euo pipefail
cd "$(dirname "$0")/.."
HELA=${HELA:-.venv/bin/hela}
export HELA_DB="$PWD/demo/hela-demo.db"
rm -f "$HELA_DB" "$HELA_DB-wal" "$HELA_DB-shm"

echo "== hela models list"
$HELA models list
echo
echo "== hela ingest sample_data/conversation.json (idempotent: the second run adds nothing)"
$HELA ingest sample_data/conversation.json
$HELA ingest sample_data/conversation.json
echo
echo "== hela spaces"
$HELA spaces
echo
python_bin=$(dirname "$HELA")/python
mapfile -t questions < <("$python_bin" -c 'import json
for item in json.load(open("sample_data/questions.json")): print(item["question"])')
for q in "${questions[@]}"; do
  echo "== hela ask \"$q\" --space demo"
  $HELA ask "$q" --space demo
  echo
done
last="${questions[-1]}"
echo "== retrieval trace for \"$last\" (--explain --no-llm --no-learn)"
$HELA ask "$last" --space demo --explain --no-llm --no-learn
echo
echo "== hela add: Jonas says something new (written now, one memory); a recall then finds it"
$HELA add -s demo --speaker Jonas --id live-1 "My sister Clara just moved to Lyon to study architecture"
$HELA ask "Where did Jonas's sister move?" --space demo --no-llm --no-learn --json | "$python_bin" -c 'import json, sys
for m in json.load(sys.stdin)["memories"][:3]: print(m["id"], m["speaker"] + ":", m["text"])'
