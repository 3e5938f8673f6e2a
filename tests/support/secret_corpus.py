"""A corpus of secret shapes, and of ordinary log lines, for the redactor's tests and benchmark.

The shapes follow the public rule sets of gitleaks (config/gitleaks.toml: a prefixed token, or a
vendor keyword followed by a value of a given alphabet and length) and Yelp's detect-secrets (its
plugins: AWS, Artifactory, Azure storage, Discord, Mailchimp, Telegram, Twilio, ..., and the keyword
detector's word list, other languages included), plus the shapes of issue 15 (options, URLs with
`@` and `/` in the password, PHP define, XML, redis requirepass, psk, LDAP bindpw, ...). Values are
random per run from a seeded generator: the tests never meet a value written down beforehand.
Client and account *identifiers* in gitleaks' set (numeric `*-client-id` rules) are left out: they
name an account, they do not open it.
"""

from __future__ import annotations

import base64
import json
import string
from dataclasses import dataclass
from typing import Any, Sequence

from appliance.eval.records import CANARY_WINDOW, canary_windows

from support import secret_corpus_more as more
from support.secret_shapes import ALNUM, B64, HEX, KEYWORD_RULES, LOWNUM, PREFIXED, SECRET_KEYS, SUFFIXES, Gen


@dataclass(frozen=True)
class Secret:
    shape: str  # the rule it follows, e.g. "gitleaks:github-pat"
    key: str | None  # the key it is assigned to, None for a bare token found by its shape
    value: str


def password(g: Gen) -> str:
    """A human-ish password with the characters that broke the old redactor (: = ; & , @ /)."""
    return g.s(ALNUM, 6) + g.rng.choice(":=;&,@/!#%^*") + g.s(ALNUM, 3) + g.rng.choice(":=;&,@/") + g.s(ALNUM + "-_", 4)


def secrets(seed: int = 15) -> list[Secret]:
    """Every shape once, with fresh values."""
    g = Gen(seed)
    out = [Secret(f"gitleaks:{rule}" if ":" not in rule else rule, None, make(g)) for rule, make in PREFIXED]
    out += [Secret(f"gitleaks:{rule}", f"{vendor}_{g.rng.choice(SUFFIXES)}", make(g)) for rule, vendor, make in KEYWORD_RULES]
    out += [Secret(f"detect-secrets:keyword:{key}", key, password(g)) for key in SECRET_KEYS]
    return out


# --- the secrets placed in files of each format ------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    shape: str
    fmt: str
    text: str  # one or more lines, as they stand in a file of that format
    canaries: tuple[str, ...]  # what must never be shown (any 12-character stretch of it)


NEUTRAL = "note"  # a key that names nothing secret: a bare token must be found by its shape


def _line(fmt: str, key: str | None, value: str, i: int) -> str:
    k = key or NEUTRAL
    upper = k.upper().replace("-", "_")
    if fmt == "log":
        return f"2026-12-01T10:{i % 60:02d}:{i * 7 % 60:02d}Z app[{1000 + i}]: INFO loaded {k}={value} for tenant acme"
    if fmt == "env":
        return f"{upper}={value}" if i % 2 else f'export {upper}="{value}"'
    if fmt == "yaml":
        return f'  {k}: "{value}"' if i % 2 else f"  {k}: {value}"
    if fmt == "json":
        return f'  "{k}": "{value}",'
    if fmt == "ini":
        return f"{k} = {value}"
    if fmt == "xml":
        return f'  <add key="{k}" value="{value}" />' if i % 2 else f"  <{k}>{value}</{k}>"
    if fmt == "php":
        return f"define('{upper}', '{value}');" if i % 2 else f"$config['{k}'] = '{value}';"
    if fmt == "history":
        if key is None:
            return f"echo {value} | tee /tmp/out.txt"
        return f"export {upper}='{value}'" if i % 2 else f"deploy --{k}={value} --region eu-west-1"
    if fmt == "url":
        if key is None:
            return f"GET https://api.example.com/v1/items?code={value}&page=2 HTTP/1.1"
        return f"POST https://hooks.example.com/notify?{k}={value} 204"
    if fmt == "cmdline":
        if key is None:
            return f"/usr/bin/uploader --verbose {value}"
        return f"/usr/bin/app --{k} {value} --port 8080" if i % 2 else f"/usr/bin/app --{k}={value}"
    raise ValueError(fmt)


LINE_FORMATS = ("log", "env", "yaml", "json", "ini", "xml", "php", "history", "url", "cmdline")


def _pem(g: Gen, name: str, lines: int = 12, width: int = 64) -> tuple[str, tuple[str, ...]]:
    body = [g.s(B64, width) for _ in range(lines)] + [g.s(B64, 20) + "=="]
    return "\n".join([f"-----BEGIN {name}-----", *body, f"-----END {name}-----"]), tuple(body)


def _special(g: Gen) -> list[Entry]:
    """Shapes that belong to one format (issue 15's list, key blocks, multi-line values)."""
    out: list[Entry] = []

    def add(shape: str, fmt: str, text: str, *canaries: str) -> None:
        out.append(Entry(shape, fmt, text, canaries))

    pw = [password(g) for _ in range(40)]
    add("curl-auth-user", "history", f"curl -u admin:{pw[0]} https://api.example.com/v1/me", pw[0])
    add("curl-auth-user-long", "history", f"curl -s --user deploy:{pw[1]} https://api.example.com", pw[1])
    tok = g.s(ALNUM, 40)
    add("curl-auth-header", "history", f'curl -H "Authorization: Bearer {tok}" https://api.example.com', tok)
    add("php-define-db-password", "php", f"define('DB_PASSWORD', '{pw[2]}');", pw[2])
    add("xml-password-tag", "xml", f"  <password>{pw[3]}</password>", pw[3])
    add("nuget-config-password", "xml", f'  <add key="ClearTextPassword" value="{pw[4]}" />', pw[4])
    add("xml-property-password", "xml", f'  <property name="hibernate.connection.password" value="{pw[5]}"/>', pw[5])
    add("redis-requirepass", "ini", f"requirepass {pw[6]}", pw[6])
    add("redis-masterauth", "ini", f"masterauth {pw[7]}", pw[7])
    add("ldap-bindpw", "ini", f"bindpw {pw[8]}", pw[8])
    add("ldap-bindpw-upper", "ini", f"BINDPW {pw[9]}", pw[9])
    add("wpa-psk", "ini", f'  psk="{pw[10]}"', pw[10])
    add("netrc", "ini", f"machine api.example.com login deploy password {pw[11]}", pw[11])
    add("keepalived-auth-pass", "ini", f"    auth_pass {pw[12]}", pw[12])
    add("contrasena-es", "ini", f"contraseña={pw[13]}", pw[13])
    half1, half2 = g.s(B64, 20), g.s(B64, 20)
    add("split-quoted-two-lines", "env", f'DB_PASSWORD="{half1}\n{half2}"', half1, half2)
    add("split-wrapped-value", "ini", f"aws_secret_access_key = {half2}\n  {half1}", half1, half2)
    a, b = g.s(ALNUM, 16), g.s(ALNUM, 16)
    add("split-backslash", "history", f"export API_TOKEN={a}\\\n{b}", a, b)
    add("yaml-block-scalar", "yaml", f"password: |\n  {a}\n  {b}\nuser: app", a, b)
    add("json-value-next-line", "json", f'  "client_secret":\n    "{b}{a}",', b + a)
    add("log-authorization-header", "log", f"2026-12-01 10:00:00 proxy: Authorization: Basic {base64.b64encode(f'bob:{a}'.encode()).decode()}",
        base64.b64encode(f"bob:{a}".encode()).decode())
    add("log-cookie-header", "log", f"2026-12-01 10:00:01 proxy: Cookie: sessionid={tok[:32]}; csrftoken={tok[8:]}", tok[:32], tok[8:])
    add("mysql-p-glued", "cmdline", f"mysql -u root -p{pw[14]} shop", pw[14])
    add("sshpass", "cmdline", f"sshpass -p {pw[15]} ssh admin@10.0.0.5", pw[15])
    add("redis-cli-a", "cmdline", f"redis-cli -h cache -a {pw[16]} ping", pw[16])
    add("openssl-passin", "cmdline", f"openssl rsa -in key.pem -passin pass:{pw[17]}", pw[17])
    add("htpasswd-b", "history", f"htpasswd -b /etc/nginx/.users bob {pw[18]}", pw[18])
    add("smbclient-user-percent", "history", f"smbclient //nas/share -U bob%{pw[19]}", pw[19])
    add("option-space-password", "cmdline", f"backup --password {pw[20]} --verbose", pw[20])
    add("option-equals-token", "log", f"2026-12-01 10:00:02 runner: exec worker --token={tok} --api_key={a}", tok, a)
    add("url-password-at-slash", "url", f"DATABASE_URL=postgres://app:{pw[21]}@db.internal:5432/prod", pw[21])
    add("url-password-in-log", "log", f"2026-12-01 10:00:03 app: connecting to amqp://svc:{pw[22]}@mq.internal:5672/vhost", pw[22])
    add("git-credential-url", "history", f"git clone https://x-access-token:{tok}@github.com/acme/app.git", tok)
    add("connection-string", "ini", f"ConnectionString=Server=db;User Id=sa;Password={pw[23]};Encrypt=true", pw[23])
    add("docker-login-p", "history", f"docker login -u bob -p {pw[26]} registry.example.com", pw[26])
    add("ldapsearch-w", "history", f"ldapsearch -x -D cn=admin,dc=example -w {pw[27]} -b dc=example", pw[27])
    add("sqlcmd-P", "cmdline", f"sqlcmd -S db -U sa -P {pw[28]} -Q 'select 1'", pw[28])
    add("echo-sudo-S", "history", f"echo '{pw[29]}' | sudo -S apt-get update", pw[29])
    add("redis-config-set", "history", f"redis-cli CONFIG SET requirepass {pw[30]}", pw[30])
    add("key-value-pair-line", "ini", f"ssl.key.password {pw[31]}", pw[31])
    key_id = g.s(HEX, 40)
    add("gcp-private-key-id", "json", f'  "private_key_id": "{key_id}",', key_id)
    return out + _key_blocks(g, pw)


def _key_blocks(g: Gen, pw: list[str]) -> list[Entry]:
    """Private key blocks of every format, and base64-carried credentials."""
    out: list[Entry] = []

    def add(shape: str, fmt: str, text: str, *canaries: str) -> None:
        out.append(Entry(shape, fmt, text, canaries))

    pem, body = _pem(g, "PRIVATE KEY", 4)
    add("gcp-service-account-private-key", "json", '  "private_key": "' + pem.replace("\n", "\\n") + '\\n",', *body)
    for name in ("RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY",
                 "PGP PRIVATE KEY BLOCK"):
        text, body = _pem(g, name)
        add(f"key-block:{name.lower().replace(' ', '-')}", "keys", text, *body)
    ssh2 = [g.s(B64, 70) for _ in range(8)]
    add("key-block:ssh2-encrypted", "keys", "\n".join(["---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----",
                                                       'Comment: "rsa-key-20261201"', *ssh2,
                                                       "---- END SSH2 ENCRYPTED PRIVATE KEY ----"]), *ssh2)
    putty = [g.s(B64, 64) for _ in range(6)]
    add("key-block:putty", "keys", "\n".join(["PuTTY-User-Key-File-3: ssh-ed25519", "Encryption: none",
                                              "Comment: ed25519-key", "Public-Lines: 2", "AAAAC3NzaC1lZDI1NTE5AAAAI",
                                              "Private-Lines: 6", *putty, f"Private-MAC: {g.s(HEX, 64)}"]), *putty)
    data = base64.b64encode(pw[24].encode()).decode()
    add("kubernetes-secret-yaml", "yaml", f"kind: Secret\ndata:\n  db-password: {data}\n  tls.key: {g.s(B64, 64)}", data)
    auth = base64.b64encode(f"robot:{pw[25]}".encode()).decode()
    add("docker-config-auth", "json", f'  "auths": {{"registry.example.com": {{"auth": "{auth}"}}}},', auth)
    return out


def entries(seed: int = 15) -> list[Entry]:
    """Every line shape in every line format, then the format-specific shapes."""
    out = []
    for i, secret in enumerate(secrets(seed)):
        for fmt in LINE_FORMATS:
            canary = secret.value.removeprefix("https://")  # "https://hook" is in ordinary URLs too
            out.append(Entry(secret.shape, fmt, _line(fmt, secret.key, secret.value, i), (canary,)))
    return out + _special(Gen(seed + 1)) + more.entries(Gen(seed + 2), Entry)


def ordinary_config_lines(n: int = 2_000, seed: int = 8) -> list[str]:
    """Configuration, SQL, protocol and command lines with no secret (secret_corpus_more.py)."""
    return more.ordinary_config_lines(n, seed)


# --- ordinary log lines: what the redactor must leave readable ----------------------------------------

def ordinary_lines(n: int = 10_000, seed: int = 7) -> list[str]:
    """Log lines of the kinds a troubleshooting session reads (syslog, kernel, sshd, systemd, nginx,
    postgres, docker, Kubernetes, Java and Python traces, package managers, git), full of paths,
    hashes (sha256, git SHAs, ssh fingerprints, package integrity), UUIDs, versions, times and
    addresses: none of them a secret."""
    g = Gen(seed)
    r = g.rng
    words = ["worker", "cache", "queue", "billing", "auth", "session", "api", "sync", "backup", "indexer", "mailer"]
    paths = ["/var/lib/docker/overlay2/{h}/merged", "/usr/lib/x86_64-linux-gnu/libssl.so.3", "/home/{u}/projects/{w}/src/main.py",
             "/etc/nginx/sites-enabled/{w}.conf", "/var/log/{w}/{w}.log", "/opt/{w}/releases/{v}/bin/{w}",
             "/usr/share/doc/python3-{w}/README.Debian", "C:\\Program Files\\{W}\\{W}.exe", "src/{w}/handlers/{W}Handler.java"]

    def ip() -> str:
        return f"{r.choice([10, 172, 192, 203])}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}"

    def stamp() -> str:
        return f"2026-12-01T{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{r.randint(0, 999):03d}Z"

    def fill(template: str) -> str:
        w = r.choice(words)
        makers = dict(
            h=lambda: g.s(HEX, 64), sha1=lambda: g.s(HEX, 40), short=lambda: g.s(HEX, 7), uuid=g.uuid, ip=ip, ip2=ip,
            port=lambda: r.randint(1024, 65535), pid=lambda: r.randint(2, 99999),
            v=lambda: f"{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 99)}", t=stamp, w=lambda: w,
            W=w.capitalize, u=lambda: r.choice(["alice", "bob", "deploy", "www-data"]), ms=lambda: r.randint(1, 9999),
            n=lambda: r.randint(0, 10 ** 6),
            path=lambda: r.choice(paths).format(h=g.s(HEX, 64), u="bob", w=w, W=w.capitalize(),
                                                v=f"{r.randint(1, 9)}.{r.randint(0, 9)}"),
            fp=lambda: g.s(B64, 43), integ=lambda: g.s(B64, 86) + "==",
            pod=lambda: f"{w}-{g.s(LOWNUM, 10)}-{g.s(LOWNUM, 5)}",
            mac=lambda: ":".join(g.s(HEX, 2) for _ in range(6)), ipv6=lambda: ":".join(g.s(HEX, 4) for _ in range(8)),
        )
        # only the template's own fields are drawn (each once, however often it appears)
        return template.format(**{name: makers[name]() for _, name, _, _ in string.Formatter().parse(template) if name})

    templates = [
        "{t} host {w}[{pid}]: INFO request id={uuid} path=/api/v1/{w}/{n} status=200 took {ms}ms",
        "{t} host kernel: [{n}.{ms}] EXT4-fs (sda1): mounted filesystem {uuid} r/w with ordered data mode",
        "{t} host sshd[{pid}]: Accepted publickey for {u} from {ip} port {port} ssh2: ED25519 SHA256:{fp}",
        "{t} host sshd[{pid}]: Failed password for invalid user admin from {ip} port {port} ssh2",
        "{t} host systemd[1]: Started {W} service ({path}) with main PID {pid}.",
        "{ip} - - [01/Dec/2026:10:{ms:0>4}] \"GET /static/{w}.{short}.js HTTP/1.1\" 200 {n} \"-\" \"Mozilla/5.0 (X11; Linux x86_64)\"",
        "{t} postgres[{pid}]: LOG:  checkpoint complete: wrote {n} buffers; sync files={ms}, longest={ms}.123 s",
        "{t} postgres[{pid}]: FATAL:  password authentication failed for user \"{u}\"",
        "{t} dockerd[{pid}]: level=info msg=\"pulling image\" image=registry.example.com/{w}:{v} digest=sha256:{h}",
        "{t} kubelet[{pid}]: I1201 pod=\"default/{pod}\" container={w} containerID=containerd://{h} status=Running",
        "{t} {w}: git checkout {sha1} (HEAD -> main, tag: v{v}) merged #{n} {short}",
        "  at com.example.{w}.{W}Service.handle({W}Service.java:{ms}) ~[{w}-{v}.jar:{v}]",
        "  File \"{path}\", line {ms}, in {w}_handler",
        "{t} npm[{pid}]: added {w}@{v} integrity sha512-{integ} resolved https://registry.npmjs.org/{w}/-/{w}-{v}.tgz",
        "{t} pip[{pid}]: Successfully installed {w}-{v} (sha256={h})",
        "{t} host dhclient[{pid}]: DHCPACK of {ip} from {ip2} (xid=0x{short}) on eth0 {mac}",
        "{t} host NetworkManager[{pid}]: <info> device (wlan0): address {ipv6} added, lifetime {n}s",
        "{t} host CRON[{pid}]: ({u}) CMD (/usr/local/bin/{w}-rotate --keep 7 {path})",
        "{t} {w}[{pid}]: WARN cache miss ratio {ms}/{n} for key prefix {w}:{n} (session store ok)",
        "{t} {w}[{pid}]: ERROR upstream {ip}:{port} timed out after {ms} ms (attempt 3/5), trace_id={short}{short}",
        "{t} apt[{pid}]: Unpacking lib{w}3:amd64 ({v}-1ubuntu0.{n}) over ({v}-1) sha1 {sha1}",
        "{t} host auditd[{pid}]: type=USER_AUTH msg=audit({n}.{ms}:{pid}): pid={pid} uid=0 auid={ms} res=success",
        "{t} {w}[{pid}]: DEBUG token bucket refilled: {n} tokens, rate={ms}/s, password policy min_length=12",
        "{t} {w}[{pid}]: INFO loaded config {path} (mtime {t}, {n} bytes, checksum md5:{short}{short}{short}{short})",
    ]
    return [fill(r.choice(templates)) for _ in range(n)]


def leaks(entries: Sequence[Entry], shown: Any) -> list[str]:
    """The entries of which any 12-character stretch (records.canary_windows) is in `shown` (a text,
    or data shown as JSON)."""
    text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False)
    grams = {text[i:i + CANARY_WINDOW] for i in range(len(text) - CANARY_WINDOW + 1)}
    return [f"{e.shape} ({e.fmt})" for e in entries
            if any((w in grams) if len(w) == CANARY_WINDOW else (w in text) for c in e.canaries for w in canary_windows(c))]
