"""Host names a question names, judged against /etc/hosts: a name the file pins to an address goes
there from every program on this machine, whatever DNS says.

Why: "X goes to the wrong machine" (or "cannot reach X" from one machine only) is most often a line
in /etc/hosts written for an address that has since moved. The file is read before DNS when the
nsswitch hosts line puts `files` first (the usual "files dns"), so the pin wins every lookup. A
name the file does not hold is resolved by DNS (said plainly, an `ok` verdict). Nothing is looked
up and no packet is sent. Thresholds: docs/analyzers.md, `name_resolution`.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from pathlib import Path

from appliance.analyzers.base import OK, WARNING, Finding
from appliance.tools import resolution

FAMILY = "name_resolution"
MAX_NAMES = 3
MAX_PINS_SHOWN = 5
# A dotted name as written in a question; its last label is letters (a top-level domain).
_HOST = re.compile(r"(?<![\w/.@-])((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24})(?![\w/-])", re.I)
# Last labels that are file kinds, not domains ("stock.db", "app.log", "nginx.conf").
_FILE_KINDS = frozenset("""log logs conf cfg ini yaml yml json toml xml txt md csv tsv py sh js ts rb pl php go rs c h
    cpp java jar war db sqlite sqlite3 sql gz tgz tar zip bz2 xz zst bak tmp old pid sock lock pem key crt cert csr
    service timer socket mount target path slice scope so deb rpm iso img qcow2 vmdk env html htm css svg png jpg
    jpeg gif pdf doc docx xls xlsx out err swp d rules list repo""".split())
# Last labels that make a one-dot name a host name even when /etc/hosts does not hold it (the
# reserved and private-use suffixes and the most common domains); a name with two dots is one anyway.
_DOMAINS = frozenset("""com net org io dev app ai co cloud info biz edu gov mil int eu uk de fr nl us ca au jp in
    internal local lan home corp intranet private test example invalid localdomain arpa""".split())
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "localhost6", "localhost6.localdomain6",
                          "ip6-localhost", "ip6-loopback", "ip6-allnodes", "ip6-allrouters", "ip6-localnet",
                          "ip6-mcastprefix"})


def host_names(text: str) -> list[str]:
    """The host names a question names ("db.internal", "api.example.com"), at most MAX_NAMES: dotted
    names not inside a path, whose last label is not a file kind."""
    found: list[str] = []
    for match in _HOST.finditer(text):
        name = match.group(1).lower().rstrip(".")
        if name.rsplit(".", 1)[-1] in _FILE_KINDS or name in found:
            continue
        found.append(name)
    return found[:MAX_NAMES]


def _files_first(hosts: str | None) -> bool:
    """Whether /etc/hosts is read before DNS (no hosts line: glibc asks DNS first)."""
    words = [w.split("[")[0] for w in (hosts or "dns files").split()]
    if "files" not in words:
        return False
    dns = [i for i, w in enumerate(words) if w in ("dns", "resolve")]
    return not dns or words.index("files") < dns[0]


def _where(address: str) -> str:
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "an address that is not valid"
    if ip.is_loopback:
        return "this machine itself (loopback)"
    if ip.is_unspecified:
        return "no machine (0.0.0.0 / ::): connections fail at once"
    return "another machine"


def _own_names() -> set[str]:
    host = socket.gethostname().lower()
    return {host, host.split(".")[0]}


def numbered_entries(root: Path, name: str | None = None) -> list[dict]:
    """/etc/hosts entries with their line numbers (comments left out), those naming `name` when given."""
    rows = []
    text = resolution.read_text(root, "etc/hosts") or ""
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if len(words) < 2:
            continue
        names = [w.lower().rstrip(".") for w in words[1:]]
        if name is None or name in names:
            rows.append({"line": number, "address": words[0], "names": words[1:],
                         "entry": " ".join(words)})
    return rows


def pin_findings(names: list[str], root: Path = Path("/")) -> list[Finding]:
    """One verdict per name: a warning when /etc/hosts pins it and is read before DNS; ok when DNS is
    asked first, or when the file has no entry for a name that reads as a host name."""
    hosts = resolution.hosts_line(root)
    first = _files_first(hosts)
    order = hosts or "dns files (no hosts line)"
    findings = []
    for name in names:
        if name in _LOCAL_NAMES or name in _own_names():
            continue  # the machine's own names are the file's to hold
        rows = numbered_entries(root, name)
        if not rows and name.count(".") < 2 and name.rsplit(".", 1)[-1] not in _DOMAINS:
            continue  # a dotted word the file does not hold and that reads as no host name
        if not rows:
            servers = ", ".join(resolution.resolver(root).nameservers) or "none configured"
            findings.append(Finding(FAMILY, OK, f"/etc/hosts has no entry for {name}: nothing on this machine "
                                    f"overrides it; it is looked up through DNS (nameservers: {servers})",
                                    {"name": name, "hosts_entries": [], "nsswitch_hosts": order}))
            continue
        row = rows[0]
        values = {"name": name, "address": row["address"], "line": row["line"], "entry": row["entry"],
                  "hosts_entries": rows, "nsswitch_hosts": order}
        shown = f"line {row['line']}: '{row['entry']}'"
        if not first:
            findings.append(Finding(FAMILY, OK, f"/etc/hosts maps {name} to {row['address']} ({shown}), but DNS "
                                    f"is asked first (hosts order '{order}')", values, path="/etc/hosts"))
            continue
        findings.append(Finding(FAMILY, WARNING,
                                f"/etc/hosts pins {name} to {row['address']} ({shown}), {_where(row['address'])}: "
                                f"it is read before DNS (hosts order '{order}'), so every program here goes to "
                                f"{row['address']} for {name}, whatever DNS says", values,
                                culprit=f"/etc/hosts line {row['line']}", path="/etc/hosts"))
    return findings


def other_pins(root: Path = Path("/")) -> list[dict]:
    """The /etc/hosts entries beyond the standard ones (loopback names, the ip6 names, this machine's
    own host name): the names this machine pins to an address of its choosing."""
    own = _own_names()
    rows = []
    for row in numbered_entries(root):
        names = [n.lower() for n in row["names"]]
        if all(n in _LOCAL_NAMES or n in own for n in names):
            continue
        try:
            if ipaddress.ip_address(row["address"].split("%", 1)[0]).is_loopback and not any(
                    "." in n for n in names if n not in _LOCAL_NAMES):
                continue  # a loopback alias of this machine ("127.0.1.1 myhost")
        except ValueError:
            pass
        rows.append(row)
    return rows
