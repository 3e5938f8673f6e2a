"""Ordinary daemons' command lines as `ps -eo args` shows them on a few kinds of system (a desktop, a
web server, a database host, a container host, a Kubernetes node, a Java shop): none holds a secret,
so every word the redactor masks here is diagnostic value lost (scripts/cmdline_visibility.py)."""

LINES = r"""
/sbin/init splash
/lib/systemd/systemd --user
(sd-pam)
/lib/systemd/systemd-journald
/lib/systemd/systemd-udevd
/lib/systemd/systemd-networkd
/lib/systemd/systemd-resolved
/lib/systemd/systemd-timesyncd
/lib/systemd/systemd-logind
@dbus-daemon --system --address=systemd: --nofork --nopidfile --systemd-activation --syslog-only
/usr/bin/dbus-daemon --session --address=systemd: --nofork --nopidfile --systemd-activation --syslog-only
/usr/sbin/cron -f -P
/usr/sbin/rsyslogd -n -iNONE
/usr/sbin/chronyd -F 1
/usr/sbin/irqbalance --foreground
/usr/lib/policykit-1/polkitd --no-debug
/usr/libexec/udisks2/udisksd
/usr/sbin/ModemManager
/usr/sbin/NetworkManager --no-daemon
/sbin/wpa_supplicant -u -s -O /run/wpa_supplicant
/sbin/agetty -o -p -- \u --noclear tty1 linux
/sbin/agetty -o -p -- \u --keep-baud 115200,57600,38400,9600 ttyS0 vt220
sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups
sshd: alice [priv]
sshd: alice@pts/0
-bash
/usr/sbin/sshd -D -o AuthorizedKeysCommand=/usr/share/ec2-instance-connect/eic_run_authorized_keys -o AuthorizedKeysCommandUser=ec2-instance-connect
nginx: master process /usr/sbin/nginx -g daemon on; master_process on;
nginx: worker process
/usr/sbin/apache2 -k start
/usr/sbin/httpd -DFOREGROUND
php-fpm: master process (/etc/php/8.2/fpm/php-fpm.conf)
php-fpm: pool www
/usr/bin/memcached -m 64 -p 11211 -u memcache -l 127.0.0.1 -P /var/run/memcached/memcached.pid
/usr/bin/redis-server 127.0.0.1:6379
/usr/sbin/haproxy -Ws -f /etc/haproxy/haproxy.cfg -p /run/haproxy.pid -S /run/haproxy-master.sock
/usr/lib/postgresql/16/bin/postgres -D /var/lib/postgresql/16/main -c config_file=/etc/postgresql/16/main/postgresql.conf
postgres: 16/main: checkpointer
postgres: 16/main: background writer
postgres: 16/main: walwriter
postgres: 16/main: autovacuum launcher
postgres: 16/main: logical replication launcher
postgres: 16/main: app shop 10.0.4.17(51234) idle
/usr/sbin/mysqld --basedir=/usr --datadir=/var/lib/mysql --plugin-dir=/usr/lib/mysql/plugin --log-error=/var/log/mysql/error.log --pid-file=/run/mysqld/mysqld.pid --socket=/run/mysqld/mysqld.sock --port=3306
/usr/bin/mongod --config /etc/mongod.conf
/usr/share/elasticsearch/jdk/bin/java -Xshare:auto -Des.networkaddress.cache.ttl=60 -Des.networkaddress.cache.negative.ttl=10 -XX:+AlwaysPreTouch -Xss1m -Djava.awt.headless=true -Dfile.encoding=UTF-8 -Djna.nosys=true -XX:-OmitStackTraceInFastThrow -Dio.netty.noUnsafe=true -Xms1g -Xmx1g -XX:+UseG1GC -Djava.io.tmpdir=/tmp/elasticsearch-5531412447 -XX:+HeapDumpOnOutOfMemoryError -XX:HeapDumpPath=/var/lib/elasticsearch -Xlog:gc*,gc+age=trace,safepoint:file=/var/log/elasticsearch/gc.log:utctime,pid,tags:filecount=32,filesize=64m -cp /usr/share/elasticsearch/lib/* org.elasticsearch.bootstrap.Elasticsearch -p /var/run/elasticsearch/elasticsearch.pid --quiet
java -Xmx2048m -Xms512m -XX:MaxMetaspaceSize=256m -Dspring.profiles.active=production -Dserver.port=8080 -Duser.timezone=UTC -jar /opt/orders/orders-service-2.4.1.jar
/usr/lib/jvm/java-17-openjdk-amd64/bin/java -Djava.util.logging.config.file=/var/lib/tomcat9/conf/logging.properties -Djava.util.logging.manager=org.apache.juli.ClassLoaderLogManager -Djava.awt.headless=true -XX:+UseG1GC -Djdk.tls.ephemeralDHKeySize=2048 -Dorg.apache.catalina.security.SecurityListener.UMASK=0027 -classpath /usr/share/tomcat9/bin/bootstrap.jar:/usr/share/tomcat9/bin/tomcat-juli.jar -Dcatalina.base=/var/lib/tomcat9 -Dcatalina.home=/usr/share/tomcat9 -Djava.io.tmpdir=/tmp org.apache.catalina.startup.Bootstrap start
/usr/bin/java -Xms256m -Xmx1g -Dkafka.logs.dir=/var/log/kafka -Dlog4j.configuration=file:/etc/kafka/log4j.properties -cp /opt/kafka/libs/* kafka.Kafka /etc/kafka/server.properties
/usr/bin/python3 /usr/bin/networkd-dispatcher --run-startup-triggers
/usr/bin/python3 /usr/share/unattended-upgrades/unattended-upgrade-shutdown --wait-for-signal
/usr/bin/python3 -m http.server 8000 --bind 127.0.0.1
/opt/app/venv/bin/python -m uvicorn main:app --host 0.0.0.0 --port 8000 --workers 4 --proxy-headers
gunicorn: master [shop.wsgi:application]
/opt/app/venv/bin/python3 /opt/app/venv/bin/gunicorn --workers 3 --bind unix:/run/gunicorn.sock shop.wsgi:application
/opt/app/venv/bin/python -m celery -A shop worker --loglevel=INFO --concurrency=4 -n worker1@%h
node /srv/web/node_modules/.bin/next start -p 3000
/usr/bin/node /usr/lib/node_modules/pm2/bin/pm2 daemon
PM2 v5.3.0: God Daemon (/root/.pm2)
/usr/bin/dockerd -H fd:// --containerd=/run/containerd/containerd.sock
/usr/bin/containerd
/usr/bin/containerd-shim-runc-v2 -namespace moby -id 9d3f6c2b8a1e4f7d0c5b2a9e8f7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d -address /run/containerd/containerd.sock
/usr/bin/docker-proxy -proto tcp -host-ip 0.0.0.0 -host-port 8080 -container-ip 172.17.0.2 -container-port 80
/usr/bin/conmon --api-version 1 -c 4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a -u 4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a -r /usr/bin/crun -b /var/lib/containers/storage/overlay-containers/4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a/userdata -n web --log-level warning
/usr/bin/kubelet --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml --container-runtime-endpoint=unix:///var/run/containerd/containerd.sock --pod-infra-container-image=registry.k8s.io/pause:3.9
kube-apiserver --advertise-address=10.0.0.10 --allow-privileged=true --authorization-mode=Node,RBAC --client-ca-file=/etc/kubernetes/pki/ca.crt --enable-admission-plugins=NodeRestriction --etcd-servers=https://127.0.0.1:2379 --secure-port=6443 --service-cluster-ip-range=10.96.0.0/12 --tls-cert-file=/etc/kubernetes/pki/apiserver.crt
etcd --advertise-client-urls=https://10.0.0.10:2379 --cert-file=/etc/kubernetes/pki/etcd/server.crt --data-dir=/var/lib/etcd --listen-client-urls=https://127.0.0.1:2379,https://10.0.0.10:2379 --name=cp-1 --snapshot-count=10000
/coredns -conf /etc/coredns/Corefile
/usr/local/bin/kube-proxy --config=/var/lib/kube-proxy/config.conf --hostname-override=node-2
/pause
/usr/sbin/unbound -d -p
/usr/sbin/named -f -u bind
/usr/sbin/dnsmasq --conf-file=/var/lib/libvirt/dnsmasq/default.conf --leasefile-ro --dhcp-script=/usr/libexec/libvirt_leaseshelper
/usr/sbin/libvirtd --timeout 120
/usr/bin/qemu-system-x86_64 -name guest=web01,debug-threads=on -machine pc-q35-8.2,usb=off -m 2048 -smp 2,sockets=2,cores=1,threads=1 -uuid 7a4e9c2d-1b3f-4e5a-9c8d-2f1e0d3c4b5a -drive file=/var/lib/libvirt/images/web01.qcow2,format=qcow2,if=none,id=drive-virtio-disk0
/usr/sbin/squid -f /etc/squid/squid.conf --foreground -sYC
/usr/sbin/postfix/master -w
qmgr -l -t unix -u
pickup -l -t unix -u -c
/usr/sbin/dovecot -F
/usr/sbin/smbd --foreground --no-process-group
/usr/sbin/nmbd --foreground --no-process-group
/usr/sbin/cupsd -l
/usr/bin/prometheus --config.file=/etc/prometheus/prometheus.yml --storage.tsdb.path=/var/lib/prometheus/ --web.listen-address=0.0.0.0:9090 --storage.tsdb.retention.time=15d
/usr/bin/node_exporter --collector.systemd --collector.textfile.directory=/var/lib/node_exporter
/usr/sbin/grafana-server --config=/etc/grafana/grafana.ini --pidfile=/run/grafana/grafana-server.pid --packaging=deb cfg:default.paths.logs=/var/log/grafana cfg:default.paths.data=/var/lib/grafana
/usr/bin/fluent-bit -c /etc/fluent-bit/fluent-bit.conf
/usr/share/filebeat/bin/filebeat --environment systemd -c /etc/filebeat/filebeat.yml --path.home /usr/share/filebeat --path.config /etc/filebeat --path.data /var/lib/filebeat --path.logs /var/log/filebeat
/usr/bin/vault server -config=/etc/vault.d/vault.hcl
/usr/bin/consul agent -config-dir=/etc/consul.d/
/usr/bin/rabbitmq-server
/usr/lib/erlang/erts-13.2/bin/beam.smp -W w -MBas ageffcbf -MHas ageffcbf -MBlmbcs 512 -MHlmbcs 512 -MMmcs 30 -P 1048576 -t 5000000 -stbt db -zdbbl 128000 -sbwt none -sbwtdcpu none -sbwtdio none -B i -- -root /usr/lib/erlang -progname erl -- -home /var/lib/rabbitmq -- -pa /usr/lib/rabbitmq/lib/rabbitmq_server-3.12.1/ebin -noshell -noinput -s rabbit boot -boot start_sasl -syslog logger []
/usr/lib/xorg/Xorg vt2 -displayfd 3 -auth /run/user/1000/gdm/Xauthority -nolisten tcp -background none -noreset -keeptty -novtswitch -verbose 3
/usr/bin/gnome-shell
/usr/libexec/gnome-session-binary --session=ubuntu
/usr/bin/pipewire
/usr/bin/wireplumber
/usr/bin/pulseaudio --daemonize=no --log-target=journal
/usr/libexec/gvfsd-fuse /run/user/1000/gvfs -f
/opt/google/chrome/chrome --type=renderer --crashpad-handler-pid=4211 --enable-crash-reporter=,Ubuntu --origin-trial-disabled-features=WebGPU --change-stack-guard-on-fork=enable --lang=en-US --num-raster-threads=4 --enable-main-frame-before-activation --renderer-client-id=12 --time-ticks-at-unix-epoch=-1701850244839027 --launch-time-ticks=183492877 --shared-files=v8_context_snapshot_data:100 --field-trial-handle=0,i,10741512396011123410,6383728733417287218,262144 --variations-seed-version=20231205-050129.947000
/opt/google/chrome/chrome --type=gpu-process --crashpad-handler-pid=4211 --enable-crash-reporter=,Ubuntu --change-stack-guard-on-fork=enable --gpu-preferences=WAAAAAAAAAAgAAAIAAAAAAAAAAAAAAAAAABgAAAAAAA4AAAAAAAAAAAAAAAEAAAAAAAAAAgAAAAAAAAACAAAAAAAAAA= --shared-files --field-trial-handle=0,i,10741512396011123410,6383728733417287218,262144
/opt/google/chrome/chrome --type=utility --utility-sub-type=network.mojom.NetworkService --lang=en-US --service-sandbox-type=none --enable-crash-reporter=,Ubuntu --shared-files=v8_context_snapshot_data:100 --field-trial-handle=0,i,10741512396011123410,6383728733417287218,262144
/usr/lib/firefox/firefox -contentproc -childID 7 -isForBrowser -prefsLen 31140 -prefMapSize 244337 -jsInitLen 231800 -parentBuildID 20231128093528 -appDir /usr/lib/firefox/browser {1d8f9a3b-4c2e-4b7a-9e6f-2a1c3d5e7f90} 3512 true tab
/usr/share/code/code --type=zygote --no-zygote-sandbox
/snap/snapd/20671/usr/lib/snapd/snapd
/usr/lib/snapd/snapd
/usr/bin/containerd-shim -namespace k8s.io -workdir /var/lib/containerd -address /run/containerd/containerd.sock
/usr/sbin/zabbix_agentd -c /etc/zabbix/zabbix_agentd.conf
/usr/bin/ssh-agent /usr/bin/im-launch env GNOME_SHELL_SESSION_MODE=ubuntu /usr/bin/gnome-session --session=ubuntu
/usr/sbin/atd -f
/usr/sbin/acpid
/usr/sbin/smartd -n
/usr/sbin/thermald --systemd --dbus-enable --adaptive
/usr/bin/tmux new-session -d -s main
ssh -N -L 5432:db.internal:5432 deploy@bastion.example.com
rsync --daemon --no-detach --config=/etc/rsyncd.conf
/usr/sbin/vsftpd /etc/vsftpd.conf
/usr/sbin/openvpn --daemon ovpn-server --status /run/openvpn/server.status 10 --cd /etc/openvpn --config /etc/openvpn/server.conf --writepid /run/openvpn/server.pid
/usr/bin/tailscaled --state=/var/lib/tailscale/tailscaled.state --socket=/run/tailscale/tailscaled.sock --port=41641
/usr/local/bin/traefik --entrypoints.web.address=:80 --providers.docker=true --api.dashboard=true --log.level=INFO
/usr/sbin/keepalived --dont-fork -D
""".strip().splitlines()
