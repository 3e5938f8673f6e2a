"""Well-known secret files are refused by name through the one path policy (etc_tree copies under a
temporary root laid out like /etc), and a file that is mostly secrets is refused whole by content,
whatever its name. The walkers never name them either."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.tools.context import ToolContext
from appliance.tools.paths import PathPolicy, secret_child, secret_reason
from appliance.tools.registry import build_registry

# Where each lives on a real machine (relative to /), as the deny-list's sources name them.
SECRET_FILES = [
    "etc/ppp/chap-secrets", "etc/ppp/pap-secrets", "etc/ppp/srp-secrets", "etc/postfix/sasl_passwd",
    "etc/postfix/sasl_passwd.db", "etc/davfs2/secrets", "etc/ipsec.secrets", "etc/strongswan/ipsec.secrets",
    "etc/rsyncd.secrets", "etc/openvpn/auth.txt", "etc/openvpn/client/auth-user-pass.txt", "etc/openvpn/credentials",
    "etc/openvpn/client.ovpn", "etc/samba/smbpasswd", "var/lib/samba/private/passdb.tdb",
    "var/lib/samba/private/secrets.tdb", "etc/shadow.bak", "etc/shadow-", "etc/gshadow-", "etc/gshadow.bak",
    "etc/shadow~", "etc/letsencrypt/accounts/acme-v02.api.letsencrypt.org/directory/abc/private_key.json",
    "root/.acme.sh/ca/acme-v02.api.letsencrypt.org/directory/account.key", "etc/mysql/debian.cnf",
    "etc/wireguard/wg0.conf", "etc/swanctl/swanctl.conf", "etc/mosquitto/passwd", "etc/dovecot/users",
    "etc/exim4/passwd.client", "etc/sasldb2", "var/lib/rabbitmq/.erlang.cookie", "etc/nginx/.htpasswd",
    "etc/app/secrets.json", "etc/app/secrets.yaml", "root/.smbcredentials", "etc/cifs-credentials",
    "home/bob/.mylogin.cnf", "etc/pgpool-II/pgpass.conf", "srv/app/terraform.tfvars", "srv/app/terraform.tfstate",
    "etc/vsftpd/ftpd.passwd", "etc/ldap.secret", "etc/pam_ldap.secret",
]
ORDINARY_FILES = ["etc/ppp/options", "etc/postfix/main.cf", "etc/openvpn/server.conf", "etc/samba/smb.conf",
                  "etc/nginx/nginx.conf", "etc/mysql/my.cnf", "var/log/accounts.log", "etc/passwd", "etc/group"]


@pytest.fixture
def etc_tree(tmp_path: Path) -> Path:
    for rel in (*SECRET_FILES, *ORDINARY_FILES):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("port 1723\n")  # harmless content: the refusal is by name alone
    return tmp_path


def test_every_listed_secret_file_is_refused_by_the_path_policy(etc_tree):
    registry = build_registry(ToolContext(policy=PathPolicy.confined([etc_tree])))
    shown = []
    for rel in SECRET_FILES:
        got = registry.call("read_file", {"path": str(etc_tree / rel)})
        if got["status"] != "denied":
            shown.append(rel)
        assert secret_reason(f"/{rel}") is not None, rel  # and at its real place
    assert shown == []
    for rel in ORDINARY_FILES:
        got = registry.call("read_file", {"path": str(etc_tree / rel)})
        assert got["status"] == "ok", (rel, got)


def test_walkers_know_each_secret_file_from_its_folder_and_name(etc_tree):
    """A walk sums them without opening them (dir_sizes' and largest_files' `secret_child`)."""
    for rel in SECRET_FILES:
        parent, _, name = f"{etc_tree}/{rel}".rpartition("/")
        assert secret_child(parent, name) or secret_reason(parent) is not None, rel
    for rel in ORDINARY_FILES:
        parent, _, name = f"{etc_tree}/{rel}".rpartition("/")
        assert not secret_child(parent, name), rel


def test_a_file_of_mostly_secrets_is_refused_whole_whatever_its_name(tmp_path):
    notes = tmp_path / "peers.txt"
    notes.write_text("user = deploy\npassword = Tr0ub4dor&3xyz\ntoken: 9f3Kq81LmZ0pW2xY7vB4nC6d\napi_key=Zx81Lm0pW2q9Kf3Y\n")
    config = tmp_path / "app.conf"
    config.write_text("listen = 8080\nworkers = 4\nlog_level = info\npassword = Tr0ub4dor&3xyz\ncache = /var/cache/app\n")
    registry = build_registry(ToolContext(policy=PathPolicy.confined([tmp_path])))
    refused = registry.call("read_file", {"path": str(notes)})
    assert refused["status"] == "denied" and "3 of its 4 lines are secrets" in refused["error"], refused
    assert "Tr0ub4dor" not in str(refused) and "deploy" not in str(refused)
    shown = registry.call("read_file", {"path": str(config)})
    assert shown["status"] == "ok" and "workers = 4" in shown["data"]["text"] and "Tr0ub4dor" not in shown["data"]["text"]
