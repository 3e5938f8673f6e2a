"""The deny-list: which places hold secrets, by path, folder and file name (see docs/tools.md,
"Deny-list", for the sources). The path policy (paths.py) refuses them for every purpose; walkers
ask `secret_child` for each entry, so the checks are precompiled and work on strings.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

from appliance.tools.credential_paths import KNOWN_STORES, KnownStore

# Directory names that hold credentials, wherever they appear (any user's home, /root, /etc/skel).
DENY_DIR_NAMES = frozenset({
    ".ssh", ".gnupg", ".aws", ".kube", ".azure", ".password-store", ".mozilla", ".thunderbird",
    ".docker", "keyrings", "kwalletd", ".vault", ".terraform.d",
    # folders named for what they hold: services' and containers' secrets, systemd's credential stores
    "secrets", "credentials", "private",
})
DENY_DIR_GLOBS = ("credstore*",)  # systemd's /etc/credstore, /run/credstore.encrypted, ...
# Folders named `private` that hold evidence, not keys: systemd's DynamicUser= logs and caches
# (systemd.exec(5), LogsDirectory=, CacheDirectory=), read when a service fails.
PRIVATE_EVIDENCE = ("/var/log/private", "/var/cache/private")
# Consecutive directory names (a/b) that hold credentials or browser profiles.
DENY_DIR_PAIRS = frozenset({
    (".config", "gcloud"), (".config", "google-chrome"), (".config", "chromium"),
    (".config", "BraveSoftware"), (".config", "microsoft-edge"), (".config", "vivaldi"),
    (".config", "opera"), (".config", "gh"), (".config", "hub"),
    ("snap", "firefox"), ("snap", "chromium"),
})
# File names (globs, matched case-insensitively) that are keys or credential stores.
DENY_FILE_GLOBS = (
    ".netrc", "_netrc", ".pgpass", ".git-credentials", ".env", ".env.*", "*.env", ".my.cnf", ".pypirc",
    ".npmrc", ".vault-token", ".boto", ".s3cfg", ".dockercfg", ".htpasswd", "*.pem", "*.key", "*.p12",
    "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.keyring", "*.gpg", "*.asc", "*.ppk", "id_*",
    "*_rsa", "*_dsa", "*_ecdsa", "*_ed25519", "ssh_host_*_key", "*.keytab", "credentials",
    "credentials.json", "secrets.*", "*.secret", "wallet.dat", ".*_history", ".history", "shadow",
    "shadow-", "gshadow", "gshadow-", "opasswd", "sudoers", "sudoers.*", "master.key",
    # well-known secret files (see docs/tools.md, "Secret files", for the sources of this list)
    "shadow.*", "shadow~", "gshadow.*", "gshadow~", "chap-secrets", "pap-secrets", "srp-secrets", "sasl_passwd",
    "sasl_passwd.*", "sasldb2", "smbpasswd", "passdb.tdb", "secrets.tdb", "ipsec.secrets", "*.secrets", "rsyncd.secrets",
    "*.ovpn", "*.kdb", "*.psafe3", "*.agilekeychain", "*.keychain", "*.kwallet", "*.tfvars", "*.tfstate",
    "*.tfstate.backup", "sftp-config.json", "credentials.xml", "credentials.db", "adc.json", "otr.private_key",
    "pgpass.conf", ".mylogin.cnf", "debian.cnf", "cwallet.sso", "ewallet.p12", ".erlang.cookie", ".smbcredentials",
    "*.cred", "*.creds", "cifs-credentials*", ".fetchmailrc", "account.key", "*.account.key", "private_key.json",
    "passwd.client", ".vnc", "passwd.vnc", ".esmtprc", ".muttrc", "secret_token.rb", "dbeaver-data-sources.xml",
    "recentservers.xml", "filezilla.xml", ".git-credentials", "*.kdbx",
    # vault password files (ansible-vault(1) --vault-password-file) and DNSSEC/TSIG private keys (dnssec-keygen(8))
    ".vault_pass*", "vault_pass*", "*.vault_pass", "vault-password*", ".vault-password*", "K*.private",
)
# A file name under a folder of this name (its last folder): secret there, though not elsewhere.
DENY_IN_DIR = {
    "davfs2": ("secrets",), "openvpn": ("*auth*", "*pass*", "*cred*", "*.txt"), "client": ("*auth*.txt", "*pass*.txt"),
    "server": ("*auth*.txt",), "ppp": ("*-secrets",), "postfix": ("sasl_passwd*", "*_passwd*"), "samba": ("smbpasswd", "*.tdb"),
    "private": ("*.tdb",), "mosquitto": ("passwd", "pwfile", "*.pw", "*passwd*"), "dovecot": ("users", "passwd*", "*.passwd"),
    "exim4": ("passwd*",), "wireguard": ("*.conf",), "swanctl": ("*.conf",), "ca": ("account*",),
    "mysql": ("debian.cnf",), "rabbitmq": (".erlang.cookie",), "cyrus": ("sasldb*",), "courier": ("userdb*",),
    "vsftpd": ("*passwd*", "*users*"), "proftpd": ("*passwd*", "ftpd.passwd"), "pure-ftpd": ("pureftpd.passwd", "*.pdb"),
    "nginx": ("*passwd*", "*.htpasswd"), "apache2": ("*passwd*",), "httpd": ("*passwd*",), "icinga2": ("*.key",),
}
DENY_FILE_ALLOW = ("*.pub",)  # public halves of id_* keys are fine
# Whole paths (and everything under them).
DENY_PATHS = (
    "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd",
    "/etc/ssl/private", "/etc/krb5.keytab", "/proc/kcore", "/proc/kmsg", "/proc/kmem", "/proc/kpagecount",
    "/proc/kpageflags", "/proc/kpagecgroup", "/proc/sysrq-trigger", "/sys/kernel/debug",
    "/sys/kernel/security", "/sys/firmware/efi/efivars", "/var/lib/sss/secrets", "/root/.ssh",
    "/var/lib/polkit-1", "/etc/NetworkManager/system-connections", "/etc/wpa_supplicant",
    "/etc/wireguard", "/etc/ipsec.d/private", "/etc/swanctl/private", "/etc/letsencrypt/accounts", "/etc/letsencrypt/keys",
    "/etc/pki/tls/private", "/var/lib/samba/private", "/etc/davfs2/secrets", "/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets",
    "/etc/postfix/sasl_passwd", "/etc/ipsec.secrets", "/etc/rsyncd.secrets", "/etc/samba/smbpasswd", "/etc/shadow.bak",
)
# Per-process files that expose memory or the environment (secrets live in environments).
_PROC_SECRET = re.compile(
    r"^/proc/(?:\d+|self|thread-self)(?:/task/\d+)?/(?:mem|environ|pagemap|auxv|syscall|stack|"
    r"personality|clear_refs|map_files(?:/.*)?|fd(?:/.*)?|fdinfo(?:/.*)?|cwd(?:/.*)?|root(?:/.*)?)$"
)


_DENY_PATHS_RE = re.compile("^(?:" + "|".join(re.escape(p) for p in DENY_PATHS) + ")(?:/|$)")
_DENY_FILE_RE = re.compile("|".join(fnmatch.translate(g) for g in DENY_FILE_GLOBS), re.I)
_DENY_IN_DIR_RE = {folder: re.compile("|".join(fnmatch.translate(g) for g in globs), re.I) for folder, globs in DENY_IN_DIR.items()}
_DENY_FILE_ALLOW_RE = re.compile("|".join(fnmatch.translate(g) for g in DENY_FILE_ALLOW), re.I)
_DENY_DIR_GLOB_RE = re.compile("|".join(fnmatch.translate(g) for g in DENY_DIR_GLOBS), re.I)
_HOME = r"(?:/root|/home/[^/]+)"


def _components(parts) -> str:
    """Path components as a regex: `*` is any one component's worth of characters."""
    return "/".join(re.escape(part).replace(r"\*", "[^/]*") for part in parts)


def _store_regex(store: KnownStore) -> str:
    parts = store.path.rstrip("/").split("/")
    head = _HOME + "/" + _components(parts[1:]) if store.per_user else _components(parts)
    return head + ("(?:/|$)" if store.folder else "$")


def _tail_regex(stores) -> re.Pattern:
    """Matches "parent/name" (or "name") strings whose end is one of the stores' tails."""
    return re.compile("|".join(f"(?:^|/){_components(store.tail())}$" for store in stores))


_KNOWN_FULL = re.compile("^(?:" + "|".join(_store_regex(store) for store in KNOWN_STORES) + ")")
_KNOWN_FOLDER_TAIL = _tail_regex([store for store in KNOWN_STORES if store.folder])
_KNOWN_FILE_TAIL = _tail_regex([store for store in KNOWN_STORES if not store.folder])
_TAIL_SOURCE = {store.tail(): store for store in KNOWN_STORES}


def _known_store(text: str) -> str | None:
    """Why `text` is (inside) a well-known credential store, in words with the source, or None."""
    if not _KNOWN_FULL.match(text):
        return None
    for store in KNOWN_STORES:
        if re.match(_store_regex(store), text):
            return f"{store.path} is a credential store ({store.source})"
    return None


def _store_by_tail(pair: str, folder: bool) -> str | None:
    """Why "parent/name" ends like a known store's copy, or None."""
    pattern = _KNOWN_FOLDER_TAIL if folder else _KNOWN_FILE_TAIL
    if not pattern.search(pair):
        return None
    for store in KNOWN_STORES:
        if store.folder == folder and re.search(f"(?:^|/){_components(store.tail())}$", pair):
            return f"{'/'.join(store.tail())} is where a credential store lives ({store.path}: {store.source})"
    return None


def _secret_folder(parent: str, name: str) -> str | None:
    """Why a folder called `name` (inside `parent`) holds credentials by its name alone, or None."""
    if name == "private" and f"{parent.rstrip('/')}/{name}" in PRIVATE_EVIDENCE:
        return None
    if name in DENY_DIR_NAMES or _DENY_DIR_GLOB_RE.match(name):
        return f"a folder named {name} holds credentials"
    return None


def secret_reason(path: Path | str) -> str | None:
    """Why `path` (absolute, normalised) is a secret place, or None when it is not.

    Called for every entry of a directory walk, so it works on strings with precompiled patterns.
    """
    text = str(path)
    hit = _DENY_PATHS_RE.match(text)
    if hit:
        return f"{hit.group(0).rstrip('/')} holds secrets"
    if text.startswith("/proc/") and _PROC_SECRET.match(text):
        return "per-process memory, environment and descriptors can hold secrets"
    known = _known_store(text)
    if known:
        return known
    parts = text.split("/")[1:]
    previous, walked = "", ""
    for index, name in enumerate(parts):
        inner = index < len(parts) - 1  # the last component may be a file; a folder named so is caught below
        why = _secret_folder(walked, name) if inner or name in DENY_DIR_NAMES else None
        if why:
            return why
        if (previous, name) in DENY_DIR_PAIRS:
            return f"{previous}/{name} holds credentials or browser data"
        why = _store_by_tail(f"{previous}/{name}", folder=True)
        if why:
            return why
        previous, walked = name, f"{walked}/{name}"
    last = parts[-1] if parts else ""
    why = _store_by_tail(f"{parts[-2] if len(parts) > 1 else ''}/{last}", folder=False) if last else None
    if why:
        return why
    if last and _DENY_FILE_RE.match(last) and not _DENY_FILE_ALLOW_RE.match(last):
        return f"{last} looks like a key or credentials file"
    folder = parts[-2] if len(parts) > 1 else ""
    if last and _in_secret_dir(folder, last):
        return f"{folder}/{last} is where {folder} keeps its secrets"
    return None


def _in_secret_dir(folder: str, name: str) -> bool:
    """`folder/name` is a secret file of the program that owns `folder` (DENY_IN_DIR)."""
    pattern = _DENY_IN_DIR_RE.get(folder)
    return pattern is not None and bool(pattern.match(name)) and not _DENY_FILE_ALLOW_RE.match(name)


def secret_child(parent: str, name: str) -> bool:
    """For walkers: is `parent/name` secret, given that `parent` itself is not? (Checks only
    what the new component can add, so a walk pays a few set lookups per entry.)"""
    if _secret_folder(parent, name):
        return True
    folder = parent.rsplit("/", 1)[-1]
    if (folder, name) in DENY_DIR_PAIRS:
        return True
    if _KNOWN_FOLDER_TAIL.search(f"{folder}/{name}") or _KNOWN_FILE_TAIL.search(f"{folder}/{name}"):
        return True
    if _DENY_FILE_RE.match(name) and not _DENY_FILE_ALLOW_RE.match(name):
        return True
    if _in_secret_dir(parent.rsplit("/", 1)[-1], name):
        return True
    full = f"{parent.rstrip('/')}/{name}"
    return bool(_DENY_PATHS_RE.match(full)) or bool(_KNOWN_FULL.match(full)) or (full.startswith("/proc/") and bool(_PROC_SECRET.match(full)))
