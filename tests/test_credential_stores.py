"""Every well-known credential store of the deny-list's table, planted with a canary as a copy under
an allowed folder (laid out as on a real machine): refused through read_file and read_log, and the
canary in no tool's output, names and walks included, and in no prompt, answer, database or export of
engine runs over them. Then stores known only by what they hold,
under neutral names, and ordinary files beside them that must stay readable. Then names: a file
named like a token and a link whose target holds one are shown masked."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from appliance.tools.context import ToolContext
from appliance.tools.credential_paths import KNOWN_STORES
from appliance.tools.paths import PathPolicy
from appliance.tools.registry import build_registry
from support.credential_plants import (canary_for, canary_text, exported, leaked_anywhere, names, planted_file,
                                      reads, record_runs, verdict, walks)
from support.store import checkout_env


def registry_over(root: Path):
    return build_registry(ToolContext(policy=PathPolicy.default(extra_roots=[root])))


def test_the_table_has_150_stores_each_cited_in_the_docs():
    docs = (Path(__file__).parent.parent / "docs" / "tools.md").read_text()
    assert len(KNOWN_STORES) >= 150 and sum(s.per_user for s in KNOWN_STORES) >= 50
    assert [s.path for s in KNOWN_STORES if f"`{s.path}` | {s.source}" not in docs] == []


def test_every_store_copied_under_an_allowed_folder_is_refused(tmp_path):
    registry = registry_over(tmp_path)
    plants = []
    for index, store in enumerate(KNOWN_STORES):
        path = planted_file(store, tmp_path, "/home/bob")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(canary_text(canary_for(index)))
        plants.append((store, path, canary_for(index)))
    seen = Counter()
    leaked = []
    for store, path, canary in plants:
        outcome = verdict({**reads(registry, path), **names(registry, path)}, canary)
        seen[outcome] += 1
        if outcome != "refused":
            leaked.append((store.path, outcome))
    assert leaked == [] and seen["refused"] == len(KNOWN_STORES)
    walked = json.dumps(walks(registry, tmp_path))
    assert not any(canary in walked for _store, _path, canary in plants)


def test_every_copied_store_is_in_no_prompt_answer_database_or_export(tmp_path):
    """The engine over every copy (each profiled before the first step, then read), a model that
    repeats all it was shown as its answer, every event recorded, then the real export."""
    plants = []
    for index, store in enumerate(KNOWN_STORES):
        path = planted_file(store, tmp_path / "copies", "/home/bob")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(canary_text(canary_for(index)))
        plants.append((path, canary_for(index)))
    db = tmp_path / "runs.db"
    shown = record_runs(registry_over(tmp_path / "copies"), [p for p, _c in plants], db)
    assert len(shown) > len(plants)  # every read reached the model
    stored = b"".join(f.read_bytes() for f in tmp_path.glob("runs.db*"))
    assert b"read_file" in stored and b"canary.conf" in stored  # the runs are there, only the canaries are not
    export = exported(db, checkout_env())
    assert str(plants[0][0].parent) in export or "copies" in export
    assert leaked_anywhere([c for _p, c in plants], "\n".join(shown), stored, export) == []


CANARY = "Zx9CanaryValueQ7"  # inside each format below, where its secret stands
BY_CONTENT = {
    "chrony key file": f"1 SHA1 HEX:{CANARY}a1b2c3d4\n2 SHA256 HEX:0011223344556677\n",
    "ntp keys": f"1 M {CANARY}\n2 M otherpassword\n",
    "psk identity:key": f"client1:{CANARY.encode().hex()}\nclient2:00112233445566778899aabbccddeeff\n",
    "hostapd psk": f"00:11:22:33:44:55 {CANARY}\n00:00:00:00:00:00 anotherpassphrase\n",
    "htpasswd": f"alice:$apr1$abcdefgh${CANARY}abcdefg\nbob:{{SHA}}qUqP5cyxm6YcTAhz05Hph5gvu9M=\n",
    "redis acl": f"user default on nopass ~* &* +@all\nuser app on >{CANARY} ~app:* +@read\n",
    "pgbouncer userlist": f'"app" "md5{"a" * 32}"\n"admin" "{CANARY}"\n',
    "jaas": f'KafkaClient {{\n  org.apache.kafka.common.security.plain.PlainLoginModule required\n'
            f'  username="svc"\n  password="{CANARY}";\n}};\n',
    "otpauth uris": f"otpauth://totp/Example:alice?secret={CANARY}&issuer=Example\n",
    "google authenticator": f"JBSWY3DPEHPK3PXPJBSWY3DP\n\" RATE_LIMIT 3 30\n\" TOTP_AUTH\n{CANARY[-8:].replace('Q', '1')}12345678\n",
    "electrum wallet": json.dumps({"seed_version": 18, "keystore": {"type": "bip32", "xprv": CANARY}}),
    "ethereum keystore": json.dumps({"crypto": {"cipher": "aes-128-ctr", "ciphertext": CANARY, "kdf": "scrypt"},
                                     "version": 3}),
    "authenticator export": json.dumps([{"issuer": "Example", "secret": CANARY, "digits": 6}]),
    "viminfo": f"# This viminfo file was generated by Vim 9.0.\n# You may edit it if you're careful!\n:{CANARY}\n",
    "lesshst": f".less-history-file:\n.search\n\"{CANARY}\n",
    "libedit history": f"_HiStOrY_V2_\nselect\\040{CANARY};\n",
    "zsh history": f": 1700000000:0;mysql -u root\n: 1700000005:0;echo {CANARY}\n",
    "lone token": f"{CANARY}Kq81LmZ0pW2x\n",
    "lone key block": f"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg{CANARY}\nqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n",
    "mostly masked": f"api_key = {CANARY}Lm0pW2q9Kf3Y\npassword = hunter2-{CANARY}\nuser = deploy\n",
    "recovery phrase": "abandon ability able about above absent absorb abstract absurd abuse access accident\n",
}
ORDINARY = {
    "nginx.conf": "worker_processes auto;\nevents { worker_connections 768; }\nhttp { sendfile on; }\n",
    "fstab": "UUID=3f2a1b4c-0d9e-4f5a-8b7c-6d5e4f3a2b1c / ext4 defaults 0 1\n",
    "hostname": "build-server-eu-west-3\n",
    "uuid": "3f2a1b4c-0d9e-4f5a-8b7c-6d5e4f3a2b1c\n",
    "version": "2.41.0-1ubuntu1.2\n",
    "app.log": "".join(f"2026-12-07T05:0{i}:00Z GET /api?token=Zq81LmZ0pW2xY7vB4nC6dQa8{i} 200\n" for i in range(6)),
    "app.conf": "listen = 8080\nworkers = 4\nlog_level = info\npassword = Tr0ub4dor&3xyz\ncache = /var/cache/app\n",
    "words.txt": "the quick brown fox jumps over the lazy dog again\n",
    "cert.pem.txt": "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----\n",
    "keys.csv": "id,name,size\n1,alpha,30\n2,beta,40\n",
    "authorized.pub": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq3 bob@host\n",
}


@pytest.mark.parametrize("kind", sorted(BY_CONTENT))
def test_a_store_known_only_by_its_content_is_refused_whole_under_a_neutral_name(tmp_path, kind):
    path = tmp_path / "notes-2.txt"
    path.write_text(BY_CONTENT[kind])
    got = reads(registry_over(tmp_path), path)
    for tool, result in got.items():
        assert result["status"] == "denied" and "refused whole" in result["error"], (kind, tool, result)
        assert CANARY not in json.dumps(result)


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_ordinary_files_beside_them_stay_readable(tmp_path, name):
    path = tmp_path / name
    path.write_text(ORDINARY[name])
    got = registry_over(tmp_path).call("read_file", {"path": str(path)})
    assert got["status"] == "ok", (name, got)


TOKEN = "9f3Kq81LmZ0pW2xY7vB4nC6dQa8Zr5Tn"


def test_a_secret_in_a_name_or_a_link_target_is_masked_in_every_tool(tmp_path):
    folder = tmp_path / "app"
    folder.mkdir()
    (folder / TOKEN).write_text("x")
    (folder / "password=Hunter2Secret").write_text("x")
    (folder / "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tV9wX1yZ3a5C.txt").write_text("x")
    os.symlink(f"/srv/keys/{TOKEN}", folder / "current")
    os.symlink("https://deploy:S3cretPw0rd@example.com/repo", folder / "origin")
    (folder / "NetworkManager.conf").write_text("[main]\n")
    registry = registry_over(tmp_path)
    shown = {
        "list_dir": registry.call("list_dir", {"path": str(folder)}),
        "path_lookup": registry.call("path_lookup", {"path": str(folder / "current")}),
        **walks(registry, tmp_path),
    }
    text = json.dumps(shown)
    for secret in (TOKEN, "Hunter2Secret", "aB3dE5fG7hJ9kL1mN3pQ5rS7tV9wX1yZ3a5C", "S3cretPw0rd"):
        assert secret not in text, secret
    listed = {entry["name"] for entry in shown["list_dir"]["data"]["entries"]}
    assert {"current", "origin", "NetworkManager.conf", "password=[REDACTED:password]"} <= listed
    targets = {entry.get("target") for entry in shown["list_dir"]["data"]["entries"]}
    assert "/srv/keys/[REDACTED:high-entropy-secret]" in targets
