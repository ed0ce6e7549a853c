"""The redaction corpus (issue 40): real-world shapes of secrets in what a developer types and an agent runs,
each redacted with its context kept, and tricky non-secrets left byte-identical.

Every value is made up in the real format (none is a live credential). A row of ``CORPUS`` (tests/cases.py,
shared with tests/test_stored_line_secrets.py) is ``(text, secrets that must be gone, context that must
stay)``.
"""

from __future__ import annotations

import pytest

from hela_cli.text.redact import redact
from tests.cases import CORPUS

NOT_SECRETS = [
    "psql --password-file /etc/hela/pgpass -h db app",
    "docker login --password-stdin -u bot ghcr.io",
    'psql "host=db user=app password=$PGPASSWORD"',
    "DB_PASSWORD=${DB_PASS} ./run.sh",
    "psql -h db -p 5432 -U app app",
    "redis-cli -h cache -p 6379 ping",
    "ssh -p 2222 deploy@host.example.com",
    "psql -U app --password appdb",
    "export PATH=/usr/local/bin:$PATH",
    "export PWD=/home/dev/project OLDPWD=/home/dev",
    "export PWD=/srv/app;ls",
    "PWD=/home/me/a,b ls",
    "mysql -u root -p shop",
    "We need to review the password policy and token expiry before the launch.",
    "The key to this recipe is patience; the secret ingredient: cinnamon.",
    "git clone git@github.com:acme/api.git && git log --oneline",
    "curl -s https://api.example.com/v1/status | jq .",
    "kubectl get secret db -o jsonpath='{.data.password}' | base64 -d",
    "token = tokenizer.encode(text)\npassword = getpass.getpass()\nkey = sorted_keys[0]",
    "max_tokens = 4096\nsort_key = item.created_at\nnum_tokens = len(tokens)",
    "compass: north\nbypass: false",
    "aws configure set region eu-west-1",
    "openssl req -new -key server.key -out server.csr",
    "ls -la ~/.ssh && cat ~/.ssh/id_ed25519.pub",
    "see https://docs.example.com:8443/guide and http://localhost:3000",
    "for pass in range(3): run(pass_number=pass)",
    "The first pass of the compiler, then the second pass.",
    "password:\n  min_length: 12\n  require_digit: true",
    "echo done | tee -a build.log",
    "echo $DB_PASSWORD | docker login -u bot --password-stdin ghcr.io",
    "vault login -method=userpass username=alice",
    "sqlplus / as sysdba @scripts/setup.sql",
    "gh secret list --repo acme/api",
    "kubectl create secret generic app --from-file=./config.json",
    "az login --use-device-code",
    "go test -run TestToken -v ./...",
    "POSTGRES_DB: shop\nPOSTGRES_USER: app",
    "export GIT_ASKPASS=/usr/bin/true AUTH_BACKEND=ldap PASS_MAX_DAYS=99999",
    "export TOKENIZERS_PARALLELISM=false HF_TOKEN_PATH=/home/me/.cache/hf/token",
    'api_key = os.getenv("OPENAI_API_KEY")\nlogin(username="alice", password=password)',
    'redis-cli -a "$REDIS_PASSWORD" ping && docker login -u "$USER" -p "$TOKEN" ghcr.io',
    'curl -u "$USER:$TOKEN" https://api.x.io',
    "aws secretsmanager get-secret-value --secret-id prod/db --query SecretString",
    'headers = {"Authorization": f"Bearer {token}"}',
    'git commit -m "fix password reset flow" && pytest -k "token and not slow"',
    "password=getpass.getpass()\nkey=keys[0]\nDB_PASSWORD=${DB_PASS:-a,b}\nPORT=80,81",
    "    server = Server(name,\n        auth=AuthSettings(issuer_url=base, resource_server_url=None))",
    "export TOKEN_URL=a,b;c HF_TOKEN=$(cat ~/.hf;true)",
]


@pytest.mark.parametrize("text,secrets,kept", CORPUS)
def test_corpus_secret_gone_context_kept(text: str, secrets: list[str], kept: list[str]) -> None:
    out = redact(text)
    for s in secrets:
        assert s not in out, (s, out)
    for k in kept:
        assert k in out, (k, out)
    assert "[REDACTED:" in out
    assert redact(out) == out   # idempotent


def test_corpus_size() -> None:
    assert len(CORPUS) >= 60


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_not_a_secret_unchanged(text: str) -> None:
    assert redact(text) == text
