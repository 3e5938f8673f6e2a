"""The redactor: every kind of secret is replaced by a marker naming its kind; ordinary text,
including text that merely talks about passwords, is left alone; and it is fast enough to run on
every observation."""

from __future__ import annotations

import time

import pytest

from appliance.tools.redact import looks_random, redact, redact_value

# (text with a secret, the secret itself, the marker kind expected)
CASES = [
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq8Zq7sB1\nabcdefXYZ\n-----END RSA PRIVATE KEY-----",
     "MIIEowIBAAKCAQEAq8Zq7sB1", "private-key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n(cut off here", "b3BlbnNzaC1rZXktdjEAAAAA", "private-key"),
    ("key id AKIAZ3MPLE7Q2RSTUVWX in config", "AKIAZ3MPLE7Q2RSTUVWX", "aws-access-key"),
    ("aws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY12", "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY12", "secret"),
    ("token ghp_Zx9aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV3 used", "ghp_Zx9aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV3", "github-token"),
    ("github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789abc", "github_pat_11ABCDEFG0aBcDeFgHiJkL", "github-token"),
    ("CI_TOKEN glpat-Ab3dEf6hIj9kLm2nOp5q here", "glpat-Ab3dEf6hIj9kLm2nOp5q", "gitlab-token"),
    ("slack xoxb-2048123456-4096123456-AbCdEfGhIjKlMnOpQrStUv", "xoxb-2048123456-4096123456-AbCdEfGhIjKlMnOpQrStUv", "slack-token"),
    ("post to https://hooks.slack.com/services/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", "T0AAAAAAA/B0BBBBBBB/XyZxyz", "slack-webhook"),
    ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
     "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "jwt"),
    ("maps key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "google-api-key"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"),
    ("OPENAI sk-proj-Qa8sD7fG6hJ5kL4zX3cV2bN1mQ0wE9rT", "sk-proj-Qa8sD7fG6hJ5kL4zX3cV2bN1mQ0wE9rT", "api-key"),
    ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "huggingface-token"),
    ("DATABASE_URL=postgres://app:Tr0ub4dor3@db.internal:5432/prod", "Tr0ub4dor3", "url-password"),
    ("DB_PASSWORD=correct-horse-battery", "correct-horse-battery", "password"),
    ('PGPASSWORD="two words here"', "two words here", "password"),
    ("secret: s3cr3t-v4lue", "s3cr3t-v4lue", "secret"),
    ('{"api_key": "k-77f0e1d2c3"}', "k-77f0e1d2c3", "api-key"),
    ("refresh_token=rt.9f8e7d6c5b4a", "rt.9f8e7d6c5b4a", "token"),
    ("Authorization: Bearer abc.def-ghi_jkl012", "abc.def-ghi_jkl012", "auth-header"),
    ("Cookie: sessionid=8f14e45fceea167a5a36dedd4bea2543", "8f14e45fceea167a5a36dedd4bea2543", "cookie"),
    ("mysql -u root -pHunter2Hunter2 shop", "Hunter2Hunter2", "password"),
    ("sshpass -p Kestrel-77 ssh admin@10.0.0.5", "Kestrel-77", "password"),
    ("backup --password Sw0rdfish! --verbose", "Sw0rdfish!", "password"),
    ("session_key=Zx8Kq2Lm9Pw4Rt7Yv1Bn3Cd6Fg0Hj5Ts", "Zx8Kq2Lm9Pw4Rt7Yv1Bn3Cd6Fg0Hj5Ts", "high-entropy-secret"),
    ("root:$6$rounds=5000$saltsalt$Kk8s9d7f6g5h4j3k2l1zXcVbNm0QwErTy:19000", "Kk8s9d7f6g5h4j3k2l1zXcVbNm0QwErTy", "password-hash"),
]


@pytest.mark.parametrize("text,secret,kind", CASES, ids=[c[2] + str(i) for i, c in enumerate(CASES)])
def test_each_kind_of_secret_is_replaced_by_its_marker(text, secret, kind):
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out


@pytest.mark.parametrize("text", [
    "PasswordAuthentication no",
    "Failed password for invalid user admin from 203.0.113.9 port 52144 ssh2",
    "password_min_length=8",
    "bypass=on",
    "path=/var/lib/docker/overlay2/3f9c2a1b7d6e5f4a",
    "password: ${DB_PASSWORD}",
    "token: <your token here>",
    "Nov 29 11:02:03 host kernel: disk-usage 92% on /dev/sda1 (ext4)",
    "sshd[812]: Accepted publickey for alice from 192.0.2.4 port 50122",
    "https://example.org/docs/install.html",
    # the kernel's own names of a memfd or an anonymous inode, as a process or a mapping is named
    "memfd:sealed-91",
    "anon_inode:bpf-map1",
])
def test_ordinary_text_is_left_alone(text):
    assert redact(text) == text


def test_surrounding_text_survives_so_the_model_still_learns_a_secret_is_set():
    out = redact("host=db.local\nuser=app\npassword=hunter2\nport=5432\n")
    assert out == "host=db.local\nuser=app\npassword=[REDACTED:password]\nport=5432\n"


def test_redacting_twice_changes_nothing_more():
    once = redact("\n".join(c[0] for c in CASES))
    assert redact(once) == once


def test_redact_value_walks_nested_data_and_blanks_secret_named_keys():
    data = {
        "password": "plain",
        "token": 12345678,
        "items": [{"cmd": "curl -u bob:pw https://x -H 'Authorization: token ghp_Zx9aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV3'"}],
        "tuple": ("AKIAZ3MPLE7Q2RSTUVWX",),
        "tokens_used": 12,  # a count, not a secret
        "ok": True,
    }
    out = redact_value(data)
    assert out["password"] == "[REDACTED:password]"
    assert out["token"] == "[REDACTED:token]"
    assert "ghp_" not in out["items"][0]["cmd"]
    assert out["tuple"] == ("[REDACTED:aws-access-key]",)
    assert out["tokens_used"] == 12 and out["ok"] is True


def test_entropy_check_separates_generated_values_from_words_and_paths():
    assert looks_random("Zx8Kq2Lm9Pw4Rt7Yv1Bn3Cd6Fg0Hj5Ts")
    assert not looks_random("/usr/lib/x86_64-linux-gnu/libc.so")
    assert not looks_random("correcthorsebatterystaple")
    assert not looks_random("short1A")


def test_fast_enough_for_every_observation():
    # 8 KB is a large observation; a 1 MB log tail is the worst case a tool ever redacts.
    lines = [f"Nov 29 10:{i % 60:02d}:00 host app[{i}]: request id={i:08x} took {i % 97} ms user=u{i}" for i in range(12000)]
    text = "\n".join(lines)[: 1 << 20]
    started = time.perf_counter()
    for _ in range(20):
        redact(text[:8192])
    per_observation = (time.perf_counter() - started) / 20
    started = time.perf_counter()
    redact(text)
    whole = time.perf_counter() - started
    assert per_observation < 0.02, f"{per_observation * 1000:.1f} ms per 8 KB observation"
    assert whole < 2.0, f"{whole:.2f} s for 1 MB"


# --- properties -------------------------------------------------------------------------------

from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ALNUM = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=36, max_size=40)
AROUND = st.text(alphabet=" \n\t,;:()[]{}'\"=abcXYZ019./-", max_size=30)


@settings(max_examples=200, deadline=None)
@given(body=ALNUM, before=AROUND, after=AROUND, prefix=st.sampled_from(["ghp_", "gho_", "ghs_"]))
def test_a_github_token_never_survives_whatever_surrounds_it(body, before, after, prefix):
    token = prefix + body
    assert token not in redact(before + token + after)


@settings(max_examples=200, deadline=None)
@given(password=st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!%^*+-_.~", min_size=6, max_size=30),
       key=st.sampled_from(["password", "DB_PASSWORD", "PGPASSWORD", "client_secret", "api_key", "auth_token", "mysql.pass"]),
       sep=st.sampled_from(["=", ": ", " = ", "=>", '": "']),
       before=AROUND)
def test_an_assigned_password_never_survives(password, key, sep, before):
    from appliance.tools.redact import _PLACEHOLDER
    assume(not _PLACEHOLDER.match(password))  # placeholders such as xxxxxx or none are left alone
    assume(password not in before and password not in key and password not in "[REDACTED:password]")
    quote = '"' if sep == '": "' else ""
    out = redact(f'{before} {quote}{key}{sep}{password}{quote}\n')
    assert password not in out
    assert f"{key}{sep}[REDACTED:" in out  # the key stays readable, only its value goes


@settings(max_examples=200, deadline=None)
@given(password=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789!$%^*+-_.~", min_size=4, max_size=24),
       scheme=st.sampled_from(["postgres", "mysql", "https", "redis", "amqp", "mongodb+srv"]))
def test_a_password_in_a_url_never_survives(password, scheme):
    text = f"connect to {scheme}://svc:{password}@db.example.internal:5432/app now"
    out = redact(text)
    assert f":{password}@" not in out and "svc:[REDACTED:url-password]@db.example.internal" in out


def test_a_user_password_line_is_still_a_secret_beside_the_kernels_own_names():
    """rsyncd secrets: `user:password` alone on a line; only the kernel's TYPE:NAME objects are left."""
    assert redact("backup:S3cretPw9") == "backup:[REDACTED:password]"
    assert redact_value({"name": "memfd:sealed-91"}) == {"name": "memfd:sealed-91"}
