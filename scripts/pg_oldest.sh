#!/usr/bin/env bash
# The oldest Postgres hela supports, for the Postgres tests: Debian's PostgreSQL 15 with pgvector 0.7.0 built
# from source (portably: OPTFLAGS="", not pgvector's default -march=native) into a private copy of the
# server tree, started on a Unix socket; prints the HELA_TEST_PG URL to run the tests against.
#   apt-get install postgresql-15 postgresql-server-dev-15
#   git clone https://github.com/pgvector/pgvector ~/pgvector      # any clone holding the tag
#   bash scripts/pg_oldest.sh ~/pgvector [v0.7.0] [15]
#   HELA_TEST_PG="$(tail -1 /tmp/hela-pg-oldest/url)" pytest tests/test_postgres*.py tests/test_pg_correct.py
set -euo pipefail
SRC=$1 TAG=${2:-v0.7.0} V=${3:-15}
R=/tmp/hela-pg-oldest
rm -rf "$R" && mkdir -p "$R/usr/lib/postgresql" "$R/usr/share/postgresql" "$R/src" "$R/sock"
cp -a "/usr/lib/postgresql/$V" "$R/usr/lib/postgresql/$V"       # the server finds share/ and lib/ relative to bin/
cp -a "/usr/share/postgresql/$V" "$R/usr/share/postgresql/$V"
git -C "$SRC" archive "$TAG" | tar -x -C "$R/src"
make -C "$R/src" -s OPTFLAGS="" PG_CONFIG="/usr/lib/postgresql/$V/bin/pg_config"
make -C "$R/src" -s install DESTDIR="$R" PG_CONFIG="/usr/lib/postgresql/$V/bin/pg_config"
user=$(id -un); [ "$user" = root ] && user=postgres     # the server refuses to run as root
chown -R "$user" "$R/sock"; mkdir -p "$R/data"; chown "$user" "$R/data"; chmod 700 "$R/data"
su "$user" -s /bin/sh -c "'$R/usr/lib/postgresql/$V/bin/initdb' -A trust -U postgres -D '$R/data' >/dev/null"
su "$user" -s /bin/sh -c "'$R/usr/lib/postgresql/$V/bin/pg_ctl' -w -D '$R/data' -l '$R/data/log' -o '-h \"\" -k $R/sock -p 5433' start"
echo "postgresql://postgres@/postgres?host=$R/sock&port=5433" | tee "$R/url"
