"""The redaction corpus (issue 40): real-world shapes of secrets in what a developer types and an agent runs,
each redacted with its context kept, and tricky non-secrets left byte-identical.

Every value below is made up in the real format (none is a live credential). A row is
``(text, secrets that must be gone, context that must stay)``.
"""

from __future__ import annotations

import pytest

from hela_cli.text.redact import redact

PW = "Xy9secretPass"
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPL3KEY"
RSA = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq7BFUAyJ0vB2Yl2nE0b9Qm1Jx4lW0N8ZzF3T0s5gD0sUuP5nB2g\n"
       "c2sFv9cTq8Lk2Zy7Xw6Vu5Ts4Rq3Po2Nm1Lk0Ji9Hg8Fe7Dc6Ba5\n-----END RSA PRIVATE KEY-----")

CORPUS: list[tuple[str, list[str], list[str]]] = [
    # ---- shell environment (the cases first)
    (f"export PGPASSWORD={PW}", [PW], ["export PGPASSWORD=[REDACTED:password]"]),
    ("AUTHTOKEN=abcd1234efgh5678 ./run.sh", ["abcd1234efgh5678"], ["AUTHTOKEN=", "./run.sh"]),
    ("DBPASS=hunter2pass make migrate", ["hunter2pass"], ["DBPASS=[REDACTED:password]", "make migrate"]),
    (f"PGPASSWORD={PW} psql -h db -U app -p 5432 app", [PW], ["psql -h db -U app -p 5432 app"]),
    (f"MYSQL_PWD={PW} mysql -u root", [PW], ["MYSQL_PWD=[REDACTED:password]", "mysql -u root"]),
    ("export DB_PASS='p@ss w0rd!'", ["p@ss w0rd!"], ["export DB_PASS='[REDACTED:password]'"]),
    ("REDISCLI_AUTH=r3disS3cret redis-cli -p 6380", ["r3disS3cret"], ["REDISCLI_AUTH=", "-p 6380"]),
    ('$env:DB_PASSWORD = "W1nd0wsPw!"', ["W1nd0wsPw!"], ["$env:DB_PASSWORD = "]),
    (f"docker run -e POSTGRES_PASSWORD={PW} -p 5432:5432 postgres:16", [PW],
     ["-e POSTGRES_PASSWORD=[REDACTED:password]", "-p 5432:5432 postgres:16"]),
    ("docker build --build-arg NPM_TOKEN=npmT0kenValue42 .", ["npmT0kenValue42"], ["--build-arg NPM_TOKEN="]),
    # ---- .env files
    (f"DATABASE_URL=postgres://app:{PW}@db:5432/app\nDEBUG=true\nPORT=8000", [PW],
     ["postgres://app:[REDACTED:url-password]@db:5432/app", "DEBUG=true\nPORT=8000"]),
    ("SECRET_KEY=django-insecure-7h#k2!x9zq\nALLOWED_HOSTS=*", ["django-insecure-7h#k2!x9zq"],
     ["SECRET_KEY=", "ALLOWED_HOSTS=*"]),
    ('JWT_SECRET="a-long-random-signing-string-42"', ["a-long-random-signing-string-42"], ["JWT_SECRET="]),
    ("SMTP_PASSWORD=mailPw2024", ["mailPw2024"], ["SMTP_PASSWORD="]),
    ("AWS_SECRET_ACCESS_KEY=" + AWS_SECRET, [AWS_SECRET], ["AWS_SECRET_ACCESS_KEY="]),
    # .env values holding , ; & ( { (unquoted: the value runs to the end of the line or the next whitespace)
    ("DB_PASSWORD=ab,cd;ef&gh\nDEBUG=true", ["ab,cd;ef&gh", "cd;ef", "ef&gh", "gh\n"],
     ["DB_PASSWORD=[REDACTED:password]\nDEBUG=true"]),
    ("export API_TOKEN=tok;en&val,ue42 && ./deploy.sh", ["tok;en", "en&val", "ue42"],
     ["export API_TOKEN=[REDACTED:secret] && ./deploy.sh"]),
    ("cd app && export PGPASSWORD=Xy9,sec;ret psql -h db", ["Xy9", "sec;ret"],
     ["export PGPASSWORD=[REDACTED:password] psql -h db"]),
    ("  SECRET_KEY=k(3y){x}[1]<2>\nPORT=8000", ["k(3y)", "{x}[1]<2>"], ["  SECRET_KEY=[REDACTED:secret]\nPORT=8000"]),
    ("environment:\n  - POSTGRES_PASSWORD=pg,pw;42&x", ["pg,pw", "pw;42", "42&x"],
     ["  - POSTGRES_PASSWORD=[REDACTED:password]"]),
    # ---- libpq keyword strings, the closing quote accepted
    (f'psql "host=db user=app password={PW}"', [PW], ['psql "host=db user=app password=[REDACTED:password]"']),
    (f"conn = psycopg.connect('dbname=x user=app password={PW}')", [PW], ["psycopg.connect('dbname=x user=app "]),
    (f"pg_dump 'host=db port=5432 dbname=app password={PW} sslmode=require'", [PW], ["sslmode=require'"]),
    # ---- connection strings, every common driver syntax
    (f"postgresql://app:{PW}@db.internal:5432/app", [PW], ["postgresql://app:", "@db.internal:5432/app"]),
    (f"postgresql+psycopg2://app:{PW}@localhost/app", [PW], ["postgresql+psycopg2://app:"]),
    (f"mysql://root:{PW}@127.0.0.1:3306/shop", [PW], ["mysql://root:", "@127.0.0.1:3306/shop"]),
    (f"mysql+pymysql://root:{PW}@db/shop?charset=utf8mb4", [PW], ["charset=utf8mb4"]),
    (f"mongodb+srv://admin:{PW}@cluster0.ab1cd.mongodb.net/?retryWrites=true", [PW], ["@cluster0.ab1cd.mongodb.net"]),
    (f"mongodb://admin:{PW}@h1:27017,h2:27017/db?replicaSet=rs0", [PW], ["replicaSet=rs0"]),
    (f"redis://:{PW}@cache:6379/0", [PW], ["redis://:[REDACTED:url-password]@cache:6379/0"]),
    (f"rediss://default:{PW}@cache.example.com:6380", [PW], ["rediss://default:"]),
    (f"amqp://guest:{PW}@rabbit:5672/vhost", [PW], ["amqp://guest:"]),
    (f"sqlalchemy.url = mssql+pyodbc://sa:{PW}@dsn", [PW], ["mssql+pyodbc://sa:"]),
    ("postgres://app:p@ss@word9@db/app", ["p@ss@word9", "ss@word9"], ["@db/app"]),
    (f"jdbc:postgresql://db:5432/app?user=app&password={PW}&ssl=true", [PW], ["user=app&password=", "&ssl=true"]),
    (f"jdbc:sqlserver://db:1433;databaseName=app;user=sa;password={PW};encrypt=true", [PW],
     ["user=sa;password=[REDACTED:password];encrypt=true"]),
    (f"jdbc:mysql://root:{PW}@db:3306/app", [PW], ["jdbc:mysql://root:"]),
    (f"Driver={{ODBC Driver 18 for SQL Server}};Server=db;Uid=sa;Pwd={PW};", [PW], ["Uid=sa;Pwd=[REDACTED:password];"]),
    (f"DRIVER={{PostgreSQL}};SERVER=db;UID=app;PWD={PW};", [PW], ["UID=app;PWD="]),
    (f"Server=tcp:db,1433;User ID=sa;Password={PW};Encrypt=True", [PW], ["Password=[REDACTED:password];Encrypt=True"]),
    # ---- CLI flags
    ("mysql -uroot -pS3cretPw db", ["S3cretPw"], ["mysql -uroot -p[REDACTED:password] db"]),
    ("mysqldump -h db -u root -p'S3cret Pw' shop > shop.sql", ["S3cret Pw"], ["mysqldump -h db -u root -p", "> shop.sql"]),
    ("mysql --user=root --password S3cretPw shop", ["S3cretPw"], ["--password [REDACTED:password] shop"]),
    ("mysql --user=root --password=S3cretPw shop", ["S3cretPw"], ["--password=[REDACTED:password] shop"]),
    ("curl -u admin:S3cretPw https://api.example.com/v1", ["S3cretPw"], ["curl -u admin:", "https://api.example.com/v1"]),
    ("curl --user deploy:S3cretPw -X POST https://ci.example.com", ["S3cretPw"], ["--user deploy:"]),
    ("curl -H 'Authorization: Bearer 0aB1cD2eF3gH4iJ5kL6mN7oP8' https://api.x.io", ["0aB1cD2eF3gH4iJ5kL6mN7oP8"],
     ["Authorization: Bearer", "https://api.x.io"]),
    ("curl -H 'X-API-Key: 9f8e7d6c5b4a3921' https://api.x.io", ["9f8e7d6c5b4a3921"], ["X-API-Key: "]),
    ("redis-cli -h cache -p 6379 -a S3cretPw ping", ["S3cretPw"], ["-p 6379 -a [REDACTED:password] ping"]),
    ("redis-cli --pass S3cretPw info", ["S3cretPw"], ["redis-cli --pass "]),
    ("git clone https://oauth2:glpatT0kenAbc123@gitlab.example.com/team/app.git", ["glpatT0kenAbc123"],
     ["https://oauth2:", "@gitlab.example.com/team/app.git"]),
    ("git remote set-url origin https://jdoe:gh0TokenValue99@github.com/acme/api.git", ["gh0TokenValue99"],
     ["git remote set-url origin https://jdoe:"]),
    ("echo S3 | docker login -u bot -p S3cretPw registry.example.com", ["S3cretPw"], ["-u bot -p", "registry.example.com"]),
    ("docker login --username bot --password S3cretPw ghcr.io", ["S3cretPw"], ["--username bot --password", "ghcr.io"]),
    (f"aws configure set aws_secret_access_key {AWS_SECRET}", [AWS_SECRET], ["aws configure set aws_secret_access_key "]),
    ("aws configure set profile.prod.aws_session_token FwoGZXIvYXdzEJr2SessTok3n", ["FwoGZXIvYXdzEJr2SessTok3n"],
     ["profile.prod.aws_session_token "]),
    ("gcloud sql users set-password root --instance=db1 --password=S3cretPw", ["S3cretPw"], ["--instance=db1 --password="]),
    ("curl -H \"Authorization: Bearer ya29.a0AfB_byC1d2E3f4G5h6I7j8K9\" https://www.googleapis.com", ["ya29.a0AfB_byC1d2E3f4G5h6I7j8K9"],
     ["https://www.googleapis.com"]),
    (f"kubectl --server=https://k8s:6443 --token={JWT} get pods", [JWT], ["--server=https://k8s:6443", "get pods"]),
    ("kubectl config set-credentials admin --username=admin --password=S3cretPw", ["S3cretPw"], ["--username=admin --password="]),
    ("kubectl create secret generic db --from-literal=password=S3cretPw", ["S3cretPw"], ["--from-literal=password="]),
    ("kubectl --token abcdEFGH12345678ijkl get ns", ["abcdEFGH12345678ijkl"], ["kubectl --token", "get ns"]),
    ("sshpass -p S3cretPw ssh -p 2222 deploy@host", ["S3cretPw"], ["ssh -p 2222 deploy@host"]),
    ("mongosh -u admin -p S3cretPw --authenticationDatabase admin", ["S3cretPw"], ["mongosh -u admin -p", "admin"]),
    ("openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:S3cretPw", ["S3cretPw"], ["-passout pass:"]),
    ("wget --http-user=bot --http-password=S3cretPw https://x.io/f", ["S3cretPw"], ["--http-user=bot --http-password="]),
    ("gh auth login --with-token <<< ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", ["ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"],
     ["gh auth login --with-token <<< "]),
    ("gh secret set DEPLOY_TOKEN --body gh0SecretBody77 --repo acme/api", ["gh0SecretBody77"], ["--repo acme/api"]),
    ("kubectl create secret generic app --from-literal=dsn=hostdb77pw --dry-run=client", ["hostdb77pw"],
     ["--from-literal=dsn=", "--dry-run=client"]),
    ("vault login s.Qx7v2Lm3q8Zr5Tn6Wk9Yp1", ["s.Qx7v2Lm3q8Zr5Tn6Wk9Yp1"], ["vault login "]),
    ("export VAULT_TOKEN=hvs.CAESIJ3x9mKq7Lp2Vn8Rt5Wz1Yb4Hc6Fd0Gs", ["hvs.CAESIJ3x9mKq7Lp2Vn8Rt5Wz1Yb4Hc6Fd0Gs"], ["VAULT_TOKEN="]),
    ("echo 'S3cretPw!' | docker login -u bot --password-stdin ghcr.io", ["S3cretPw!"], ["| docker login -u bot --password-stdin"]),
    ("echo S3cretPw | sudo -S apt-get update", ["S3cretPw"], ["| sudo -S apt-get update"]),
    ("az login -u me@acme.io -p S3cretPw --tenant acme", ["S3cretPw"], ["az login -u me@acme.io -p", "--tenant acme"]),
    ("sqlplus scott/Tiger2024@orcl @report.sql", ["Tiger2024"], ["sqlplus scott/", "@orcl @report.sql"]),
    ("smbclient //fs/share -U alice%S3cretPw -c ls", ["S3cretPw"], ["-U alice%", "-c ls"]),
    ("consul kv get -token=c0nsulT0ken99 app/config", ["c0nsulT0ken99"], ["-token=", "app/config"]),
    ("influx -username admin -password S3cretPw -execute 'SHOW DATABASES'", ["S3cretPw"], ["-username admin -password"]),
    ("services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: postgres\n      POSTGRES_DB: shop",
     ["POSTGRES_PASSWORD: postgres"], ["POSTGRES_PASSWORD: [REDACTED:password]", "POSTGRES_DB: shop"]),
    ("npm config set //registry.npmjs.org/:_authToken=abcd1234-ef56-7890-abcd-ef1234567890",
     ["abcd1234-ef56-7890-abcd-ef1234567890"], ["//registry.npmjs.org/:_authToken="]),
    ("terraform apply -var 'db_password=S3cretPw' -auto-approve", ["S3cretPw"], ["-var 'db_password=", "-auto-approve"]),
    ("export http_proxy=http://alice:S3cretPw@proxy.acme.io:3128", ["S3cretPw"], ["@proxy.acme.io:3128"]),
    ("mysql -h db -u root \\\n  -pS3cretPw shop", ["S3cretPw"], ["mysql -h db -u root \\\n  -p[REDACTED:password] shop"]),
    ('{"password": "ab\\"c9d\\"ef", "user": "app"}', ['ab\\"c9d', 'c9d\\"ef'], ['"user": "app"']),
    ('{"access_token": "' + "Zx9" * 100 + '"}', ["Zx9Zx9Zx9"], ['{"access_token": "[REDACTED:secret]"}']),
    # ---- code: quoted and unquoted
    ("api_key = s3cretvalue123", ["s3cretvalue123"], ["api_key = "]),
    ('client = OpenAI(api_key="sk-proj-abcDEF1234567890ghiJKL0987654321mnoPQR")',
     ["sk-proj-abcDEF1234567890ghiJKL0987654321mnoPQR"], ["client = OpenAI(api_key="]),
    ("password = 'correct horse battery staple'", ["correct horse battery staple"], ["password = '"]),
    ('const token = "tok_9a8b7c6d5e4f";', ["tok_9a8b7c6d5e4f"], ["const token = "]),
    # ---- JSON / YAML / INI config
    ('{"user": "app", "password": "Xy9secret!", "host": "db"}', ["Xy9secret!"], ['"user": "app"', '"host": "db"']),
    ('{"auths": {"ghcr.io": {"auth": "Ym90OlMzY3JldFB3MTIzNDU="}}}', ["Ym90OlMzY3JldFB3MTIzNDU="], ['"ghcr.io"']),
    ("database:\n  user: app\n  password: correcthorsebattery\n  host: db", ["correcthorsebattery"],
     ["user: app", "host: db", "password: [REDACTED:password]"]),
    ("secret: s3cr3tV4lue\nport: 8080", ["s3cr3tV4lue"], ["port: 8080"]),
    ("users:\n- name: admin\n  user:\n    token: kubeT0kenValue1234", ["kubeT0kenValue1234"], ["- name: admin"]),
    ("    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=", ["LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo="],
     ["client-key-data: "]),
    (f"[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = {AWS_SECRET}",
     ["AKIAIOSFODNN7EXAMPLE", AWS_SECRET], ["[default]", "aws_secret_access_key = "]),
    # ---- keys, tokens, JWTs
    (f"here:\n{RSA}\ndone", ["MIIEowIBAAKCAQEAq7BFUAyJ0vB2Yl2nE0b9", "c2sFv9cTq8Lk2Zy7Xw6Vu5"], ["here:\n", "\ndone"]),
    ('{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n'
     '-----END PRIVATE KEY-----\\n"}', ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"], ['"type": "service_account"']),
    (f"the session cookie is {JWT}", [JWT, JWT.split(".")[2]], ["the session cookie is "]),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", ["AbCdEfGhIjKlMnOpQrStUvWx"], []),
]

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
