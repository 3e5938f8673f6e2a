"""Issue 33's classes of secret shapes, written from the formats' own documentation (man pages of
pppd, postfix, davfs2, ipsec.secrets, rsyncd.conf, smbpasswd, shadow, PostgreSQL's .pgpass, the SQL
dialects' CREATE/ALTER USER, RFC 4954 SMTP AUTH, RFC 3501 IMAP LOGIN, RFC 959 FTP, the redis AUTH
command, the Kubernetes pod spec, the programs' --help for their password options), and ordinary
configuration and command lines of the same formats that must come back unchanged.

Values are random per run from a seeded generator; each entry names what must never be shown."""

from __future__ import annotations

import base64
import json

from support.secret_shapes import ALNUM, B64, HEX, LOWER, UPPER, DIGITS, Gen


def _pw(g: Gen) -> str:
    """A password people choose: letters, digits and a symbol or two, no quote or space."""
    return g.s(ALNUM, 5) + g.rng.choice("!#%^*@:=,;&/") + g.s(ALNUM, 4) + g.rng.choice("!#%^*-_.") + g.s(DIGITS, 2)


def _plain(g: Gen) -> str:
    """A password of letters and digits only (nothing shell or SQL would quote)."""
    return g.s(UPPER, 1) + g.s(LOWER, 5) + g.s(DIGITS, 3) + g.s(ALNUM, 4)


def entries(g: Gen, entry_type) -> list:
    out: list = []

    def add(shape: str, fmt: str, text: str, *canaries: str) -> None:
        out.append(entry_type(f"i33:{shape}", fmt, text, canaries))

    # --- command lines, as a history file or a log line quotes them ---------------------------------
    p = [_plain(g) for _ in range(60)]
    q = [_pw(g) for _ in range(40)]
    add("mysql-p-glued-db", "history", f"mysqldump -u backup -p{p[0]} --all-databases > all.sql", p[0])
    add("mariadb-p-glued", "history", f"mariadb -h db.internal -uapp -p{p[1]} shop", p[1])
    add("sqlcmd-P-spaced-log", "log", f"2026-12-01 10:00:00 cron[411]: running sqlcmd -S db01 -U sa -P {p[2]} -i nightly.sql", p[2])
    add("bcp-P-glued", "history", f"bcp dbo.orders out orders.dat -S db01 -U sa -P{p[3]} -c", p[3])
    add("ssh-keygen-N", "history", f"ssh-keygen -t ed25519 -N {p[4]} -f /root/.ssh/deploy", p[4])
    add("ssh-keygen-P-N", "history", f"ssh-keygen -p -P {p[5]} -N {p[6]} -f id_rsa", p[5], p[6])
    add("ssh-keygen-N-quoted-words", "history", f"ssh-keygen -N '{p[7]} {p[8]}' -f key", p[7], p[8])
    add("sqlplus-user-slash-pw-at", "history", f"sqlplus -s scott/{p[9]}@//db.internal:1521/ORCL @report.sql", p[9])
    add("rman-target", "history", f"rman target sys/{p[10]}@prod catalog rman/{p[11]}@rcat", p[10], p[11])
    add("expdp-userid", "history", f"expdp userid=system/{p[12]}@orcl schemas=hr directory=dp", p[12])
    add("sqlldr-userid", "log", f"2026-12-01 10:00:05 loader: sqlldr userid=loader/{p[13]} control=load.ctl", p[13])
    add("lftp-user-comma", "history", f"lftp -u deploy,{p[14]} -e 'mirror -R site' ftp.example.com", p[14])
    add("smbclient-U-percent-long", "history", f"smbclient //fs01/backup --user=svc%{p[15]} -c ls", p[15])
    add("rabbitmqctl-add-user", "history", f"rabbitmqctl add_user monitoring {p[16]}", p[16])
    add("rabbitmqctl-change-password", "history", f"rabbitmqctl change_password admin {p[17]}", p[17])
    add("redis-cli-auth-positional", "history", f"redis-cli -h cache.internal -p 6379 AUTH {p[18]}", p[18])
    add("redis-cli-auth-user", "history", f"redis-cli --user app AUTH app {p[19]}", p[19])
    add("htpasswd-bc", "history", f"htpasswd -bc /etc/nginx/.htpasswd admin {p[20]}", p[20])
    add("htpasswd-nb", "history", f"htpasswd -nbB ops {p[21]}", p[21])
    add("mysqladmin-password", "history", f"mysqladmin -u root password {p[22]}", p[22])
    add("nmcli-wifi-password", "history", f"nmcli device wifi connect Office password {p[23]}", p[23])
    add("nmcli-psk", "history", f"nmcli con modify Office wifi-sec.psk {p[24]}", p[24])
    add("wpa-passphrase", "history", f"wpa_passphrase HomeNet {p[25]} >> /etc/wpa_supplicant.conf", p[25])
    add("openssl-passwd", "history", f"openssl passwd -6 {p[26]}", p[26])
    add("openssl-pass-stdin-k", "history", f"openssl enc -aes-256-cbc -k {p[27]} -in a -out b", p[27])
    add("7z-p-glued", "history", f"7z a -p{p[28]} -mhe=on backup.7z /srv/data", p[28])
    add("zip-P", "history", f"zip -r -P {p[29]} docs.zip docs/", p[29])
    add("unzip-P", "history", f"unzip -P {p[30]} docs.zip", p[30])
    add("unrar-p", "history", f"unrar x -p{p[31]} archive.rar", p[31])
    add("ipmitool-P", "history", f"ipmitool -I lanplus -H 10.0.0.9 -U ADMIN -P {p[32]} chassis status", p[32])
    add("mosquitto-pub-P", "history", f"mosquitto_pub -h broker -u sensor -P {p[33]} -t t -m 1", p[33])
    add("keytool-storepass", "history", f"keytool -importcert -keystore app.jks -storepass {p[34]} -file ca.crt", p[34])
    add("keytool-keypass", "history", f"keytool -genkeypair -alias app -keypass {p[35]} -storepass {p[36]}", p[35], p[36])
    add("useradd-p-hash", "history", f"useradd -m -p {p[37]} deploy", p[37])
    add("docker-login-password-long", "history", f"docker login --username bob --password {p[38]} ghcr.io", p[38])
    add("podman-login-p", "history", f"podman login -u bob -p {p[39]} quay.io", p[39])
    add("mongosh-p", "history", f"mongosh --host db -u admin -p {p[40]} --authenticationDatabase admin", p[40])
    add("mosquitto-sub-P-glued", "history", f"mosquitto_sub -t '#' -u u -P{p[41]}", p[41])
    add("password-two-words", "history", f"backup-tool --password '{p[42]} {p[43]}' --verbose", p[42], p[43])
    add("password-two-words-double", "history", f'deploy --db-password "{p[44]} {p[45]}" --region eu', p[44], p[45])
    add("var-prefix-pgpassword", "history", f"PGPASSWORD={p[46]} psql -h db -U app shop", p[46])
    add("var-prefix-mysql-pwd", "history", f"MYSQL_PWD={p[47]} mysql -u root", p[47])
    add("env-var-prefix", "history", f"env AWS_SECRET_ACCESS_KEY={p[48]} aws s3 ls", p[48])
    add("echo-pipe-passwd-stdin", "history", f"echo {p[49]} | passwd --stdin deploy", p[49])
    add("echo-pipe-chpasswd", "history", f"echo 'deploy:{p[50]}' | chpasswd", p[50])
    add("echo-pipe-docker-login", "history", f"echo {p[51]} | docker login -u bob --password-stdin", p[51])
    add("printf-pipe-sudo", "history", f"printf '%s\\n' {p[52]} | sudo -S systemctl restart app", p[52])
    add("echo-n-pipe-cryptsetup", "history", f"echo -n {p[53]} | cryptsetup luksOpen /dev/sdb1 data -", p[53])
    add("sshpass-p-glued", "history", f"sshpass -p{p[54]} ssh admin@10.0.0.5 uptime", p[54])
    add("xfreerdp-p", "history", f"xfreerdp /v:10.0.0.7 /u:admin /p:{p[55]}", p[55])
    add("ldappasswd-s", "history", f"ldappasswd -x -D cn=admin,dc=ex -w {p[56]} -s {p[57]} uid=bob,dc=ex", p[56], p[57])
    add("vault-login-token", "history", f"vault login {g.s(ALNUM, 26)}{p[58]}", p[58])
    add("curl-u-glued", "history", f"curl -uadmin:{p[59]} https://api.example.com/v1/status", p[59])

    # --- credential-file lines ----------------------------------------------------------------------
    add("pgpass-line", "ini", f"db.internal:5432:shop:app:{q[0]}", q[0])
    add("pgpass-wildcards", "ini", f"*:*:*:replicator:{q[1]}", q[1])
    add("sasl-passwd-line", "ini", f"[smtp.example.com]:587 relay@example.com:{q[2]}", q[2])
    add("host-port-user-password", "ini", f"mail.example.org:465 alerts:{q[3]}", q[3])
    add("davfs2-secrets-line", "ini", f"https://dav.example.com/remote.php/webdav bob {p[0][::-1]}", p[0][::-1])
    add("davfs2-mountpoint-line", "ini", f"/mnt/dav alice {p[1][::-1]}", p[1][::-1])
    add("ipsec-psk", "ini", f'@gw.example.com @road.example.com : PSK "{q[4]}"', q[4])
    add("ipsec-psk-base64", "ini", f": PSK 0s{g.s(B64, 40)}=", )
    out[-1] = entry_type(out[-1].shape, "ini", out[-1].text, (out[-1].text.split("0s", 1)[1],))
    add("ipsec-xauth", "ini", f'carol : XAUTH "{q[5]}"', q[5])
    add("ipsec-eap", "ini", f'dave : EAP "{q[6]}"', q[6])
    add("ipsec-rsa-passphrase", "ini", f': RSA moonKey.pem "{q[7]}"', q[7])
    add("rsyncd-secrets-line", "ini", f"backup:{p[2][::-1]}", p[2][::-1])
    nt = g.s("0123456789ABCDEF", 32)
    add("smbpasswd-line", "ini", f"bob:1000:XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX:{nt}:[U          ]:LCT-5F3A2B1C:", nt)
    lm, nt2 = g.s("0123456789ABCDEF", 32), g.s("0123456789ABCDEF", 32)
    add("smbpasswd-lm-nt", "ini", f"alice:1001:{lm}:{nt2}:[U          ]:LCT-5F3A2B1D:", lm, nt2)
    salt, digest = g.s(ALNUM + "./", 16), g.s(ALNUM + "./", 86)
    add("shadow-sha512-line", "ini", f"deploy:$6${salt}${digest}:19700:0:99999:7:::", digest)
    ysalt, ydigest = g.s(ALNUM + "./", 22), g.s(ALNUM + "./", 43)
    add("shadow-yescrypt-line", "ini", f"bob:$y$j9T${ysalt}${ydigest}:19700:0:99999:7:::", ydigest)
    add("htpasswd-apr1-line", "ini", f"admin:$apr1${g.s(ALNUM, 8)}${g.s(ALNUM + './', 22)}")
    out[-1] = entry_type(out[-1].shape, "ini", out[-1].text, (out[-1].text.rsplit("$", 1)[1],))
    add("chap-secrets-quoted", "ini", f'bob\tvpn-server\t"{q[8]}"\t*', q[8])
    add("netrc-multiline", "ini", f"machine ftp.example.com\n  login deploy\n  password {q[9]}", q[9])
    add("my-cnf-password", "ini", f"[client]\nuser=root\npassword={q[10]}", q[10])
    add("openvpn-inline-auth", "ini", f"<auth-user-pass>\nvpnuser\n{g.s(ALNUM, 6)}{p[3][::-1]}\n</auth-user-pass>")
    out[-1] = entry_type(out[-1].shape, "ini", out[-1].text, (out[-1].text.split("\n")[2],))
    add("cifs-credentials", "ini", f"username=svc\npassword={q[11]}\ndomain=CORP", q[11])
    add("fstab-cifs-password", "ini", f"//fs01/share /mnt/share cifs username=svc,password={p[4][::-1]},uid=1000 0 0", p[4][::-1])
    add("mount-o-pass", "history", f"mount -t cifs //fs/s /mnt -o user=svc,pass={p[5][::-1]}", p[5][::-1])

    # --- structured: Kubernetes, JSON, SQL, protocol traces --------------------------------------------
    add("k8s-env-name-value-yaml", "yaml", f"        env:\n        - name: DB_PASSWORD\n          value: {q[12]}", q[12])
    add("k8s-env-name-value-quoted", "yaml", f'        - name: "API_TOKEN"\n          value: "{q[13]}"', q[13])
    add("k8s-env-name-value-json-inline", "json", f'{{"name": "SECRET_KEY", "value": "{q[14]}"}}', q[14])
    add("k8s-env-name-value-json-lines", "json", f'    {{\n      "name": "REDIS_PASSWORD",\n      "value": "{q[15]}"\n    }}', q[15])
    add("docker-inspect-env", "json", f'    "Env": ["PATH=/usr/bin", "POSTGRES_PASSWORD={p[6][::-1]}", "LANG=C"],', p[6][::-1])
    add("json-escaped-in-json", "json", f'{{"config": "{{\\"password\\": \\"{p[7][::-1]}\\", \\"user\\": \\"app\\"}}"}}', p[7][::-1])
    add("json-escaped-token", "json", f'"payload": "{{\\"api_token\\":\\"{g.s(ALNUM, 32)}\\"}}"')
    out[-1] = entry_type(out[-1].shape, "json", out[-1].text, (out[-1].text.split('\\"')[3],))
    add("sql-identified-by", "sql", f"CREATE USER 'app'@'%' IDENTIFIED BY '{q[16]}';", q[16])
    add("sql-alter-identified-by", "sql", f"ALTER USER app IDENTIFIED BY \"{p[8][::-1]}\";", p[8][::-1])
    add("sql-identified-with", "sql", f"CREATE USER bob IDENTIFIED WITH mysql_native_password BY '{q[17]}';", q[17])
    add("sql-grant-identified", "sql", f"GRANT ALL ON shop.* TO 'app'@'localhost' IDENTIFIED BY '{q[18]}';", q[18])
    add("sql-pg-with-password", "sql", f"CREATE ROLE app WITH LOGIN PASSWORD '{q[19]}';", q[19])
    add("sql-pg-encrypted-password", "sql", f"ALTER USER app WITH ENCRYPTED PASSWORD '{q[20]}';", q[20])
    add("sql-set-password", "sql", f"SET PASSWORD FOR 'bob'@'%' = PASSWORD('{q[21]}');", q[21])
    add("sql-mssql-login", "sql", f"CREATE LOGIN app WITH PASSWORD = '{q[22]}', CHECK_POLICY = OFF;", q[22])
    add("sql-oracle-identified-log", "log", f"2026-12-01 10:00:06 audit: stmt=ALTER USER hr IDENTIFIED BY {p[9][::-1]}", p[9][::-1])
    plain = base64.b64encode(f"\0bob\0{q[23]}".encode()).decode()
    add("smtp-auth-plain", "trace", f"C: EHLO client.example.com\nC: AUTH PLAIN {plain}\nS: 235 2.7.0 Authentication successful", plain)
    user64, pass64 = base64.b64encode(b"alerts@example.com").decode(), base64.b64encode(q[24].encode()).decode()
    add("smtp-auth-login", "trace", f"C: AUTH LOGIN\nS: 334 VXNlcm5hbWU6\nC: {user64}\nS: 334 UGFzc3dvcmQ6\nC: {pass64}\nS: 235 ok", pass64)
    pass64b = base64.b64encode(q[30].encode()).decode()
    add("smtp-auth-login-initial", "trace", f"> AUTH LOGIN {user64}\n< 334 UGFzc3dvcmQ6\n> {pass64b}", pass64b)
    add("imap-login", "trace", f"C: a001 LOGIN bob {p[10][::-1]}\nS: a001 OK LOGIN completed", p[10][::-1])
    add("ftp-pass", "trace", f"USER anonymous\n331 Please specify the password.\nPASS {q[25]}\n230 Login successful.", q[25])
    add("pop3-pass", "trace", f"+OK POP3 ready\nUSER bob\n+OK\nPASS {p[11][::-1]}\n+OK logged in", p[11][::-1])
    add("redis-auth-trace", "trace", f"127.0.0.1:6379> AUTH {p[12][::-1]}\nOK", p[12][::-1])
    add("redis-monitor-auth", "trace", f'1733047200.123456 [0 10.0.0.4:51234] "AUTH" "{p[13][::-1]}"', p[13][::-1])
    add("redis-auth-user-pass", "trace", f"AUTH default {p[14][::-1]}", p[14][::-1])
    xo = base64.b64encode(f"user=bob@example.com\x01auth=Bearer ya29.{g.s(ALNUM, 40)}\x01\x01".encode()).decode()
    add("imap-xoauth2", "trace", f"C: A01 AUTHENTICATE XOAUTH2 {xo}", xo)
    add("smtp-auth-xoauth2", "trace", f"AUTH XOAUTH2 {xo[::-1]}", xo[::-1])

    # --- headers and cookies, session ids, signatures --------------------------------------------
    tok = [g.s(ALNUM, 32) for _ in range(20)]
    add("header-x-api-key", "log", f"2026-12-01 10:00:07 proxy: > X-Api-Key: {tok[0]}", tok[0])
    add("header-private-token", "log", f"2026-12-01 10:00:08 ci: > PRIVATE-TOKEN: {tok[1]}", tok[1])
    add("header-x-auth-token", "log", f"X-Auth-Token: {tok[2]}", tok[2])
    add("header-x-vault-token", "log", f"> X-Vault-Token: hvs.{tok[3]}", tok[3])
    add("header-api-key-lower", "log", f"api-key: {tok[4]}", tok[4])
    add("header-x-amz-security-token", "log", f"x-amz-security-token: {g.s(B64, 120)}")
    out[-1] = entry_type(out[-1].shape, "log", out[-1].text, (out[-1].text.split(": ", 1)[1],))
    add("curl-H-api-key", "history", f"curl -H 'X-API-Key: {tok[5]}' https://api.example.com", tok[5])
    add("jsessionid-cookie", "log", f"GET /app;jsessionid={g.s('0123456789ABCDEF', 32)} HTTP/1.1")
    out[-1] = entry_type(out[-1].shape, "log", out[-1].text, (out[-1].text.split("=", 1)[1].split()[0],))
    add("phpsessid-cookie", "log", f"Cookie: PHPSESSID={g.s('abcdefghijklmnopqrstuv0123456789', 26)}")
    out[-1] = entry_type(out[-1].shape, "log", out[-1].text, (out[-1].text.split("=", 1)[1],))
    add("session-id-kv", "log", f"2026-12-01 10:00:09 app: login ok user=bob session_id={tok[6]}", tok[6])
    add("set-cookie-session", "log", f"< Set-Cookie: session={tok[7]}; Path=/; HttpOnly; Secure", tok[7])
    add("aws-presigned-signature", "url",
        f"GET https://bucket.s3.amazonaws.com/f.tar?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature={g.s(HEX, 64)}&X-Amz-Expires=900")
    out[-1] = entry_type(out[-1].shape, "url", out[-1].text, (out[-1].text.split("Signature=")[1].split("&")[0],))
    sas = g.s(B64, 43) + "="
    add("azure-sas-sig", "url", f"https://acct.blob.core.windows.net/c/b?sv=2022-11-02&ss=b&sp=r&sig={sas.replace('+', '%2B').replace('/', '%2F')}",
        sas.replace('+', '%2B').replace('/', '%2F'))
    add("cloudfront-signature", "url", f"https://d1.cloudfront.net/v.mp4?Expires=1733050800&Signature={g.s(ALNUM + '-_~', 120)}&Key-Pair-Id=K2J")
    out[-1] = entry_type(out[-1].shape, "url", out[-1].text, (out[-1].text.split("Signature=")[1].split("&")[0],))

    # --- tokens: URL users, prose, tails, bare values after a secret word ---------------------------
    hex40 = g.s(HEX, 40)
    add("url-token-user-hex", "history", f"git clone https://{hex40}@github.com/acme/infra.git", hex40)
    tu = g.s(ALNUM, 36)
    add("url-token-user-alnum", "log", f"2026-12-01 10:00:10 ci: fetching https://{tu}@gitlab.example.com/grp/app.git", tu)
    add("prose-api-key-is-hex", "log", f"2026-12-01 10:00:11 support: the customer's API key is {tok[8].lower()[:32]}", tok[8].lower()[:32])
    add("prose-secret-hex", "log", f"rotated webhook secret {g.s(HEX, 40)} for repo acme/app")
    out[-1] = entry_type(out[-1].shape, "log", out[-1].text, (out[-1].text.split()[3],))
    add("prose-token-colon-b64", "log", f"new token: {tok[9]} (expires in 30 days)", tok[9])
    add("prose-key-for-vendor", "log", f"Datadog key {g.s(HEX, 32)} added to agent", )
    out[-1] = entry_type(out[-1].shape, "log", out[-1].text, (out[-1].text.split()[2],))
    add("prose-password-was-set", "log", f"password was reset to {tok[10]} by admin", tok[10])
    add("aws-key-with-tail", "log", f"key AKIA{g.s(UPPER + DIGITS, 16)}{g.s(ALNUM, 14)} used")
    out[-1] = entry_type(out[-1].shape, "log", out[-1].text, (out[-1].text.split()[1],))
    add("github-token-glued-tail", "log", f"token=ghp_{g.s(ALNUM, 36)}{g.s(ALNUM, 12)}.")
    out[-1] = entry_type(out[-1].shape, "log", out[-1].text, (out[-1].text.split("=")[1].rstrip("."),))
    add("stripe-key-in-prose", "log", f"please use sk_live_{g.s(ALNUM, 24)} for billing")
    out[-1] = entry_type(out[-1].shape, "log", out[-1].text, (out[-1].text.split()[2],))
    add("bare-hex64-after-secret-colon", "env", f"secret: {g.s(HEX, 64)}")
    out[-1] = entry_type(out[-1].shape, "env", out[-1].text, (out[-1].text.split()[1],))
    add("bare-b64-after-key-space", "ini", f"key {g.s(B64, 44)}")
    out[-1] = entry_type(out[-1].shape, "ini", out[-1].text, (out[-1].text.split()[1],))
    add("token-tab-separated", "ini", f"token\t{tok[11]}", tok[11])
    add("auth-key-tab", "ini", f"auth\t{tok[12]}", tok[12])
    add("sig-equals", "log", f"callback ok sig={tok[13]} ts=1733047200", tok[13])
    add("cookie-equals", "log", f"cookie={tok[14]}", tok[14])
    add("credential-colon", "yaml", f"credential: {tok[15]}", tok[15])
    add("private-colon", "yaml", f"private: {tok[16]}", tok[16])
    add("pass-equals-short-name", "ini", f"pass={q[26]}", q[26])
    add("pw-colon", "yaml", f"pw: {q[27]}", q[27])
    add("pwd-equals", "env", f"PWD={q[28]}", q[28])
    add("passwd-quoted-double-colon", "ini", f'passwd :: "{q[29]}"', q[29])

    # --- a token split across two lines --------------------------------------------------------------
    gh = "ghp_" + g.s(ALNUM, 36)
    add("split-github-token-two-lines", "log", f"2026-12-01 10:00:12 app: token {gh[:18]}\n{gh[18:]} accepted", gh[:18], gh[18:])
    aws = g.s(ALNUM + "+/", 40)
    add("split-bare-secret-two-lines", "log", f"aws secret {aws[:20]}\n    {aws[20:]}", aws[:20], aws[20:])
    slack = "xoxb-" + g.s(DIGITS, 12) + "-" + g.s(ALNUM, 24)
    add("split-slack-token-quoted-lines", "log", f"> {slack[:14]}\n> {slack[14:]}", slack[14:])

    # --- more forms of the classes above, one line each ({pw} is where the secret goes) -----------------
    for shape, fmt, template in (
        ("setenv-csh", "history", "setenv SECRET_KEY {pw}"), ("powershell-env", "history", '$env:API_KEY = "{pw}"'),
        ("systemd-environment-quoted", "ini", 'Environment="DB_PASSWORD={pw}"'), ("xtrace-export", "log", "+ export API_TOKEN={pw}"),
        ("jdbc-password-param", "url", "jdbc:mysql://db:3306/shop?user=app&password={pw}"),
        ("ado-pwd", "ini", "Server=db;Database=shop;User Id=sa;Pwd={pw};"),
        ("redis-url-no-user", "url", "redis://:{pw}@cache:6379/0"), ("prose-password-is", "log", "the wifi password is {pw}"),
        ("prose-password-colon", "log", "my password: {pw}"), ("prose-pin-was", "log", "new pin was {pw}."),
        ("mysql-password-equals", "history", "mysql --user=root --password={pw} shop"),
        ("mysql-p-quoted-glued", "history", "mysql -uroot -p'{pw}' shop"),
        ("wget-http-password", "history", "wget --http-password {pw} http://files.example.com/a"),
        ("java-truststore-password", "cmdline", "java -Djavax.net.ssl.trustStorePassword={pw} -jar app.jar"),
        ("docker-run-e", "history", "docker run -e POSTGRES_PASSWORD={pw} postgres:16"),
        ("kubectl-from-literal", "history", "kubectl create secret generic db --from-literal=password={pw}"),
        ("helm-set-password", "history", "helm install app ./chart --set auth.password={pw}"),
        ("ansible-extra-var", "history", "ansible-playbook site.yml -e 'db_password={pw}'"),
        ("az-login-p", "history", "az login -u bob@example.com -p {pw}"),
        ("gh-with-token-herestring", "history", "gh auth login --with-token <<< {pw}"),
        ("smbpasswd-herestring", "history", 'smbpasswd -a bob <<< "{pw}"'),
        ("rclone-secret-positional", "history", "rclone config create r s3 secret_access_key {pw}"),
        ("aws-configure-set", "history", "aws configure set aws_secret_access_key {pw}"),
        ("ncftp-p", "history", "ncftp -u bob -p {pw} ftp.example.com"),
        ("influx-password", "history", "influx -username admin -password {pw}"),
        ("echo-pipe-kinit", "history", 'echo "{pw}" | kinit bob@EXAMPLE.COM'),
        ("query-access-token", "url", "GET /callback?access_token={pw}&state=xyz HTTP/1.1"),
        ("csrftoken-cookie", "log", "Cookie: csrftoken={pw}"),
        ("html-password-input", "xml", '<input type="password" name="pw" value="{pw}">'),
        ("html-escaped-xml", "log", "payload=&lt;password&gt;{pw}&lt;/password&gt;"),
        ("sudo-herestring", "history", "sudo -S <<< {pw} apt-get update"),
        ("expect-send", "history", "expect -c 'spawn ssh bob@h; expect assword; send \"{pw}\\r\"; interact'"),
        ("spaced-name-french", "ini", "mot de passe : {pw}"), ("fullwidth-colon", "ini", "密码：{pw}"),
        ("neo4j-auth", "env", "NEO4J_AUTH=neo4j/{pw}"),
    ):
        value = _plain(g)
        add(f"more-{shape}", fmt, template.replace("{pw}", value), value)

    # --- names in more languages -----------------------------------------------------------------------
    for key in ("lozinka", "geslo", "parool", "slaptažodis", "κωδικός", "סיסמה", "كلمة_المرور", "mat_khau", "kata_sandi", "katalaluan", "jelszó", "jeton", "токен", "秘钥", "トークン", "토큰",
                "segredo", "chiave_api", "schlüssel", "clé_api", "contrasenya", "palavra_passe"):
        value = _pw(g)
        add(f"lang-{key}", "ini", f"{key} = {value}", value)
        value = _pw(g)
        add(f"lang-{key}-json", "json", f'  "{key}": "{value}",', value)
    return out


# --- ordinary configuration and command lines of the same formats, that must come back unchanged ---

def ordinary_config_lines(n: int, seed: int) -> list[str]:
    """Configuration, SQL, protocol and command lines with nothing secret in them, many next to the
    words the new rules key on (`password`, `AUTH`, `name:`/`value:`, `key`, `token`, `session`)."""
    g = Gen(seed)
    r = g.rng
    words = ["worker", "cache", "queue", "billing", "api", "sync", "backup", "indexer", "mailer", "search"]

    def fill(template: str) -> str:
        w = r.choice(words)
        values = dict(w=w, W=w.upper(), n=r.randint(1, 9999), port=r.randint(1024, 65535), v=f"{r.randint(1, 9)}.{r.randint(0, 20)}",
                      ip=f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}", h=g.s(HEX, 64), s=g.s(HEX, 40),
                      u=r.choice(["alice", "bob", "deploy", "postgres"]), uuid=g.uuid())
        return template.format(**values)

    templates = [
        "listen {port};", "server_name {w}.example.com;", "worker_processes {n};", "PasswordAuthentication no",
        "PermitRootLogin prohibit-password", "PubkeyAuthentication yes", "password_encryption = scram-sha-256",
        "max_connections = {n}", "shared_buffers = {n}MB", "Environment=LOG_LEVEL=info", "ExecStart=/usr/bin/{w} --port {port}",
        "        - name: LOG_LEVEL", "          value: debug", "        - name: {W}_PORT", '          value: "{port}"',
        '{{"name": "{W}_HOST", "value": "{w}.internal"}}', '    "Env": ["PATH=/usr/local/bin:/usr/bin", "LANG=C.UTF-8"],',
        "CREATE TABLE {w} (id serial primary key, name text);", "SELECT count(*) FROM {w} WHERE id = {n};",
        "ALTER TABLE users ADD COLUMN password_hash text;", "UPDATE users SET password_changed_at = now() WHERE id = {n};",
        "C: EHLO {w}.example.com", "S: 250-AUTH PLAIN LOGIN", "S: 235 2.7.0 Authentication successful",
        "C: a002 SELECT INBOX", "USER anonymous", "230 Login successful.", "127.0.0.1:6379> PING", "PONG",
        "2026-12-01 10:00:00 {w}[{n}]: session opened for user {u} by (uid=0)",
        "2026-12-01 10:00:01 {w}[{n}]: pam_unix(sshd:session): session closed for user {u}",
        "2026-12-01 10:00:02 {w}[{n}]: token bucket: {n} tokens left, refill in {n} ms",
        "2026-12-01 10:00:03 {w}[{n}]: cache key {w}:{n} evicted (lru)", "ssh-keygen -t ed25519 -C {u}@{w} -f ~/.ssh/id_{w}",
        "mysql -h db.internal -u {u} -p shop", "mysqldump --single-transaction shop > /backup/shop-{n}.sql",
        "psql -h db -U {u} -d shop -c 'select 1'", "redis-cli -h {ip} -p {port} INFO memory", "docker login ghcr.io",
        "git log --oneline -n {n}", "commit {s}", "sha256sum: {h}  {w}.tar.gz", "curl -s https://{w}.example.com/health",
        "openssl x509 -in /etc/ssl/certs/{w}.pem -noout -dates", "zip -r {w}.zip {w}/", "unzip -o {w}-{v}.zip -d /opt/{w}",
        "htpasswd -v /etc/nginx/.htpasswd {u}", "rabbitmqctl list_users", "nmcli device wifi list",
        "- name: install {w}", "  key: {w}-{n}", "  name: {w}", "  value: {n}", "request_id={uuid} status=200",
        "{ip}:{port} connected", "db.internal:5432 up", "auth: required", "auth_method = md5", "session_timeout = 30m",
        "signature_algorithm = sha256", "key_size = 4096", "token_ttl = 3600", "secret_store = vault",
        "the password policy requires 12 characters", "private: true", "cookie_secure = true", "sig_alg = ES256",
        "{w}:{port}:{w}:{u}:*", "version: '{v}'", "image: registry.example.com/{w}:{v}", "replicas: {n}",
    ]
    return [fill(r.choice(templates)) for _ in range(n)]
