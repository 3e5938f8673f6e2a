"""The one path policy every tool that touches a path goes through.

Two kinds of access, because they leak different things:
- `read` (file contents: read_file, read_log) is confined to the read roots: logs, system
  configuration, /proc and /sys, temporary directories, plus any `--allow-path`.
- `list` (names, sizes, times: list_dir, dir_sizes, largest_files) may look anywhere on the machine,
  since "what is filling my disk?" needs the whole tree; contents are never read this way.
A deny-list of secret places wins over every allow for both kinds, and is checked on the path as
written AND on the path after resolving symlinks and `..`, so neither a symlink named `notes` that
points into `~/.ssh` nor a `~/.ssh` that is itself a symlink elsewhere gets through.

Opening re-checks what was decided: `O_NOFOLLOW`, then `fstat` must show the same regular file
(device and inode) and /proc/self/fd must name the same path, so a swap between check and open is
refused rather than followed. Reads use `O_NOATIME` where permitted, so looking leaves no trace.
"""

from __future__ import annotations

import errno
import fnmatch
import glob
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Literal, Sequence

from appliance.tools.base import DENIED, ToolResult, fail
from appliance.tools.components import look_up
from appliance.tools.credential_paths import KNOWN_STORES, KnownStore

Purpose = Literal["read", "list"]

DEFAULT_READ_ROOTS = (
    "/var/log", "/run/log", "/etc", "/proc", "/sys", "/tmp", "/var/tmp",
    "/usr/lib/systemd", "/lib/systemd", "/usr/lib/os-release", "/boot",
)
DEFAULT_LIST_ROOTS = ("/",)

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


class PathDenied(Exception):
    """The policy refused a path. `str(exc)` says why, in a sentence meant for the model."""

    def as_result(self) -> ToolResult:
        return fail(str(self), DENIED)


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
        folder = index < len(parts) - 1  # the last component may be a file; a folder named so is caught below
        why = _secret_folder(walked, name) if folder or name in DENY_DIR_NAMES else None
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


@dataclass(frozen=True)
class PathPolicy:
    """Which paths the tools may read or list. Build with `PathPolicy.default()` or directly."""

    read_roots: tuple[Path, ...]
    list_roots: tuple[Path, ...] = (Path("/"),)
    home: Path = field(default_factory=Path.home)
    # Places the person added (--allow-path, or a confined policy's roots): a hard link there is never trusted.
    added_roots: tuple[Path, ...] = ()

    @classmethod
    def default(cls, extra_roots: Sequence[str | os.PathLike] = ()) -> "PathPolicy":
        """Logs, configuration, /proc, /sys and temp dirs readable; names and sizes anywhere;
        `extra_roots` (from --allow-path) readable too."""
        home = Path.home()
        extras = tuple(_root(r, home) for r in extra_roots)
        reads = tuple(_root(r, home) for r in DEFAULT_READ_ROOTS if os.path.lexists(r)) + extras
        lists = tuple(_root(r, home) for r in DEFAULT_LIST_ROOTS) + extras
        return cls(read_roots=_unique(reads), list_roots=_unique(lists), home=home, added_roots=_unique(extras))

    @classmethod
    def confined(cls, roots: Iterable[str | os.PathLike]) -> "PathPolicy":
        """Only `roots`, for reading and listing (tests, or a locked-down deployment)."""
        home = Path.home()
        resolved = _unique(tuple(_root(r, home) for r in roots))
        return cls(read_roots=resolved, list_roots=resolved, home=home, added_roots=resolved)

    # -- deciding ---------------------------------------------------------------------------------

    def resolve(self, path: str, purpose: Purpose = "read") -> Path:
        """The real absolute path, if the policy allows `purpose` on it; else raise PathDenied."""
        if not isinstance(path, str) or not path.strip():
            raise PathDenied("no path given")
        if "\x00" in path:
            raise PathDenied("the path contains a NUL byte")
        if len(path) > 4096:
            raise PathDenied("the path is longer than 4096 characters")
        expanded = os.path.expanduser(path.strip()) if path.strip().startswith("~") else path.strip()
        if not os.path.isabs(expanded):
            raise PathDenied(f"{path!r} is not absolute; give a full path starting with / or ~")
        lexical = Path(os.path.normpath(expanded))  # for the deny-list check of the name as written
        reason = secret_reason(lexical)
        if reason is not None:  # before resolving: /proc/N/root cannot even be resolved without ptrace access
            raise PathDenied(f"{path} is off limits: {reason}")
        real = Path(os.path.realpath(expanded))  # the kernel's reading: symlinks first, then ".."
        reason = secret_reason(real)
        if reason is not None:
            raise PathDenied(f"{path} is off limits: {reason}")
        roots = self.read_roots if purpose == "read" else self.list_roots
        if not _within(real, roots):
            where = ", ".join(str(r) for r in roots) or "nothing"
            shown = f"{path} (really {real})" if str(real) != str(lexical) else path
            raise PathDenied(f"{shown} is outside the allowed places ({where}); the user can add it with --allow-path")
        return real

    def explain(self, path: str, purpose: Purpose = "read") -> str | None:
        """None when allowed, else the reason it is denied."""
        try:
            self.resolve(path, purpose)
        except PathDenied as exc:
            return str(exc)
        return None

    def is_secret(self, path: Path) -> bool:
        """For walkers: True when an entry found while listing must be skipped."""
        return secret_reason(path) is not None

    # -- opening ----------------------------------------------------------------------------------

    def _missing(self, path: str, real: Path) -> str:
        """Why `path` does not exist, from a lookup of the path as written (a link to a target that
        is gone is named, not the folder the resolved target would be in), plus the last folder the
        lookup reached when listing it is allowed: a small model that guessed a sub-path
        ("/opt/billing/db") gets told where to look instead of concluding that a folder is missing."""
        written = os.path.normpath(os.path.expanduser(path.strip()))
        found = look_up(written)
        reason = f"{path} does not exist" + (f": {found.problem}" if found.problem else "")
        reached = Path(found.stopped_at or real.parent)
        if reached.is_dir() and _within(reached, self.list_roots) and secret_reason(reached) is None:
            return f"{reason}; the last folder reached is {reached} (list_dir shows what is there)"
        return reason

    def open_file(self, path: str) -> tuple[int, Path, os.stat_result]:
        """Open an allowed regular file for reading; returns (fd, real path, fstat). The caller closes fd."""
        real = self.resolve(path, "read")
        try:
            before = os.stat(real)
        except FileNotFoundError:
            raise FileNotFoundError(self._missing(path, real)) from None
        _refuse_special(path, before.st_mode)
        if stat.S_ISDIR(before.st_mode):
            raise IsADirectoryError(f"{path} is a directory; use list_dir")
        fd = open_noatime(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            after = os.fstat(fd)
            if not stat.S_ISREG(after.st_mode) or (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
                raise PathDenied(f"{path} changed while it was being checked; refusing to read it")
            _check_fd_path(fd, real, path)
            self._check_links(path, real, after)
        except BaseException:
            os.close(fd)
            raise
        return fd, real, after

    def _check_links(self, path: str, real: Path, st: os.stat_result) -> None:
        """A file with more than one name is read only when the policy can trust it (see
        LINK_TRUSTED_ROOTS): the deny-list looks at names, and another name of the same file could
        be `secret/.env` (`ln secret/.env allowed/notes.txt`)."""
        if st.st_nlink <= 1:
            return
        trusted = (
            st.st_uid == 0
            and _within(real, LINK_TRUSTED_ROOTS)
            and not _within(real, self.added_roots)
            and (st.st_dev, st.st_ino) not in _secret_inodes()
        )
        if not trusted:
            raise PathDenied(
                f"{path} has {st.st_nlink} hard links, and another of its names may be a denied file; a file with "
                f"several names is read only when root owns it under {', '.join(map(str, LINK_TRUSTED_ROOTS))} "
                f"(never in places added with --allow-path)"
            )

    def open_dir(self, path: str, purpose: Purpose = "list") -> tuple[int, Path]:
        """Open an allowed directory (O_DIRECTORY|O_NOFOLLOW); returns (fd, real path)."""
        real = self.resolve(path, purpose)
        try:
            fd = open_noatime(real, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            raise FileNotFoundError(self._missing(path, real)) from None
        except NotADirectoryError:
            raise NotADirectoryError(f"{path} is not a directory") from None
        try:
            _check_fd_path(fd, real, path)
        except BaseException:
            os.close(fd)
            raise
        return fd, real


# Where a file with several hard links may still be read: system directories only root can write
# (so only root could have linked a file there), never /tmp, /var/tmp or places the person added.
LINK_TRUSTED_ROOTS = tuple(Path(p) for p in (
    "/etc", "/var/log", "/run/log", "/usr/lib/systemd", "/lib/systemd", "/usr/lib/os-release", "/boot",
))
_SECRET_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/shadow-", "/etc/gshadow-", "/etc/security/opasswd",
                 "/etc/krb5.keytab")
_SECRET_GLOBS = ("/etc/ssh/ssh_host_*_key", "/etc/ssl/private/*", "/root/.ssh/*")


def _secret_inodes() -> set[tuple[int, int]]:
    """(device, inode) of the well-known secret files, so even root's own link to one is refused."""
    found = set()
    for name in (*_SECRET_FILES, *(hit for pattern in _SECRET_GLOBS for hit in glob.glob(pattern))):
        try:
            st = os.stat(name)
        except OSError:
            continue
        found.add((st.st_dev, st.st_ino))
    return found


def _within(path: Path, roots) -> bool:
    """`path` is one of `roots` or inside one (by path components, not string prefixes)."""
    return any(path == root or path.is_relative_to(root) for root in roots)


def read_capped(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from the start of an open file (works for /proc files of size 0)."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _refuse_special(path: str, mode: int) -> None:
    if stat.S_ISFIFO(mode):
        raise PathDenied(f"{path} is a FIFO (named pipe); reading it could block or consume data")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise PathDenied(f"{path} is a device; devices are never read")
    if stat.S_ISSOCK(mode):
        raise PathDenied(f"{path} is a socket, not a file")


def open_noatime(path: Path | str, flags: int) -> int:
    """Open without updating the access time when the kernel lets us (owner or root)."""
    noatime = getattr(os, "O_NOATIME", 0)
    if noatime:
        try:
            return os.open(path, flags | noatime)
        except PermissionError:
            pass
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EINVAL):
                raise
    return os.open(path, flags)


def _check_fd_path(fd: int, real: Path, shown: str) -> None:
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return  # no /proc: the dev/inode check above is what we have
    if opened != str(real):
        raise PathDenied(f"{shown} changed while it was being checked; refusing it")


def _root(value: str | os.PathLike, home: Path) -> Path:
    text = os.fspath(value)
    if "\x00" in text:
        raise ValueError("a root path contains a NUL byte")
    if text.startswith("~"):
        text = str(home) + text[1:]
    return Path(os.path.realpath(os.path.abspath(text)))


def _unique(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(paths))
