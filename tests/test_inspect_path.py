"""inspect_path on real plants made here: attributes set with chattr, a sparse file, scripts with
CRLF, a missing interpreter or no x bit, certificates made with `cryptography`, a private key (by
name and by content), archives, SQLite, configs with a syntax error, a stale pid file, an ACL, a
dangling link, a folder; and read_log over gzip, xz and bzip2 logs."""

from __future__ import annotations

import bz2
import datetime as dt
import gzip
import json
import lzma
import os
import sqlite3
import struct
import subprocess
import tarfile
import zipfile

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from appliance.tools.context import ToolContext
from appliance.tools.paths import PathPolicy
from appliance.tools.registry import build_registry

REGISTRY = build_registry(ToolContext(policy=PathPolicy.default()))


def inspect(path) -> dict:
    out = REGISTRY.call("inspect_path", {"path": str(path)})
    assert out["status"] == "ok", out
    return out["data"]


def kinds(data: dict) -> dict[str, str]:
    return {f["kind"]: f["severity"] for f in data["flags"]}


@pytest.fixture
def chattr_file(tmp_path):
    made = []

    def make(flag: str):
        path = tmp_path / f"attr{flag}.txt"
        path.write_text("data\n")
        subprocess.run(["chattr", f"+{flag}", str(path)], check=True)
        made.append((flag, path))
        return path

    yield make
    for flag, path in made:
        subprocess.run(["chattr", f"-{flag}", str(path)], check=True)


def test_an_immutable_file_is_flagged_as_refusing_changes_even_to_root(chattr_file, tmp_path):
    path = chattr_file("i")
    with pytest.raises(PermissionError):
        path.write_text("x")  # the plant is real: root cannot write it
    data = inspect(path)
    assert "immutable" in data["attributes"] and data["lsattr"][4] == "i"
    assert kinds(data) == {"immutable": "warning"}
    plain = tmp_path / "plain.txt"
    plain.write_text("data\n")
    assert "immutable" not in kinds(inspect(plain)) and inspect(plain)["attributes"] == "none of note"


def test_an_append_only_file_is_flagged(chattr_file):
    data = inspect(chattr_file("a"))
    assert "append-only" in data["attributes"] and kinds(data)["append_only"] == "warning"


def test_a_sparse_file_shows_its_holes_and_a_full_one_does_not(tmp_path):
    sparse = tmp_path / "disk.img"
    with open(sparse, "wb") as handle:
        handle.truncate(64 << 20)
    data = inspect(sparse)
    assert data["size"] == "64.0 MiB" and data["size_bytes"] == 64 << 20 and "sparse" in data
    full = tmp_path / "full.bin"
    full.write_bytes(os.urandom(1 << 20))
    assert "sparse" not in inspect(full)


def test_mode_owner_and_special_bits_in_words(tmp_path):
    path = tmp_path / "tool"
    path.write_text("x")
    os.chmod(path, 0o4750)
    data = inspect(path)
    assert data["octal"] == "4750" and data["mode"] == "-rwsr-x---" and data["owner"] == "root"
    assert data["allows"]["others"] == "nothing" and data["allows"]["owner root"] == "read, write, execute"
    assert any(bit.startswith("setuid") for bit in data["special_bits"])
    assert data["hard_links"] == 1 and "ago" in data["modified"]


def script(tmp_path, name: str, body: bytes, mode: int = 0o755):
    path = tmp_path / name
    path.write_bytes(body)
    os.chmod(path, mode)
    return path


def test_a_crlf_script_is_flagged_and_its_interpreter_line_read_as_the_kernel_reads_it(tmp_path):
    path = script(tmp_path, "run.sh", b"#!/bin/sh\r\necho hi\r\n")
    data = inspect(path)
    assert data["content"]["kind"] == "script" and data["content"]["line_endings"] == "CRLF (Windows)"
    assert kinds(data) == {"interpreter_missing": "critical", "windows_line_endings": "warning"}
    unix = inspect(script(tmp_path, "ok.sh", b"#!/bin/sh\necho hi\n"))
    assert unix["content"]["interpreter_exists"] is True and unix["flags"] == []


def test_a_script_whose_interpreter_is_missing(tmp_path):
    data = inspect(script(tmp_path, "job", b"#!/opt/nowhere/bin/python9\nprint(1)\n"))
    assert data["content"]["interpreter"] == "/opt/nowhere/bin/python9"
    assert kinds(data)["interpreter_missing"] == "critical"
    env = inspect(script(tmp_path, "job2", b"#!/usr/bin/env no-such-interpreter-zz\n"))
    assert env["content"]["runs_program"] == "no-such-interpreter-zz" and "interpreter_missing" in kinds(env)


def test_a_script_nobody_may_execute(tmp_path):
    data = inspect(script(tmp_path, "backup.sh", b"#!/bin/sh\ntrue\n", mode=0o644))
    assert kinds(data) == {"not_executable": "warning"}


def test_an_elf_program_names_its_architecture_and_loader(tmp_path):
    target = tmp_path / "prog"
    target.write_bytes(open("/bin/true", "rb").read())
    os.chmod(target, 0o755)
    data = inspect(target)
    assert data["content"]["kind"] == "ELF" and data["content"]["loader_exists"] is True
    assert data["content"]["architecture"] == {"x86_64": "x86-64", "aarch64": "AArch64 (ARM 64-bit)"}[os.uname().machine]
    raw = bytearray(target.read_bytes())
    loader = data["content"]["loader"].encode()
    at = raw.index(loader)
    raw[at:at + len(loader)] = b"/nonexistent/ld.so"[:len(loader)].ljust(len(loader), b"x")
    target.write_bytes(bytes(raw))
    assert kinds(inspect(target))["loader_missing"] == "critical"


def cert(subject: str, days: tuple[int, int], issuer=None, key=None):
    key = key or ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.timezone.utc)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    signer_name, signer_key = issuer or (name, key)
    built = (x509.CertificateBuilder().subject_name(name).issuer_name(signer_name).public_key(key.public_key())
             .serial_number(x509.random_serial_number()).not_valid_before(now + dt.timedelta(days=days[0]))
             .not_valid_after(now + dt.timedelta(days=days[1])).sign(signer_key, hashes.SHA256()))
    return built, key


def pem(*certs) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


def test_certificates_expired_expiring_and_a_chain(tmp_path):
    old, _ = cert("old.example", (-400, -3))
    soon, _ = cert("soon.example", (-10, 10))
    (tmp_path / "old.crt").write_bytes(pem(old))
    (tmp_path / "soon.crt").write_bytes(pem(soon))
    gone = inspect(tmp_path / "old.crt")
    assert gone["content"]["certificates"][0]["expired"] is True and kinds(gone) == {"cert_expired": "critical"}
    near = inspect(tmp_path / "soon.crt")["content"]["certificates"][0]
    assert near["days_left"] in (9, 10) and near["subject"] == "CN=soon.example" and near["public_key_type"].startswith("EC")
    assert kinds(inspect(tmp_path / "soon.crt")) == {"cert_expiring": "warning"}
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca, _ = cert("Test CA", (-1, 3650), key=ca_key)
    leaf, _ = cert("www.example", (-1, 365), issuer=(ca.subject, ca_key))
    (tmp_path / "chain.crt").write_bytes(pem(leaf, ca))
    chain = inspect(tmp_path / "chain.crt")["content"]
    assert chain["kind"].startswith("X.509 certificate chain (2") and chain["chain_in_order"] is True
    assert chain["certificates"][1]["public_key_type"] == "RSA 2048 bits" and chain["certificates"][0]["issuer"] == "CN=Test CA"
    assert inspect(tmp_path / "chain.crt")["flags"] == []
    (tmp_path / "reversed.crt").write_bytes(pem(ca, leaf))
    assert kinds(inspect(tmp_path / "reversed.crt")) == {"chain_out_of_order": "warning"}
    future, _ = cert("later.example", (5, 365))
    (tmp_path / "later.crt").write_bytes(pem(future))
    assert kinds(inspect(tmp_path / "later.crt")) == {"cert_not_yet_valid": "warning"}


def test_a_private_key_is_refused_by_name_and_its_content_never_shown_under_another_name(tmp_path):
    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    (tmp_path / "server.key").write_bytes(key)
    refused = REGISTRY.call("inspect_path", {"path": str(tmp_path / "server.key")})
    assert refused["status"] == "denied" and "off limits" in refused["error"]
    (tmp_path / "notes.txt").write_bytes(key)
    out = REGISTRY.call("inspect_path", {"path": str(tmp_path / "notes.txt")})
    content = out["data"]["content"]  # refused whole by what it holds (tools/paths.py), or named by its kind
    assert content.get("kind") == "private key" or "private key" in content.get("not_read", "")
    body = key.decode().splitlines()[1]
    assert body[:20] not in json.dumps(out)


def test_compressed_archives_and_sqlite_by_their_first_bytes(tmp_path):
    (tmp_path / "a.gz").write_bytes(gzip.compress(b"x" * 100))
    (tmp_path / "a.xz").write_bytes(lzma.compress(b"x"))
    (tmp_path / "a.bz2").write_bytes(bz2.compress(b"x"))
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as archive:
        archive.writestr("inside.txt", "hello")
    (tmp_path / "member.txt").write_text("hello")
    with tarfile.open(tmp_path / "a.tar", "w") as archive:
        archive.add(tmp_path / "member.txt", arcname="member.txt")
    sqlite3.connect(tmp_path / "a.db").execute("create table t (x)").connection.commit()
    found = {name: inspect(tmp_path / name)["content"]["kind"] for name in ("a.gz", "a.xz", "a.bz2", "a.zip", "a.tar", "a.db")}
    assert found == {"a.gz": "gzip-compressed data", "a.xz": "xz-compressed data", "a.bz2": "bzip2-compressed data",
                     "a.zip": "zip archive", "a.tar": "tar archive", "a.db": "SQLite database"}
    (tmp_path / "empty").write_bytes(b"")
    assert inspect(tmp_path / "empty")["content"] == {"kind": "empty"}


@pytest.mark.parametrize("name, text, line", [
    ("app.json", '{\n  "a": 1,\n  "b": ,\n}\n', 3),
    ("app.toml", 'a = 1\n[server]\nport = \n', 3),
    ("app.ini", "[main]\nkey = 1\nthis line is wrong\n", 3),
    ("app.yaml", "a: 1\nb: [1, 2\nc: 3\n", 3),
])
def test_a_config_with_a_syntax_error_names_its_line(tmp_path, name, text, line):
    (tmp_path / name).write_text(text)
    data = inspect(tmp_path / name)
    assert data["content"]["syntax_ok"] is False and data["content"]["first_error_line"] == line, data["content"]
    assert kinds(data) == {"syntax_error": "warning"}
    (tmp_path / ("good" + name[3:])).write_text({"app.json": '{"a": 1}', "app.toml": "a = 1\n", "app.ini": "[m]\nk = 1\n",
                                                 "app.yaml": "a: 1\n"}[name])
    assert inspect(tmp_path / ("good" + name[3:]))["content"]["syntax_ok"] is True


def test_a_pid_file_naming_no_process_is_stale_and_one_naming_a_live_process_is_not(tmp_path):
    child = subprocess.Popen(["sleep", "0"])
    child.wait()  # its pid is free now (reused within the test only by a miracle)
    (tmp_path / "app.pid").write_text(f"{child.pid}\n")
    data = inspect(tmp_path / "app.pid")
    assert data["content"]["pid_running"] is False and kinds(data) == {"stale_pid_file": "warning"}
    (tmp_path / "me.pid").write_text(f"{os.getpid()}\n")
    assert inspect(tmp_path / "me.pid")["flags"] == []


def test_an_acl_is_decoded(tmp_path):
    path = tmp_path / "shared.txt"
    path.write_text("x")
    entries = [(0x01, 6, 0xFFFFFFFF), (0x02, 4, 65534), (0x04, 4, 0xFFFFFFFF), (0x10, 4, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)]
    os.setxattr(path, "system.posix_acl_access", struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries))
    data = inspect(path)
    assert "user nobody: r--" in data["acl"]["access"] and "others: ---" in data["acl"]["access"]
    (tmp_path / "plain.txt").write_text("x")
    assert "acl" not in inspect(tmp_path / "plain.txt")


def test_a_dangling_link_says_where_the_lookup_stops(tmp_path):
    (tmp_path / "current").symlink_to(tmp_path / "releases" / "v9")
    data = inspect(tmp_path / "current")
    assert data["link"]["resolves"] is False and "dangling" in data["link"]["lookup_stops"]
    assert kinds(data) == {"dangling_link": "warning"}
    (tmp_path / "real.txt").write_text("x")
    (tmp_path / "good").symlink_to(tmp_path / "real.txt")
    good = inspect(tmp_path / "good")
    assert good["link"]["resolves_to"] == str(tmp_path / "real.txt") and good["type"] == "file"


def test_a_folder_counts_its_entries_and_names_the_newest_and_oldest(tmp_path):
    for i, name in enumerate(("a.log", "b.log", "c.log")):
        (tmp_path / name).write_text("x" * 10)
        os.utime(tmp_path / name, (1_700_000_000 + i * 1000,) * 2)
    (tmp_path / ".env").write_text("SECRET=1")
    folder = inspect(tmp_path)["folder"]
    assert folder["entries"] == 4 and folder["files"] == 3 and folder["size_of_files_directly_in_it"] == "30 B"
    assert folder["newest_entry"].startswith("c.log") and folder["oldest_entry"].startswith("a.log")
    assert "1 entries hold secrets" in folder["off_limits"]


def test_a_missing_path_is_an_error_naming_where_it_stops(tmp_path):
    out = REGISTRY.call("inspect_path", {"path": str(tmp_path / "nope" / "x")})
    assert out["status"] == "error" and "has no entry nope" in out["error"]


@pytest.mark.parametrize("suffix, pack", [(".gz", gzip.compress), (".xz", lzma.compress), (".bz2", bz2.compress)])
def test_read_log_reads_compressed_logs_decompressed(tmp_path, suffix, pack):
    lines = "".join(f"2026-01-01 00:00:{i:02d} INFO step {i}\n" for i in range(50)) + "2026-01-01 00:01:00 ERROR disk gone\n"
    path = tmp_path / f"app.log.1{suffix}"
    path.write_bytes(pack(lines.encode()))
    out = REGISTRY.call("read_log", {"path": str(path), "level": "error"})
    assert out["status"] == "ok", out
    assert out["data"]["compression"].startswith(suffix.strip(".").replace("bz2", "bzip2").replace("gz", "gzip"))
    assert any("disk gone" in line for line in out["data"]["lines"])


def test_read_log_names_a_zstd_log_it_cannot_decompress(tmp_path):
    plain = tmp_path / "app.log"
    plain.write_text("2026-01-01 ERROR boom\n")
    subprocess.run(["zstd", "-q", str(plain), "-o", str(tmp_path / "app.log.1.zst")], check=True)
    out = REGISTRY.call("read_log", {"path": str(tmp_path / "app.log.1.zst")})
    assert out["status"] == "error" and "zstd-compressed" in out["error"]
    assert inspect(tmp_path / "app.log.1.zst")["content"]["kind"] == "zstd-compressed data"


def test_file_capabilities_are_decoded_where_set(tmp_path):
    program = tmp_path / "server"
    program.write_bytes(open("/bin/true", "rb").read())
    os.chmod(program, 0o755)
    assert "capabilities" not in inspect(program)
    subprocess.run(["setcap", "cap_net_bind_service,cap_net_raw+ep", str(program)], check=True)
    caps = inspect(program)["capabilities"]
    assert caps == {"permitted": ["cap_net_bind_service", "cap_net_raw"], "effective": True}
