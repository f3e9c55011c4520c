//! Several `volley serve` processes sharing one `redis-server`, behind one nginx that
//! balances them round robin without stickiness: the cluster of issue 26, on 127.0.0.1
//! with free ports, in a scratch directory, every process in a process group of its own
//! and all of them killed when the [`Cluster`] is dropped.
//!
//! nginx adds `X-Volley-Upstream: <address>` to every answer, so a test knows which
//! instance served a request that went through it. Instances keep their port for life:
//! [`Cluster::kill`], [`Cluster::restart`] and [`Cluster::restart_all`] start them again
//! on the same address, so nginx and clients find them where they were.
//!
//! Switches, from the environment:
//! - `VOLLEY_CLUSTER_BIN=/path/to/volley`: the binary of the instances (default the one
//!   `cargo test` built), to run these tests against another build without rebuilding.
//! - `VOLLEY_CLUSTER_REDIS=0`: instances start without `--redis`, each with its own state.
//!   Only the harness itself can be checked that way (the sharing tests then fail).
//! - `VOLLEY_CLUSTER_KEEP=1`: the scratch directory (logs, configurations) is kept.
//!
//! `redis-server` and `nginx` (Debian: `redis-server`, `nginx-light`) must be installed;
//! without them the cluster does not start and says how to install them.

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a process has to answer after it was started.
const START: Duration = Duration::from_secs(30);
/// How long a graceful stop (SIGTERM) may take before the process is killed: the server
/// waits up to 10 seconds for executions in flight.
const GRACE: Duration = Duration::from_secs(15);
/// The command that installs what the cluster needs (scripts/test runs it).
const INSTALL: &str = "scripts/install-packages redis-server=redis-server /usr/sbin/nginx=nginx-light";
/// The header nginx adds to every answer: the address of the instance that served it.
pub(crate) const UPSTREAM_HEADER: &str = "x-volley-upstream";

/// What to start.
#[derive(Debug, Clone)]
pub(crate) struct ClusterOptions {
    /// How many `volley serve` instances.
    pub(crate) instances: usize,
    /// Arguments added to every `volley serve` (`--max-sessions 2`, …).
    pub(crate) serve_args: Vec<String>,
    /// `--token`: also given to every instance, and used by the health checks.
    pub(crate) token: Option<String>,
    /// Whether the instances get `--redis` (unless `VOLLEY_CLUSTER_REDIS=0`).
    pub(crate) shared: bool,
}

impl ClusterOptions {
    pub(crate) fn new(instances: usize) -> Self {
        Self { instances, serve_args: Vec::new(), token: None, shared: true }
    }

    /// Instances without `--redis`, each with its own state (`redis-server` still runs).
    pub(crate) fn unshared(mut self) -> Self {
        self.shared = false;
        self
    }

    pub(crate) fn serve_arg(mut self, arg: &str) -> Self {
        self.serve_args.push(arg.to_owned());
        self
    }

    pub(crate) fn token(mut self, token: &str) -> Self {
        self.token = Some(token.to_owned());
        self
    }
}

/// A running cluster. Dropping it kills every process it started.
pub(crate) struct Cluster {
    scratch: PathBuf,
    options: ClusterOptions,
    binary: PathBuf,
    /// `redis://127.0.0.1:<port>/`.
    pub(crate) redis_url: String,
    /// Whether the instances were given `--redis` (see `VOLLEY_CLUSTER_REDIS`).
    pub(crate) shared: bool,
    redis: Option<Process>,
    instances: Vec<Instance>,
    nginx: Option<Process>,
    /// `http://127.0.0.1:<port>`: nginx.
    pub(crate) url: String,
    http: reqwest::Client,
}

/// One `volley serve`, on a port it keeps across restarts.
struct Instance {
    port: u16,
    process: Option<Process>,
    /// How many times it was started (its log says where each start begins).
    starts: u32,
}

/// A child process that leads a process group of its own.
struct Process {
    name: String,
    child: Child,
}

impl Cluster {
    /// Starts `redis-server`, the instances and nginx, and waits until each answers
    /// (nginx: `GET /health` through it).
    pub(crate) async fn start(options: ClusterOptions) -> Self {
        let redis_server = program("redis-server");
        let nginx = program("nginx");
        let scratch = scratch_directory();
        let binary = std::env::var_os("VOLLEY_CLUSTER_BIN")
            .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_volley")), PathBuf::from);
        let shared = options.shared && std::env::var("VOLLEY_CLUSTER_REDIS").map_or(true, |value| value != "0");
        let redis_port = free_port();
        let instances =
            (0..options.instances).map(|_| Instance { port: free_port(), process: None, starts: 0 }).collect();
        let nginx_port = free_port();
        let mut cluster = Self {
            redis_url: format!("redis://127.0.0.1:{redis_port}/"),
            url: format!("http://127.0.0.1:{nginx_port}"),
            scratch,
            options,
            binary,
            shared,
            redis: None,
            instances,
            nginx: None,
            http: client(),
        };

        let redis_dir = cluster.scratch.join("redis");
        std::fs::create_dir_all(&redis_dir).expect("the redis directory");
        let mut command = Command::new(redis_server);
        command
            .args(["--port", &redis_port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--logfile"])
            .arg(cluster.scratch.join("redis.log"))
            .arg("--dir")
            .arg(&redis_dir);
        cluster.redis = Some(Process::spawn("redis-server", command, &cluster.scratch.join("redis-server.out")));
        let deadline = Instant::now() + START;
        while !redis_answers(redis_port) {
            cluster.check_alive("redis-server", deadline);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        for index in 0..cluster.instances.len() {
            cluster.spawn_instance(index);
        }
        for index in 0..cluster.instances.len() {
            cluster.wait_healthy(index).await;
        }

        std::fs::write(cluster.scratch.join("nginx.conf"), cluster.nginx_conf(nginx_port)).expect("nginx.conf");
        let mut command = Command::new(nginx);
        command
            .arg("-p")
            .arg(&cluster.scratch)
            .arg("-c")
            .arg(cluster.scratch.join("nginx.conf"))
            .arg("-e")
            .arg(cluster.scratch.join("nginx-error.log"))
            .args(["-g", "daemon off;"]);
        cluster.nginx = Some(Process::spawn("nginx", command, &cluster.scratch.join("nginx.out")));
        let deadline = Instant::now() + START;
        let health = format!("{}/health", cluster.url);
        while !cluster.answers(&health).await {
            cluster.check_alive("nginx", deadline);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        cluster
    }

    /// `http://127.0.0.1:<port>` of instance `index`, straight, not through nginx.
    pub(crate) fn instance_url(&self, index: usize) -> String {
        format!("http://127.0.0.1:{}", self.instances[index].port)
    }

    /// `127.0.0.1:<port>` of instance `index`, as nginx's `X-Volley-Upstream` names it.
    pub(crate) fn instance_address(&self, index: usize) -> String {
        format!("127.0.0.1:{}", self.instances[index].port)
    }

    /// Which instance answered, from an `X-Volley-Upstream` value: nginx lists every
    /// instance it tried (`a, b` when `a` did not answer), the last one answered.
    pub(crate) fn instance_of(&self, upstream: &str) -> Option<usize> {
        let address = upstream.rsplit(", ").next()?.trim();
        (0..self.instances.len()).find(|&index| self.instance_address(index) == address)
    }

    /// How many instances the cluster has.
    pub(crate) fn len(&self) -> usize {
        self.instances.len()
    }

    /// SIGKILL to instance `index` (and its process group); returns once it is gone.
    pub(crate) fn kill(&mut self, index: usize) {
        if let Some(mut process) = self.instances[index].process.take() {
            process.kill();
        }
    }

    /// Stops instance `index` gracefully (SIGTERM, SIGKILL after 15 seconds).
    pub(crate) async fn stop(&mut self, index: usize) {
        if let Some(process) = self.instances[index].process.take() {
            stop_all(vec![process]).await;
        }
    }

    /// Starts instance `index` again on its port (after `kill` or `stop`) and waits
    /// until it answers.
    pub(crate) async fn start_instance(&mut self, index: usize) {
        assert!(self.instances[index].process.is_none(), "instance {index} is running");
        self.spawn_instance(index);
        self.wait_healthy(index).await;
    }

    /// Stops instance `index` gracefully and starts it again on the same port.
    pub(crate) async fn restart(&mut self, index: usize) {
        self.stop(index).await;
        self.start_instance(index).await;
    }

    /// Stops every instance gracefully (all at once), then starts them all again on
    /// their ports; returns when each answers. Redis and nginx keep running.
    pub(crate) async fn restart_all(&mut self) {
        let running: Vec<Process> = self.instances.iter_mut().filter_map(|instance| instance.process.take()).collect();
        stop_all(running).await;
        for index in 0..self.instances.len() {
            self.spawn_instance(index);
        }
        for index in 0..self.instances.len() {
            self.wait_healthy(index).await;
        }
    }

    /// The last lines of every log, for a failure message.
    pub(crate) fn logs(&self) -> String {
        let mut logs = String::new();
        let mut names: Vec<String> = (0..self.instances.len()).map(|index| format!("instance-{index}.log")).collect();
        names.extend(["redis.log", "nginx-error.log"].map(str::to_owned));
        for name in names {
            let text = std::fs::read_to_string(self.scratch.join(&name)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = &lines[lines.len().saturating_sub(40)..];
            let _ = writeln!(logs, "--- {name} (last {} lines)", tail.len());
            for line in tail {
                let _ = writeln!(logs, "{line}");
            }
        }
        logs
    }

    fn spawn_instance(&mut self, index: usize) {
        let port = self.instances[index].port;
        let workspace = self.scratch.join("workspace");
        std::fs::create_dir_all(&workspace).expect("the workspace");
        let log = self.scratch.join(format!("instance-{index}.log"));
        self.instances[index].starts += 1;
        let starts = self.instances[index].starts;
        append(&log, &format!("=== start {starts} of instance {index} on port {port}\n"));
        let mut command = Command::new(&self.binary);
        command.args(["serve", "--port", &port.to_string()]);
        if self.shared {
            command.args(["--redis", &self.redis_url]);
        }
        if let Some(token) = &self.options.token {
            command.args(["--token", token]);
        }
        command
            .args(&self.options.serve_args)
            .arg("--workspace")
            .arg(&workspace)
            .env("NO_COLOR", "1")
            .env("RUST_LOG", std::env::var("VOLLEY_CLUSTER_LOG").unwrap_or_else(|_| "info".to_owned()))
            .env_remove("VOLLEY_TOKEN")
            // Only `--redis` says whether an instance shares.
            .env_remove("VOLLEY_REDIS");
        self.instances[index].process = Some(Process::spawn(&format!("instance {index}"), command, &log));
    }

    async fn wait_healthy(&mut self, index: usize) {
        let deadline = Instant::now() + START;
        let health = format!("{}/health", self.instance_url(index));
        while !self.answers(&health).await {
            let process = self.instances[index].process.as_mut().expect("the instance runs");
            if let Some(status) = process.child.try_wait().expect("wait") {
                panic!("volley serve (instance {index}) exited with {status} before answering on /health (logs below)");
            }
            assert!(
                Instant::now() < deadline,
                "volley serve (instance {index}) did not answer on /health within {START:?} (logs below)"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Whether `GET url` answers 200.
    async fn answers(&self, url: &str) -> bool {
        let mut request = self.http.get(url).timeout(Duration::from_secs(2));
        if let Some(token) = &self.options.token {
            request = request.bearer_auth(token);
        }
        request.send().await.is_ok_and(|response| response.status() == 200)
    }

    /// Panics with the logs when the process `name` exited or the deadline passed.
    fn check_alive(&mut self, name: &str, deadline: Instant) {
        let process = match name {
            "nginx" => self.nginx.as_mut(),
            _ => self.redis.as_mut(),
        }
        .expect("started");
        if let Some(status) = process.child.try_wait().expect("wait") {
            let output = std::fs::read_to_string(self.scratch.join(format!("{name}.out"))).unwrap_or_default();
            panic!("{name} exited with {status} before answering (logs below)\n{output}");
        }
        assert!(Instant::now() < deadline, "{name} did not answer within {START:?} (logs below)");
    }

    fn nginx_conf(&self, port: u16) -> String {
        let mut servers = String::new();
        for instance in &self.instances {
            let _ = writeln!(servers, "        server 127.0.0.1:{};", instance.port);
        }
        NGINX_CONF
            .replace("{scratch}", &self.scratch.display().to_string())
            .replace("{port}", &port.to_string())
            .replace("{servers}", &servers)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("cluster scratch directory: {}\n{}", self.scratch.display(), self.logs());
        }
        if let Some(mut nginx) = self.nginx.take() {
            nginx.kill();
        }
        for instance in &mut self.instances {
            if let Some(mut process) = instance.process.take() {
                process.kill();
            }
        }
        if let Some(mut redis) = self.redis.take() {
            redis.kill();
        }
        if std::env::var_os("VOLLEY_CLUSTER_KEEP").is_none() {
            let _ = std::fs::remove_dir_all(&self.scratch);
        }
    }
}

/// The configuration of nginx: round robin (nginx's default) over the instances, no
/// stickiness; HTTP/1.1 to them with keep-alive, WebSocket upgrades passed through,
/// nothing buffered (Server-Sent Events flow as they come), long reads for streams.
/// Everything it writes stays in the scratch directory.
const NGINX_CONF: &str = "\
worker_processes 1;
pid {scratch}/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path {scratch}/nginx-temp/body;
    proxy_temp_path {scratch}/nginx-temp/proxy;
    fastcgi_temp_path {scratch}/nginx-temp/fastcgi;
    uwsgi_temp_path {scratch}/nginx-temp/uwsgi;
    scgi_temp_path {scratch}/nginx-temp/scgi;
    map $http_upgrade $connection_upgrade {
        default upgrade;
        '' '';
    }
    upstream volley {
{servers}        keepalive 32;
    }
    server {
        listen 127.0.0.1:{port};
        client_max_body_size 12m;
        location / {
            proxy_pass http://volley;
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
            add_header X-Volley-Upstream $upstream_addr always;
        }
    }
}
";

impl Process {
    /// Starts `command` as the leader of a new process group, its output appended to `log`.
    fn spawn(name: &str, mut command: Command, log: &Path) -> Self {
        let output = std::fs::OpenOptions::new().create(true).append(true).open(log).expect("the log file");
        let child = command
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(output.try_clone().expect("the log file"))
            .stderr(output)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {name}: {error}"));
        Self { name: name.to_owned(), child }
    }

    /// SIGKILL to the whole group (nginx's workers, a server's command resolvers), then
    /// reaps the leader.
    fn kill(&mut self) {
        signal_group(self.child.id(), "KILL");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// SIGTERM to every process, then waits for each, killing what is left after [`GRACE`].
async fn stop_all(mut processes: Vec<Process>) {
    for process in &processes {
        signal_group(process.child.id(), "TERM");
    }
    let deadline = Instant::now() + GRACE;
    for process in &mut processes {
        loop {
            if process.child.try_wait().expect("wait").is_some() {
                break;
            }
            if Instant::now() >= deadline {
                eprintln!("{} did not stop within {GRACE:?} of SIGTERM: killed", process.name);
                process.kill();
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // What the leader started goes with it.
        signal_group(process.child.id(), "KILL");
    }
}

fn signal_group(leader: u32, signal: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg("--")
        .arg(format!("-{leader}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// The path of `name` on PATH or in the sbin directories (Debian's nginx is in
/// /usr/sbin, often not on a user's PATH); panics with how to install it otherwise.
fn program(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let sbin = ["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from);
    std::env::split_paths(&path)
        .chain(sbin)
        .map(|directory| directory.join(name))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!("{name} is not installed: the cluster tests need redis-server and nginx; run `{INSTALL}`")
        })
}

/// Whether a Redis server answers `PING` on `port`.
fn redis_answers(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect((Ipv4Addr::LOCALHOST, port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut answer = [0u8; 7];
    stream.read_exact(&mut answer).is_ok() && &answer == b"+PONG\r\n"
}

/// A port that was free a moment ago on 127.0.0.1.
/// A port free now, below the kernel's ephemeral range (32768–60999 on Linux). A port
/// from `bind(0)` comes from that range, and once released it may become the source port
/// of an outgoing connection (any test's, any process's) before the instance listens on
/// it: its `volley serve` then fails with "Address already in use", as it did when other
/// processes made connections during a run. Ports are tried from a start that depends
/// on the process, each once per process.
fn free_port() -> u16 {
    const FIRST: u32 = 10_000;
    const COUNT: u32 = 22_000;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let start = (std::process::id() % 1_000) * 20;
    loop {
        let step = u32::try_from(NEXT.fetch_add(1, Ordering::Relaxed) % u64::from(COUNT)).unwrap_or(0);
        let port = u16::try_from(FIRST + (start + step) % COUNT).unwrap_or(10_000);
        if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return port;
        }
    }
}

fn scratch_directory() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let directory = std::env::temp_dir().join(format!(
        "volley-cluster-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(directory.join("nginx-temp")).expect("the scratch directory");
    directory
}

fn append(path: &Path, text: &str) {
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).expect("the log file");
    file.write_all(text.as_bytes()).expect("the log file");
}

/// An HTTP client for loopback addresses: never through a proxy of the environment.
pub(crate) fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().no_proxy().build().expect("an HTTP client")
}
