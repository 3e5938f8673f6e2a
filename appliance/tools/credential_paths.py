"""The well-known credential stores, each with the manual page or the tool's documentation that names
its path: the deny-list of the path policy (paths.py) is built from this table, and docs/tools.md
cites every line of it.

A path ending in `/` is a folder (everything under it is a store); `~` is any user's home (`/root`,
`/home/NAME`); `*` is one path component. Each store is known two ways: at its real path, and by its
tail wherever it is copied (the last two components, or the part below the home for a per-user
file: `chrony/chrony.keys`, `.viminfo`), so a copy under an allowed folder is refused too.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KnownStore:
    """One credential store: where it lives and which document says so."""

    path: str
    source: str

    @property
    def folder(self) -> bool:
        return self.path.endswith("/")

    @property
    def per_user(self) -> bool:
        return self.path.startswith("~/")

    def tail(self) -> tuple[str, ...]:
        """The components that identify the store wherever it is copied."""
        parts = self.path.rstrip("/").split("/")
        if self.per_user:
            return tuple(parts[1:][-2:])
        return tuple(parts[-2:])


_TABLE = """
/etc/shadow | shadow(5)
/etc/gshadow | gshadow(5)
/etc/shadow- | shadow(5), the CIS Linux benchmark (backup of /etc/shadow)
/etc/gshadow- | gshadow(5), the CIS Linux benchmark (backup of /etc/gshadow)
/etc/security/opasswd | pam_pwhistory(8)
/etc/sudoers | sudoers(5)
/etc/sudoers.d/ | sudoers(5) (#includedir)
/etc/ssh/ssh_host_rsa_key | sshd(8), FILES
/etc/ssh/ssh_host_ecdsa_key | sshd(8), FILES
/etc/ssh/ssh_host_ed25519_key | sshd(8), FILES
/etc/ssh/ssh_host_dsa_key | sshd(8), FILES
/etc/ssl/private/ | Debian ssl-cert README (private keys of /etc/ssl)
/etc/pki/tls/private/ | RHEL Security Guide, OpenSSL key locations
/etc/pki/CA/private/ | openssl-ca(1) (private/cakey.pem)
/etc/krb5.keytab | krb5.conf(5), default_keytab_name
/etc/krb5kdc/stash | kdc.conf(5), key_stash_file (Debian)
/var/kerberos/krb5kdc/principal | kdc.conf(5), database_name (RHEL)
/var/kerberos/krb5kdc/.k5.* | kdc.conf(5), key_stash_file (RHEL)
/etc/chrony/chrony.keys | chrony.conf(5), keyfile (Debian)
/etc/chrony.keys | chrony.conf(5), keyfile (RHEL)
/etc/ntp.keys | ntp.keys(5)
/etc/ntp/keys | ntp.keys(5) (RHEL)
/etc/ntpsec/ntp.keys | ntp.keys(5) of NTPsec
/etc/ppp/chap-secrets | pppd(8), FILES
/etc/ppp/pap-secrets | pppd(8), FILES
/etc/ppp/srp-secrets | pppd(8), FILES
/etc/ipsec.secrets | ipsec.secrets(5)
/etc/strongswan/ipsec.secrets | ipsec.secrets(5) (RHEL)
/etc/ipsec.d/private/ | ipsec.conf(5), strongSwan's private key folder
/etc/swanctl/private/ | swanctl.conf(5), private key folder
/etc/swanctl/swanctl.conf | swanctl.conf(5), secrets section
/etc/wireguard/ | wg-quick(8) (PrivateKey in INTERFACE.conf)
/etc/NetworkManager/system-connections/ | nm-settings-keyfile(5)
/etc/wpa_supplicant/wpa_supplicant.conf | wpa_supplicant.conf(5) (psk=)
/etc/hostapd/hostapd.wpa_psk | hostapd.conf, wpa_psk_file
/etc/hostapd/hostapd.eap_user | hostapd.conf, eap_user_file
/etc/openvpn/ta.key | openvpn(8), --tls-auth
/etc/openvpn/auth.txt | openvpn(8), --auth-user-pass
/etc/openvpn/client/auth.txt | openvpn(8), --auth-user-pass
/etc/xl2tpd/l2tp-secrets | xl2tpd.conf(5), auth file
/etc/racoon/psk.txt | racoon.conf(5), path pre_shared_key
/etc/vpnc/default.conf | vpnc(8) (IPSec secret, Xauth password)
/etc/ocserv/ocpasswd | ocpasswd(8)
/etc/stunnel/psk.txt | stunnel(8), PSKsecrets
/etc/postfix/sasl_passwd | Postfix SASL_README (smtp_sasl_password_maps)
/etc/postfix/sasl_passwd.db | Postfix SASL_README (postmap of sasl_passwd)
/etc/sasldb2 | saslpasswd2(8)
/etc/mail/authinfo | sendmail cf/README, AUTHINFO
/etc/mail/authinfo.db | sendmail cf/README, AUTHINFO (makemap)
/etc/dovecot/users | Dovecot documentation, passwd-file
/etc/dovecot/passwd | Dovecot documentation, passwd-file
/etc/dovecot/private/ | Dovecot documentation, SSL (private/dovecot.pem)
/etc/exim4/passwd.client | Debian exim4-config README (client SMTP authentication)
/etc/exim4/passwd | Debian exim4-config README (server authentication)
/etc/mosquitto/passwd | mosquitto_passwd(1)
/etc/mosquitto/pwfile | mosquitto.conf(5), password_file
/etc/mosquitto/psk | mosquitto.conf(5), psk_file
/etc/redis/users.acl | Redis documentation, ACL (aclfile)
/etc/pgbouncer/userlist.txt | PgBouncer documentation, auth_file
/etc/pgpool-II/pool_passwd | Pgpool-II documentation, pool_passwd
/etc/pgpool-II/pcp.conf | Pgpool-II documentation, pcp.conf
/etc/pgpool-II/pgpass.conf | Pgpool-II documentation (a .pgpass for health checks)
/var/lib/postgresql/.pgpass | PostgreSQL libpq documentation, the password file
/etc/mysql/debian.cnf | Debian mysql-server README (debian-sys-maint)
/etc/samba/smbpasswd | smbpasswd(5)
/var/lib/samba/private/ | smb.conf(5), private dir (passdb.tdb, secrets.tdb)
/etc/davfs2/secrets | davfs2.conf(5), secrets
/etc/rsyncd.secrets | rsyncd.conf(5), secrets file
/etc/vsftpd/ftpd.passwd | vsftpd.conf(5), virtual users (guest_enable)
/etc/proftpd/ftpd.passwd | ProFTPD documentation, AuthUserFile (mod_auth_file)
/etc/pure-ftpd/pureftpd.passwd | pure-pw(8)
/etc/pure-ftpd/pureftpd.pdb | pure-pw(8)
/etc/nginx/.htpasswd | nginx documentation, ngx_http_auth_basic_module
/etc/apache2/.htpasswd | htpasswd(1)
/etc/httpd/.htpasswd | htpasswd(1)
/etc/squid/passwd | basic_ncsa_auth(8)
/etc/letsencrypt/accounts/ | certbot documentation, where files are
/etc/letsencrypt/keys/ | certbot documentation, where files are
/etc/letsencrypt/live/*/privkey.pem | certbot documentation, where files are
/etc/letsencrypt/archive/*/privkey1.pem | certbot documentation, where files are
~/.acme.sh/ca/ | acme.sh wiki (account keys under ca/)
/etc/ldap.secret | libnss-ldap.conf(5), rootbinddn
/etc/libnss-ldap.secret | libnss-ldap.conf(5), rootbinddn
/etc/pam_ldap.secret | pam_ldap(5), rootbinddn
/var/lib/sss/secrets/ | sssd-secrets(5)
/var/lib/sss/db/ | sssd.conf(5), cache_credentials (cached password hashes)
/etc/tinc/*/rsa_key.priv | tinc.conf(5), PrivateKeyFile
/etc/tinc/*/ed25519_key.priv | tinc.conf(5), Ed25519PrivateKeyFile
/var/lib/zerotier-one/identity.secret | ZeroTier documentation, identity.secret
/var/lib/tailscale/tailscaled.state | tailscaled documentation, --state (node keys)
/etc/containers/auth.json | containers-auth.json(5)
/run/user/*/containers/auth.json | containers-auth.json(5), ${XDG_RUNTIME_DIR}/containers/auth.json
/var/lib/kubelet/pki/ | Kubernetes documentation, kubelet certificates
/etc/kubernetes/pki/ | Kubernetes documentation, PKI certificates and requirements
/etc/kubernetes/admin.conf | kubeadm documentation, kubeconfig files
/etc/kubernetes/kubelet.conf | kubeadm documentation, kubeconfig files
/etc/kubernetes/controller-manager.conf | kubeadm documentation, kubeconfig files
/etc/kubernetes/scheduler.conf | kubeadm documentation, kubeconfig files
/run/secrets/ | Docker documentation, secrets (/run/secrets/NAME); Kubernetes service account tokens
/var/run/secrets/ | Kubernetes documentation, service account token (/var/run/secrets/kubernetes.io)
/run/credentials/ | systemd.exec(5), credentials ($CREDENTIALS_DIRECTORY)
/etc/credstore/ | systemd.exec(5), LoadCredential= search path
/etc/credstore.encrypted/ | systemd.exec(5), LoadCredentialEncrypted= search path
/run/credstore/ | systemd.exec(5), LoadCredential= search path
/run/credstore.encrypted/ | systemd.exec(5), LoadCredentialEncrypted= search path
/usr/lib/credstore/ | systemd.exec(5), LoadCredential= search path
/var/lib/systemd/credential.secret | systemd-creds(1), the host key
/var/lib/*/secrets/ | Jenkins documentation ($JENKINS_HOME/secrets), and services' own secrets folders
/var/lib/jenkins/credentials.xml | Jenkins documentation, credentials storage
/var/lib/jenkins/secret.key | Jenkins documentation, credentials storage
/var/lib/rancher/k3s/server/token | k3s documentation, server token
/var/lib/rancher/k3s/server/node-token | k3s documentation, node token
/etc/rancher/k3s/k3s.yaml | k3s documentation, cluster access (kubeconfig)
/etc/gitlab/gitlab-secrets.json | GitLab documentation, backup (gitlab-secrets.json)
/etc/gitlab/initial_root_password | GitLab documentation, installation (initial root password)
/etc/fetchmailrc | fetchmail(1), FILES
/etc/cifs-credentials | mount.cifs(8), credentials=
/etc/passwd-s3fs | s3fs(1), authentication
/etc/msmtprc | msmtp(1), FILES (system configuration)
/etc/raddb/users | FreeRADIUS users(5)
/etc/freeradius/users | FreeRADIUS users(5) (Debian)
/etc/opendkim/keys/ | opendkim.conf(5), KeyTable
/etc/dkimkeys/ | Debian opendkim README.Debian (/etc/dkimkeys)
/etc/bind/rndc.key | rndc-confgen(8)
/etc/rndc.key | rndc-confgen(8), rndc.conf(5)
/etc/unbound/unbound_server.key | unbound-control-setup(8)
/etc/unbound/unbound_control.key | unbound-control-setup(8)
/etc/nsd/nsd_server.key | nsd-control-setup(8)
/etc/nsd/nsd_control.key | nsd-control-setup(8)
/etc/salt/pki/master/master.pem | Salt documentation, key management
/etc/salt/pki/minion/minion.pem | Salt documentation, key management
/etc/puppetlabs/puppet/ssl/private_keys/ | Puppet documentation, SSL directories
/etc/chef/client.pem | Chef documentation, client.rb (client_key)
/etc/zabbix/zabbix_agentd.psk | Zabbix documentation, encryption using pre-shared keys
/etc/icinga2/pki/ | Icinga 2 documentation, CSR auto-signing and certificates
/var/lib/icinga2/certs/ | Icinga 2 documentation, certificates
/boot/grub/user.cfg | grub2-setpassword(8)
/boot/grub2/user.cfg | grub2-setpassword(8) (RHEL)
/etc/grub.d/01_users | grub2-setpassword(8), GRUB manual "Authentication and authorisation"
~/.ssh/ | ssh(1), FILES
~/.gnupg/ | gpg(1), FILES
~/.netrc | netrc(5), ftp(1)
~/.pgpass | PostgreSQL libpq documentation, the password file
~/.my.cnf | MySQL manual, option files
~/.mylogin.cnf | mysql_config_editor(1)
~/.git-credentials | git-credential-store(1)
~/.config/git/credentials | git-credential-store(1)
~/.aws/credentials | AWS CLI documentation, configuration and credential files
~/.aws/config | AWS CLI documentation, configuration and credential files
~/.azure/ | Azure CLI documentation, configuration
~/.config/gcloud/ | Google Cloud CLI documentation, credentials
~/.kube/config | kubectl documentation, kubeconfig
~/.docker/config.json | docker-login(1), credentials store
~/.config/containers/auth.json | containers-auth.json(5)
~/.vault-token | HashiCorp Vault documentation, token helper
~/.npmrc | npmrc(5), auth tokens
~/.pypirc | Python Packaging documentation, the .pypirc file
~/.gem/credentials | RubyGems documentation, API keys
~/.cargo/credentials.toml | Cargo documentation, credentials
~/.m2/settings-security.xml | Apache Maven documentation, password encryption
~/.m2/settings.xml | Apache Maven documentation, settings (server passwords)
~/.gradle/gradle.properties | Gradle documentation, credentials in gradle.properties
~/.config/gh/hosts.yml | GitHub CLI documentation, gh auth login
~/.config/hub | hub(1), credentials
~/.terraform.d/credentials.tfrc.json | Terraform CLI documentation, credentials
~/.boto | boto documentation, credentials
~/.s3cfg | s3cmd documentation, configuration
~/.passwd-s3fs | s3fs(1), authentication
~/.config/rclone/rclone.conf | rclone documentation, config file
~/.smbcredentials | mount.cifs(8), credentials=
~/.fetchmailrc | fetchmail(1), FILES
~/.msmtprc | msmtp(1), FILES
~/.config/msmtp/config | msmtp(1), FILES
~/.muttrc | muttrc(5) (smtp_pass, imap_pass)
~/.esmtprc | esmtprc(5)
~/.authinfo | Emacs auth-source manual, .authinfo
~/.password-store/ | pass(1)
~/.local/share/keyrings/ | GNOME Keyring documentation
~/.local/share/kwalletd/ | KWallet documentation
~/.mozilla/ | Firefox support, profile (logins.json, key4.db)
~/.thunderbird/ | Thunderbird support, profile (logins.json)
~/.config/google-chrome/ | Chromium documentation, user data directory (Login Data)
~/.config/chromium/ | Chromium documentation, user data directory (Login Data)
~/.config/filezilla/sitemanager.xml | FileZilla wiki, configuration files
~/.config/filezilla/recentservers.xml | FileZilla wiki, configuration files
~/.config/remmina/*.remmina | Remmina documentation (saved passwords)
~/.vnc/passwd | vncpasswd(1)
~/.google_authenticator | google-authenticator(1) (pam_google_authenticator seed)
~/.config/Authy Desktop/ | Authy Desktop (authenticator seeds)
~/.2fa | rsc/2fa README (TOTP keys in ~/.2fa)
~/.bitcoin/wallet.dat | Bitcoin Core documentation, files (wallet.dat)
~/.bitcoin/wallets/ | Bitcoin Core documentation, files (wallets/)
~/.litecoin/wallet.dat | Litecoin Core documentation, files
~/.electrum/wallets/ | Electrum documentation, wallet files
~/.ethereum/keystore/ | go-ethereum documentation, account keystore
~/.vault_pass | ansible-vault(1), --vault-password-file
~/.vault_pass.txt | ansible-vault(1), --vault-password-file
~/.ansible/vault_pass | ansible-vault(1), --vault-password-file
~/.viminfo | Vim :help viminfo (registers, search and command history)
~/.lesshst | less(1), LESSHISTFILE
~/.python_history | Python documentation, readline configuration (site)
~/.mysql_history | mysql(1), MYSQL_HISTFILE
~/.psql_history | psql(1), HISTFILE
~/.sqlite_history | sqlite3(1), .sqlite_history
~/.node_repl_history | Node.js documentation, REPL (NODE_REPL_HISTORY)
~/.rediscli_history | redis-cli documentation, REDISCLI_HISTFILE
~/.bash_history | bash(1), HISTFILE
~/.zsh_history | zshparam(1), HISTFILE
~/.local/share/fish/fish_history | fish documentation, history
~/.irb_history | irb(1), history file
~/.mongosh/mongosh_repl_history | MongoDB Shell documentation, history
~/.dbshell | mongo shell documentation, .dbshell history
~/.cloudflared/ | Cloudflare Tunnel documentation (credentials file)
~/.config/doctl/config.yaml | doctl documentation, authentication
~/.config/hcloud/cli.toml | hcloud CLI documentation, contexts (tokens)
~/.oci/ | OCI CLI documentation, config file and API key
~/.config/openstack/clouds.yaml | openstacksdk documentation, clouds.yaml
~/.databrickscfg | Databricks CLI documentation, configuration profiles
~/.snowsql/config | SnowSQL documentation, configuration
~/.dbt/profiles.yml | dbt documentation, profiles.yml
~/.kaggle/kaggle.json | Kaggle API documentation, credentials
~/.cache/huggingface/token | huggingface_hub documentation, HF_TOKEN_PATH
~/.huggingface/token | huggingface_hub documentation (older token path)
~/.config/ngrok/ngrok.yml | ngrok documentation, config file (authtoken)
~/.tsh/ | Teleport documentation, tsh profile (keys and certificates)
~/.erlang.cookie | Erlang documentation, distributed Erlang (the cookie)
~/.pgpoolkey | Pgpool-II documentation, pg_enc (the key file)
"""

KNOWN_STORES: tuple[KnownStore, ...] = tuple(
    KnownStore(*(part.strip() for part in line.split(" | ", 1))) for line in _TABLE.strip().splitlines()
)
