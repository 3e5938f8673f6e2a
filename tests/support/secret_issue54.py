"""Issue 54's corpus: secret shapes written for it (command lines of real programs, file formats,
logs and histories) and near-miss non-secrets. Each secret is a unique canary (`canary(n)`), so a
leak is found by looking for its text; none of it is taken from the other corpus files."""

from __future__ import annotations

from dataclasses import dataclass


def canary(n: int) -> str:
    """A unique secret: the number makes it unique, the letters around it make it look like a password."""
    return f"Qz{n:04d}Wk{'ABCDEFGHJKLMNPRSTUVXYZ'[n % 22]}{n * 7 % 10}v"


@dataclass(frozen=True)
class Shape:
    name: str  # what it is (program or format)
    text: str  # the command line's words joined by \x1f, or a file's line(s)
    secret: str


# (program, arguments with {c} where the secret goes); each program's argv is a real process
COMMANDS: list[tuple[str, str]] = [
    ("mysql", "-h db1 -u app -p{c} shop"), ("mysql", "--user=app --password={c} -h db1"),
    ("mysqldump", "-u root --password {c} --all-databases"), ("mariadb", "-uroot -p{c}"),
    ("psql", "postgresql://app:{c}@db1:5432/shop"), ("pg_dump", "--dbname=postgres://bk:{c}@db1/shop"),
    ("curl", "-u admin:{c} https://api.internal/health"), ("curl", "--user deploy:{c} -sS https://x.example.org"),
    ("curl", "-H Authorization:\x1fToken\x1f{c} https://api.internal"), ("wget", "--password={c} --user=bob ftp://files.example.org/a"),
    ("wget", "--http-password {c} https://files.example.org/b"), ("sshpass", "-p {c} ssh bob@10.0.0.4"),
    ("sshpass", "-p{c} scp a.txt bob@10.0.0.4:/tmp"), ("keytool", "-list -keystore /etc/app/ks.jks -storepass {c}"),
    ("keytool", "-importkeystore -srcstorepass {c} -deststorepass {c}x -srckeystore in.p12"),
    ("openssl", "pkcs12 -in cert.p12 -passin pass:{c} -nodes"), ("openssl", "rsa -in k.pem -passout pass:{c}"),
    ("redis-cli", "-h cache1 -a {c} ping"), ("redis-cli", "-u redis://:{c}@cache1:6379/0 info"),
    ("mongosh", "--uri=mongodb://root:{c}@mongo1:27017/admin"), ("mongodump", "--username bk --password {c} --host mongo1"),
    ("mongo", "mongodb+srv://app:{c}@cluster0.example.net/test"), ("smbclient", "//nas/share -U bob%{c}"),
    ("smbclient", "-L nas --user=bob%{c}"), ("htpasswd", "-b -c /etc/nginx/.htpasswd bob {c}"),
    ("htpasswd", "-bB /etc/apache2/.htpasswd alice {c}"), ("docker", "login -u bob -p {c} registry.example.org"),
    ("docker", "login --username bob --password {c} ghcr.io"), ("podman", "login -u bob -p {c} quay.io"),
    ("helm", "repo add corp https://charts.example.org --username bob --password {c}"),
    ("sqlcmd", "-S db1 -U sa -P {c} -Q select\x1f1"), ("bcp", "dbo.t out t.dat -S db1 -U sa -P{c}"),
    ("sqlplus", "scott/{c}@orcl"), ("expdp", "system/{c}@orcl directory=dp dumpfile=x.dmp"),
    ("ldapsearch", "-x -D cn=admin,dc=example,dc=org -w {c} -H ldap://ldap1"),
    ("ldapmodify", "-D cn=admin,dc=example,dc=org -w {c} -f change.ldif"),
    ("rabbitmqctl", "add_user svc {c}"), ("rabbitmqctl", "change_password svc {c}"),
    ("ipmitool", "-I lanplus -H 10.0.0.9 -U admin -P {c} chassis status"),
    ("mosquitto_pub", "-h mqtt1 -u sensor -P {c} -t t -m 1"), ("zip", "-P {c} -r backup.zip /srv"),
    ("7z", "a -p{c} backup.7z /srv"), ("unrar", "x -p{c} files.rar"), ("unzip", "-P {c} backup.zip"),
    ("useradd", "-m -p {c} bob"), ("ssh-keygen", "-t ed25519 -N {c} -f /tmp/k"), ("ssh-keygen", "-p -P {c} -N {c}y -f /tmp/k"),
    ("xfreerdp", "/v:win1 /u:bob /p:{c}"), ("rdesktop", "-u bob -p {c} win1"), ("lftp", "-u bob,{c} ftp.example.org"),
    ("ncftp", "-u bob -p {c} ftp.example.org"), ("snmpwalk", "-v3 -l authPriv -u mon -A {c} -X {c}z 10.0.0.1"),
    ("snmpget", "-v2c -c {c} 10.0.0.1 sysName.0"), ("nmcli", "dev wifi connect HomeNet password {c}"),
    ("wpa_passphrase", "HomeNet {c}"), ("vault", "login {c}"), ("vault", "login -method=userpass username=bob password={c}"),
    ("az", "login -u bob@example.org -p {c}"), ("aws", "configure set aws_secret_access_key {c}"),
    ("gh", "auth login --with-token {c}"), ("rclone", "config create s3 s3 secret_access_key={c}"),
    ("influx", "auth create --token {c} --org corp"), ("kinit", "--password-file=/dev/stdin bob {c}"),
    ("x11vnc", "-passwd {c} -display :0"), ("vncpasswd", "-f {c}"), ("mkpasswd", "-m sha-512 {c}"),
    ("mysqladmin", "-u root password {c}"), ("net", "use \\\\srv\\share {c} /user:bob"),
    ("mount.cifs", "//nas/share /mnt -o username=bob,password={c}"), ("sshfs", "bob@h:/ /mnt -o password_stdin,pass={c}"),
    ("java", "-Djavax.net.ssl.keyStorePassword={c} -jar /opt/app/app.jar"), ("java", "-Dspring.datasource.password={c} -jar app.jar"),
    ("node", "server.js --db-pass {c}"), ("python3", "-m app.worker --api-token {c}"), ("gunicorn", "app:app --env DB_PASS={c}"),
    ("vendortool", "-xp {c} --host db1"), ("vendortool", "-ap {c}"), ("dbsync", "-P {c} -H db2"), ("dbsync", "-w {c}"),
    ("agent", "--uri=amqp://svc:{c}@mq1:5672/vhost"), ("agent", "--dsn=postgres://svc:{c}@db1/x"),
    ("certtool", "--load-privkey k.pem --password {c}"), ("pkcs12tool", "/etc/ssl/client.p12:{c}"),
    ("backupd", "--target s3://bucket --secret {c}"), ("backupd", "--encryption-key={c}"),
    ("etcdctl", "--user root:{c} get /a"), ("kubectl", "--token={c} get pods"), ("kubectl", "--password {c} get nodes"),
    ("terraform", "apply -var db_password={c}"), ("ansible-playbook", "site.yml -e ansible_become_pass={c}"),
    ("restic", "-r s3:s3.example.org/b --password-command echo\x1f{c} backup /srv"),
    ("duplicity", "--encrypt-key ABCD1234 --passphrase {c} /srv file:///b"),
    ("gpg", "--batch --passphrase {c} -d x.gpg"), ("cryptsetup", "open /dev/sdb1 data --key-file=- {c}"),
    ("svn", "checkout --username bob --password {c} https://svn.example.org/r"),
    ("git", "clone https://bob:{c}@git.example.org/r.git"), ("hg", "clone https://bob:{c}@hg.example.org/r"),
    ("pip", "install --index-url https://bob:{c}@pypi.example.org/simple app"),
    ("npm", "config set //registry.example.org/:_authToken={c}"), ("mc", "alias set s3 https://s3.example.org admin {c}"),
    ("minio", "server /data --console-address :9001 --secret-key {c}"), ("pgbouncer", "-d --auth-pass {c}"),
    ("mssql-cli", "-S db1 -U sa -P {c}"), ("clickhouse-client", "--host ch1 --password {c}"),
    ("clickhouse-client", "--password={c} --query select\x1f1"), ("cqlsh", "cas1 -u cassandra -p {c}"),
    ("neo4j-admin", "dbms set-initial-password {c}"), ("influx", "-username admin -password {c}"),
    ("mongoexport", "-u app -p {c} --db shop -c orders"), ("redis-benchmark", "-a {c} -q"),
    ("sqlite3", "db.sqlite -cmd PRAGMA\x1fkey={c}"), ("openvpn", "--config c.ovpn --auth-user-pass /tmp/up --askpass {c}"),
    ("iperf3", "-c 10.0.0.2 --username bob --rsa-public-key-path k.pem --password {c}"),
    ("jenkins-cli", "-s http://ci:8080 -auth bob:{c} build job"), ("grafana-cli", "admin reset-admin-password {c}"),
    ("wp", "user create bob bob@example.org --user_pass={c}"), ("drush", "user:password bob {c}"),
    ("vboxmanage", "startvm vm1 --password {c}"), ("esxcli", "-s esx1 -u root -p {c} system version get"),
    ("sendemail", "-f a@example.org -t b@example.org -xu a -xp {c} -s smtp.example.org:587"),
    ("swaks", "--to a@example.org --auth-user a --auth-password {c}"), ("msmtp", "--passwordeval=echo\x1f{c}"),
    ("fetchmail", "-u bob --password {c} mail.example.org"), ("hydra", "-l admin -p {c} ssh://10.0.0.5"),
]

# (format, file name, text with {c})
FILES: list[tuple[str, str, str]] = [
    ("ini", "app.ini", "[database]\nhost = db1\npassword = {c}\n"), ("ini", "remote.ini", "[sync]\nremotepass = {c}\n"),
    ("ini", "svc.cfg", "[auth]\nuser_password={c}\nretries=3\n"), ("ini", "pin.ini", "[card]\npin={c}\n"),
    ("wpa", "wpa_supplicant.conf", "network={{\n    ssid=\"Home\"\n    psk=\"{c}\"\n}}\n"),
    ("wpa", "wep.conf", "network={{\n    ssid=\"Old\"\n    wep_key0={c}\n}}\n"),
    ("env", "app.env", "DB_HOST=db1\nDB_PASSWORD={c}\n"), ("env", "svc.env", "export API_TOKEN=\"{c}\"\n"),
    ("env", "smtp.env", "SMTP_PASS='{c}'\n"), ("properties", "app.properties", "db.url=jdbc:postgresql://db1/shop\ndb.password={c}\n"),
    ("properties", "kafka.properties", "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"{c}\";\n"),
    ("properties", "mail.properties", "mail.smtp.password = {c}\n"),
    ("json", "config.json", "{{\n  \"db\": {{\n    \"user\": \"app\",\n    \"password\": \"{c}\"\n  }}\n}}\n"),
    ("json", "state.json", "{{\"session\": {{\"refresh_token\": \"{c}\", \"expires\": 3600}}}}\n"),
    ("json", "creds.json", "{{\n  \"credentials\": [\n    \"{c}\"\n  ]\n}}\n"),
    ("json", "pretty.json", "{{\n  \"client_secret\":\n    \"{c}\"\n}}\n"),
    ("yaml", "values.yaml", "database:\n  password: {c}\n  port: 5432\n"), ("yaml", "deploy.yaml", "env:\n  - name: DB_PASSWORD\n    value: \"{c}\"\n"),
    ("yaml", "tokens.yaml", "tokens:\n  - {c}\n"), ("yaml", "block.yaml", "secret: |\n  {c}\n"),
    ("toml", "app.toml", "[server]\nport = 8080\napi_key = \"{c}\"\n"), ("toml", "cargo.toml", "[registry]\ntoken = \"{c}\"\n"),
    ("xml", "server.xml", "<Resource name=\"jdbc/db\" username=\"app\" password=\"{c}\"/>\n"),
    ("xml", "settings.xml", "<server>\n  <id>corp</id>\n  <password>{c}</password>\n</server>\n"),
    ("xml", "cdata.xml", "<config><secret><![CDATA[{c}]]></secret></config>\n"),
    ("xml", "named.xml", "<Property>\n  <Name>Password</Name>\n  <Value>{c}</Value>\n</Property>\n"),
    ("xml", "unattend.xml", "<AdministratorPassword>\n  <Value>{c}</Value>\n  <PlainText>true</PlainText>\n</AdministratorPassword>\n"),
    ("xml", "web.config", "<appSettings>\n  <add key=\"ApiSecret\" value=\"{c}\" />\n</appSettings>\n"),
    ("plist", "app.plist", "<dict>\n\t<key>Password</key>\n\t<string>{c}</string>\n</dict>\n"),
    ("plist", "codes.plist", "<dict>\n\t<key>RecoveryCodes</key>\n\t<array>\n\t\t<string>{c}</string>\n\t</array>\n</dict>\n"),
    ("hcl", "vault.hcl", "storage \"postgresql\" {{\n  connection_url = \"postgres://vault:{c}@db1:5432/vault\"\n}}\n"),
    ("hcl", "main.tf", "resource \"x\" \"y\" {{\n  admin_password = \"{c}\"\n}}\n"),
    ("haproxy", "haproxy.cfg", "listen stats\n    bind :8404\n    stats auth admin:{c}\n"),
    ("haproxy", "users.cfg", "userlist L\n    user bob insecure-password {c}\n"),
    ("nagios", "resource.cfg", "$USER1$=/usr/lib/nagios/plugins\n$USER3$={c}\n"),
    ("redis", "redis.conf", "port 6379\nrequirepass {c}\n"), ("redis", "sentinel.conf", "sentinel auth-pass mymaster {c}\n"),
    ("netrc", "netrc", "machine ftp.example.org login bob password {c}\n"),
    ("pgpass", "pgpass", "db1:5432:shop:app:{c}\n"), ("mycnf", "my.cnf", "[client]\nuser=root\npassword={c}\n"),
    ("fetchmailrc", "fetchmailrc", "poll mail.example.org protocol imap user bob password {c}\n"),
    ("msmtprc", "msmtprc", "account default\nhost smtp.example.org\npassword {c}\n"),
    ("sasl", "sasl_passwd", "[smtp.example.org]:587 bob:{c}\n"), ("chap", "chap-secrets", "bob * \"{c}\" *\n"),
    ("ipsec", "ipsec.secrets", ": PSK \"{c}\"\n"), ("rsyncd", "rsyncd.secrets", "backup:{c}\n"),
    ("keepalived", "keepalived.conf", "authentication {{\n    auth_type PASS\n    auth_pass {c}\n}}\n"),
    ("openvpn", "client.ovpn", "client\n<auth-user-pass>\nbob\n{c}\n</auth-user-pass>\n"),
    ("docker", "config.json", "{{\"auths\": {{\"registry.example.org\": {{\"auth\": \"{c}\"}}}}}}\n"),
    ("npmrc", "npmrc", "//registry.example.org/:_authToken={c}\n"), ("pypirc", "pypirc", "[pypi]\nusername = __token__\npassword = {c}\n"),
    ("gitcreds", "git-credentials", "https://bob:{c}@git.example.org\n"), ("s3cfg", "s3cfg", "[default]\nsecret_key = {c}\n"),
    ("aws", "credentials", "[default]\naws_secret_access_key = {c}\n"), ("smb", "smb.cred", "username=bob\npassword={c}\n"),
    ("davfs", "secrets", "https://dav.example.org/remote bob {c}\n"), ("sql", "init.sql", "CREATE USER app IDENTIFIED BY '{c}';\n"),
    ("sql", "grant.sql", "ALTER ROLE app WITH PASSWORD '{c}';\n"), ("php", "wp-config.php", "define('DB_PASSWORD', '{c}');\n"),
    ("php", "settings.php", "$databases['default']['default']['password'] = '{c}';\n"),
    ("python", "settings.py", "SECRET_KEY = '{c}'\n"), ("ruby", "database.yml", "production:\n  password: <%= '{c}' %>\n"),
    ("nginx", "nginx.conf", "location / {{\n  proxy_set_header Authorization \"Basic {c}\";\n}}\n"),
    ("apache", "site.conf", "SetEnv DB_PASS {c}\n"), ("systemd", "app.service", "[Service]\nEnvironment=API_KEY={c}\n"),
    ("cron", "crontab", "0 3 * * * root /usr/bin/mysqldump -u root -p{c} shop > /b.sql\n"),
    ("totp", "authenticator.txt", "otpauth://totp/Corp:bob?secret={c}&issuer=Corp\n"),
    ("recovery", "recovery.txt", "GitHub recovery codes\n{c}\n"), ("prose", "notes.txt", "the new password for svc is {c}\n"),
    ("prose", "handover.md", "Note: the root password is now {c} until Friday.\n"),
    ("http", "request.txt", "GET /api HTTP/1.1\nHost: api.example.org\nAuthorization: CustomAuth {c}\n"),
    ("http", "okta.txt", "Authorization: SSWS {c}\n"), ("http", "hdr.txt", "X-Api-Key: {c}\n"),
    ("har", "session.har", "{{\"request\": {{\"headers\": [{{\"name\": \"X-Session\", \"value\": \"{c}\"}}]}}}}\n"),
    ("access-log", "access.log", "10.0.0.7 - - [07/Dec/2026:05:01:02 +0000] \"GET /dl?sig={c}&n=2 HTTP/1.1\" 200 123\n"),
    ("access-log", "proxy.log", "1701900000.123 55 10.0.0.8 TCP_MISS/200 512 GET https://x.example.org/a?access_token={c} - DIRECT/1.2.3.4 -\n"),
    ("auditd", "audit.log", "type=EXECVE msg=audit(1701900000.1:77): argc=4 a0=\"vendortool\" a1=\"-xp\" a2=\"{c}\" a3=\"-v\"\n"),
    ("sudo", "auth.log", "Dec  7 05:00:01 h sudo: bob : TTY=pts/0 ; PWD=/home/bob ; USER=root ; COMMAND=/usr/bin/dbsync -w {c}\n"),
    ("bash-history", "bash_history", "dbsync -P {c} -H db2\n"), ("bash-history", "history2", "mysql -uroot -p{c}\n"),
    ("zsh-history", "zsh_history", ": 1701900000:0;vendortool --secret {c}\n"),
    ("fish-history", "fish_history", "- cmd: sshpass -p {c} ssh bob@h\n  when: 1701900000\n"),
    ("mysql-history", "mysql_history", "ALTER USER 'app'@'%' IDENTIFIED BY '{c}';\n"),
    ("psql-history", "psql_history", "\\password app\nALTER USER app PASSWORD '{c}';\n"),
    ("redis-cli-history", "rediscli_history", "AUTH {c}\n"), ("syslog", "syslog", "Dec  7 05:00:01 h app[12]: login ok, token={c}\n"),
    ("jsonlog", "app.jsonl", "{{\"level\":\"info\",\"msg\":\"connect\",\"password\":\"{c}\"}}\n"),
    ("k8s-secret", "secret.yaml", "apiVersion: v1\nkind: Secret\nstringData:\n  password: {c}\n"),
    ("compose", "docker-compose.yml", "services:\n  db:\n    environment:\n      - POSTGRES_PASSWORD={c}\n"),
    ("grub", "grub.cfg", "password_pbkdf2 root grub.pbkdf2.sha512.10000.{c}\n"),
    ("jdbc", "ds.xml", "<connection-url>jdbc:mysql://db1/shop?user=app&amp;password={c}</connection-url>\n"),
    ("mnemonic", "wallet.txt", "{c}\n"),
]

# Near-miss non-secrets: evidence and ordinary values that look like secrets to a careless rule.
NEAR_MISSES: list[str] = [
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOq9Zt3v8mP2nL5tW7yB4cD6eF8gH0jK1lM3nO5pQ7rS bob@laptop",
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQC7vX9kLmP2qRsT4uVwXyZ0aBcDeFgHiJkLmNoPqRsTuVwXyZ1a2B3c4D5e6F7g8H9i0J alice@ws",
    "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBKq9Zt3v8mP2nL5tW7yB4cD6eF8gH0jK1lM3nO5pQ7rS host",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEbXk3ZzANBgkqhkiG9w0BAQsFADBsMRAwDgYDVQQGEwdV\nbmtub3duMRAwDgYDVQQIEwdVbmtub3duMRAwDgYDVQQHEwdVbmtub3duMRAwDgYD\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEq9Zt3v8mP2nL5tW7yB4cD6eF8gH0\njK1lM3nO5pQ7rSuVwXyZ1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ\n-----END PUBLIC KEY-----",
    "256 SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8 root@host (ED25519)",
    "kubeadm join 10.0.0.1:6443 --discovery-token-ca-cert-hash sha256:7c2f8a1b3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f",
    "3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081920  ubuntu-22.04.4-live-server-amd64.iso",
    "d41d8cd98f00b204e9800998ecf8427e  empty.txt", "Fingerprint: MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48",
    "db_password = (sensitive value)", "  + password = (sensitive value)", "password: ********", "secret: <redacted>",
    "export DB_PASSWORD=$(pass show prod/db)", "TOKEN=$(vault kv get -field=token secret/ci)", "password=${DB_PASSWORD}",
    "api_key: ${API_KEY:-unset}", "Access denied for user 'app'@'localhost' (using password: YES)",
    "Access denied for user 'root'@'localhost' (using password: NO)",
    "{\"access_token\":\"[REDACTED]\",\"token_type\":\"bearer\",\"expires_in\":3600}", "token_type=bearer&expires_in=3600",
    "password_min_length = 12", "PasswordAuthentication no", "PermitRootLogin prohibit-password", "auth_type PASS",
    "# password is set in /etc/app/secret.env", "token_url = https://auth.example.org/oauth/token",
    "Dec  7 05:00:01 h sshd[812]: Accepted publickey for bob from 10.0.0.7 port 51234 ssh2: ED25519 SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
    "Dec  7 05:00:02 h sshd[813]: Failed password for invalid user admin from 203.0.113.9 port 40022 ssh2",
    "Dec  7 05:00:03 h systemd[1]: Started session-42.scope - Session 42 of User bob.",
    "Dec  7 05:00:04 h kernel: [ 1234.567890] EXT4-fs (sda1): mounted filesystem with ordered data mode.",
    "Dec  7 05:00:05 h CRON[990]: (root) CMD (test -x /usr/sbin/anacron || ( cd / && run-parts --report /etc/cron.daily ))",
    "10.0.0.7 - - [07/Dec/2026:05:01:02 +0000] \"GET /index.html?page=2&sort=name HTTP/1.1\" 200 5123 \"-\" \"Mozilla/5.0\"",
    "GET /api/v1/orders/8f14e45f-ceea-467f-a0e6-2b1c3d4e5f60 HTTP/1.1", "commit 3f2a9b1c4d5e6f708192a3b4c5d6e7f8091a2b3c",
    "Merge: 1a2b3c4 5d6e7f8", "docker.io/library/nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31",
    "Image: registry.example.org/shop/api:1.24.3", "Container ID: 9d3f6c2b8a1e", "uuid=7a4e9c2d-1b3f-4e5a-9c8d-2f1e0d3c4b5a",
    "UUID=0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9 /data ext4 defaults 0 2", "boot_id: 5e1f0c8a9b2d4e3f8a7b6c5d4e3f2a1b",
    "machine-id 4c4c4544004d3510804ab4c04f4e5a31", "X-Request-Id: req-20261207-0001", "trace_id=4bf92f3577b34da6a3ce929d0e0e4736",
    "etag: \"33a64df551425fcc55e4d42a148795d9f25f89d4\"", "Content-Type: application/json; charset=utf-8",
    "Cache-Control: no-cache, no-store, must-revalidate", "Set-Cookie: theme=dark; Path=/; SameSite=Lax",
    "User-Agent: curl/8.5.0", "Server: nginx/1.24.0 (Ubuntu)", "integrity sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs",
    "Version: 2.4.58-1ubuntu8.4", "Linux h 6.8.0-49-generic #49-Ubuntu SMP PREEMPT_DYNAMIC x86_64 GNU/Linux",
    "MemTotal:       24576000 kB", "inet 10.0.0.7/24 brd 10.0.0.255 scope global eth0", "link/ether 52:54:00:12:34:56 brd ff:ff:ff:ff:ff:ff",
    "inet6 fe80::5054:ff:fe12:3456/64 scope link", "/dev/nvme0n1p2  468G  120G  325G  27% /",
    "Filesystem      Size  Used Avail Use% Mounted on", "tcp   LISTEN 0  4096  0.0.0.0:22  0.0.0.0:*  users:((\"sshd\",pid=812,fd=3))",
    "ExecStart=/usr/sbin/nginx -g 'daemon on; master_process on;'", "Environment=LANG=en_US.UTF-8", "PIDFile=/run/nginx.pid",
    "server_name shop.example.org www.shop.example.org;", "ssl_certificate /etc/letsencrypt/live/shop.example.org/fullchain.pem;",
    "ssl_certificate_key /etc/letsencrypt/live/shop.example.org/privkey.pem;", "listen 443 ssl http2;",
    "max_connections = 200", "shared_buffers = 4GB", "log_line_prefix = '%m [%p] %q%u@%d '", "bind 127.0.0.1 ::1",
    "maxmemory-policy allkeys-lru", "key_buffer_size = 16M", "innodb_buffer_pool_size = 8G", "session.gc_maxlifetime = 1440",
    "session_timeout = 30m", "token_lifetime: 3600", "secret_name: app-tls", "passwordFile: /run/secrets/db",
    "password_file = /etc/app/db.pass", "key_file = /etc/ssl/private/app.key", "cert: /etc/ssl/certs/app.pem",
    "auth: required", "authentication: enabled", "use_password: true", "password_required = yes", "require_auth: false",
    "ssl = on", "JAVA_OPTS=-Xmx2g -XX:+UseG1GC", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",
    "HOME=/home/bob", "SHELL=/bin/bash", "TERM=xterm-256color", "LANG=C.UTF-8", "TZ=Europe/Berlin",
    "python3 -m venv /opt/app/venv", "pip install -r requirements.txt", "git log --oneline -n 20", "journalctl -u nginx --since today",
    "systemctl restart postgresql@16-main", "tar -czf backup-2026-12-07.tar.gz /srv/data", "rsync -avz /srv/ backup:/srv/",
    "kubectl get pods -n kube-system -o wide", "docker run -d -p 8080:80 --name web nginx:1.25",
    "ssh -p 2222 -i ~/.ssh/id_ed25519 bob@bastion.example.org", "psql -h db1 -U app -d shop -c 'select 1'",
    "mysql -h db1 -u app -p shop", "openssl x509 -in cert.pem -noout -text", "curl -sS https://api.example.org/health",
    "The password must be at least 12 characters long.", "Your token has expired; please sign in again.",
    "Enter passphrase for key '/home/bob/.ssh/id_ed25519':", "Password:", "passwd: password updated successfully",
    "Reset the password in the admin console.", "Keys are rotated every 90 days.", "Secrets are kept in Vault.",
    "A new PIN was sent to your phone.", "The API key is configured in the settings page.",
    "error: authentication failed for 'https://git.example.org/r.git'", "WARNING: password is empty",
    "model=gpt2 revision=main", "build 20261207.1 sha 3f2a9b1", "checksum ok (crc32 0x1c291ca3)",
    "release: v1.24.3-rc.1+build.7", "node-2 Ready control-plane 42d v1.29.3", "eth0: link up, 1000Mbps, full duplex",
    "sda: sda1 sda2 sda3", "nvme0n1: p1 p2", "CPU0: Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz", "x86_64 amd64 arm64 aarch64",
    "Last login: Mon Dec  7 04:55:01 2026 from 10.0.0.7", "nginx: worker process", "postgres: 16/main: checkpointer",
    "gunicorn: master [shop.wsgi:application]", "/usr/bin/containerd-shim-runc-v2 -namespace moby -id 9d3f6c2b8a1e4f7d0c5b2a9e8f7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d",
    "java -Dfile.encoding=UTF-8 -Duser.timezone=UTC -jar /opt/app/app.jar --server.port=8080",
]


def command_shapes() -> list[tuple[str, list[str], list[str]]]:
    """(program, argv, secrets) for every command line: each {c} a new canary."""
    out = []
    n = 0
    for program, args in COMMANDS:
        secrets: list[str] = []
        words = []
        for word in args.replace("\x1f", "\x00").split(" "):
            while "{c}" in word:
                n += 1
                secrets.append(canary(n))
                word = word.replace("{c}", canary(n), 1)
            words.extend(word.split("\x00") if False else [word.replace("\x00", " ")])
        out.append((program, [program, *words], secrets))
    return out


MNEMONIC = "anchor bridge candle dolphin emerald falcon glacier harbor island jungle kettle lantern"  # a wallet's 12 words


def file_shapes(start: int = 5000) -> list[tuple[str, str, str, list[str]]]:
    """(format, file name, text, secrets) for every file shape."""
    out = []
    for n, (fmt, name, text) in enumerate(FILES, start):
        secret = MNEMONIC if fmt == "mnemonic" else canary(n)
        out.append((fmt, name, text.format(c=secret), [secret]))
    return out


def cron_lines(start: int = 8000) -> list[tuple[str, str]]:
    """(cron line, secret): each command line of COMMANDS as a job of /etc/cron.d."""
    out = []
    for n, (program, args) in enumerate(COMMANDS, start):
        secret = canary(n)
        out.append((f"*/5 * * * * root /usr/bin/{program} {args.replace(chr(31), ' ').replace('{c}', secret)}", secret))
    return out


def logged_lines(start: int = 10000) -> list[tuple[str, str, str]]:
    """(format, line, secret): each command line of COMMANDS as a shell history's line, an auditd
    EXECVE record (a word with a space written in hex, as auditd does) and a sudo log line."""
    out = []
    n = start
    for program, args in COMMANDS:
        words = [program, *args.split(" ")]
        for fmt in ("bash-history", "auditd", "sudo"):
            n += 1
            secret = canary(n)
            argv = [w.replace("{c}", secret).replace("\x1f", " ") for w in words]
            if fmt == "bash-history":
                line = " ".join(f"'{w}'" if " " in w else w for w in argv)
            elif fmt == "auditd":
                fields = " ".join(f'a{i}="{w}"' if " " not in w else f"a{i}={w.encode().hex().upper()}" for i, w in enumerate(argv))
                line = f"type=EXECVE msg=audit(1701900000.{n}:{n}): argc={len(argv)} {fields}"
            else:
                shown = " ".join(argv)
                line = f"Dec  7 05:00:01 h sudo:   bob : TTY=pts/1 ; PWD=/home/bob ; USER=root ; COMMAND=/usr/bin/{shown}"
            out.append((fmt, line, secret))
    return out
