//! Client certificates as people make them with the `openssl` command (a CA, then
//! `openssl req -newkey … -nodes` and `openssl x509 -req -CA …`, which writes X.509
//! version 1 certificates), in each key format OpenSSL writes, presented to a server
//! that checks them as OpenSSL-based servers do; and what Volley says of the files it
//! cannot use. The `openssl` command must be installed: without it these tests fail.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use support::{echo, in_project};
use volley_echo_server::{TestPki, TestServer};
use volley_engine::io::MemoryFs;
use volley_engine::resolvers::Environment;
use volley_engine::{Client, ClientConfig, ConfigSource, Error, TransportError};

/// Runs `openssl ARGS` in `dir` and returns its standard output.
fn openssl(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("openssl").args(args).current_dir(dir).output().unwrap_or_else(|error| {
        panic!(
            "these tests make their certificates with the `openssl` command, which cannot be run ({error}): \
             install OpenSSL (Debian and Ubuntu: `apt-get install openssl`)"
        )
    });
    assert!(
        output.status.success(),
        "`openssl {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A temporary directory of files made by `openssl`, removed when dropped.
struct OpenSslFiles {
    dir: PathBuf,
}

impl Drop for OpenSslFiles {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// The configuration of `openssl ca`, for certificates with chosen dates (`-startdate`,
/// `-enddate`: OpenSSL before 3.4 has no `x509 -not_before`).
const CA_CONFIG: &str = "[ca]\ndefault_ca = test_ca\n[test_ca]\ndatabase = index.txt\nnew_certs_dir = .\n\
                         serial = serial\ndefault_md = sha256\nunique_subject = no\npolicy = any_name\n\
                         [any_name]\ncommonName = supplied\n";

impl OpenSslFiles {
    /// A CA and client certificates signed by it, the common recipe's way:
    /// - `client.pem` (X.509 v1) with `client.key` (PKCS#8), `client.rsa.key` (PKCS#1)
    ///   and `client.enc.key` (PKCS#8 encrypted with AES, passphrase `battery-staple`);
    /// - `ec.pem` with `ec.key` (SEC1, P-256); `p521.pem` with `p521.key` (P-521);
    /// - `reversed.pem`: the CA, then `client.pem` (leaf last);
    /// - `client.p12`: `client.pem`, its key and the CA, passphrase `battery-staple`;
    /// - `expired.pem` (2020) and `future.pem` (2099), for `client.key`;
    /// - `other.key`: an RSA key of no certificate.
    fn make(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("volley-openssl-{}-{tag}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        let files = Self { dir };
        let run = |args: &str| openssl(&files.dir, &args.split(' ').collect::<Vec<_>>());
        let subject = |args: &str, subject: &str| {
            let mut args: Vec<&str> = args.split(' ').collect();
            args.extend(["-subj", subject]);
            openssl(&files.dir, &args)
        };
        subject("req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 30", "/CN=Volley OpenSSL Test CA");
        subject("req -new -newkey rsa:2048 -nodes -keyout client.key -out client.csr", "/CN=volley openssl client");
        let sign = |name: &str| {
            run(&format!("x509 -req -in {name}.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -out {name}.pem"))
        };
        sign("client");
        run("rsa -in client.key -traditional -out client.rsa.key");
        run("pkcs8 -topk8 -v2 aes-256-cbc -in client.key -out client.enc.key -passout pass:battery-staple");
        run("ecparam -name prime256v1 -genkey -noout -out ec.key");
        subject("req -new -key ec.key -out ec.csr", "/CN=volley openssl ec client");
        sign("ec");
        run("ecparam -name secp521r1 -genkey -noout -out p521.key");
        subject("req -new -key p521.key -out p521.csr", "/CN=volley openssl p521 client");
        sign("p521");
        run("genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out other.key");
        run("pkcs12 -export -inkey client.key -in client.pem -certfile ca.pem -out client.p12 -passout \
             pass:battery-staple");
        files.write("ca.cnf", CA_CONFIG);
        files.write("index.txt", "");
        files.write("serial", "01\n");
        let dated = |out: &str, start: &str, end: &str| {
            run(&format!(
                "ca -batch -notext -config ca.cnf -cert ca.pem -keyfile ca.key -in client.csr -out {out} -startdate \
                 {start} -enddate {end}"
            ))
        };
        dated("expired.pem", "20200101000000Z", "20201231000000Z");
        dated("future.pem", "20990101000000Z", "20991231000000Z");
        files.write("reversed.pem", &format!("{}{}", files.read("ca.pem"), files.read("client.pem")));

        // The premises: what the recipe makes.
        assert!(run("x509 -in client.pem -noout -text").contains("Version: 1 (0x0)"), "client.pem is not X.509 v1");
        for (file, begins) in [
            ("client.key", "-----BEGIN PRIVATE KEY-----"),
            ("client.rsa.key", "-----BEGIN RSA PRIVATE KEY-----"),
            ("ec.key", "-----BEGIN EC PRIVATE KEY-----"),
            ("client.enc.key", "-----BEGIN ENCRYPTED PRIVATE KEY-----"),
        ] {
            assert!(files.read(file).starts_with(begins), "{file} does not begin with {begins}");
        }
        files
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.dir.join(name), text).unwrap();
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).unwrap()
    }

    /// A project holding every file under `certs/`, the server's CA as `certs/server-ca.pem`,
    /// and a volley.jsonc presenting `entry` to 127.0.0.1.
    fn project(&self, pki: &TestPki, entry: &str) -> MemoryFs {
        let files = MemoryFs::new();
        for item in std::fs::read_dir(&self.dir).unwrap() {
            let item = item.unwrap();
            files.insert(Path::new("/project/certs").join(item.file_name()), std::fs::read(item.path()).unwrap());
        }
        files.insert("/project/certs/server-ca.pem", pki.ca_pem());
        files.insert(
            "/project/volley.jsonc",
            format!(r#"{{"tls": {{"ca": "certs/server-ca.pem", "hosts": {{"127.0.0.1": {{{entry}}}}}}}}}"#),
        );
        files
    }
}

fn client_in(files: &MemoryFs) -> Client {
    Client::new(ClientConfig {
        io: Arc::new(files.clone()),
        config: ConfigSource::Discover,
        environment: Environment::fixed([("CLIENT_PASSPHRASE".to_owned(), "battery-staple".to_owned())]),
        ..support::config()
    })
}

async fn get(client: &Client, url: &str) -> Result<volley_engine::Response, Error> {
    client.run_string(&format!("GET {url}\n"), in_project()).await
}

#[tokio::test]
async fn certificates_made_with_the_openssl_command_are_presented_as_curl_presents_them() {
    let made = OpenSslFiles::make("accepted");
    let pki = TestPki::generate("Volley Test Server CA");
    let (server, verified) = TestServer::start_tls_for_client_ca(&pki, &made.read("ca.pem")).await;
    let url = server.url("/echo");
    let cases = [
        ("X.509 v1, PKCS#8 key", r#""cert": "certs/client.pem", "key": "certs/client.key""#, "volley openssl client"),
        ("PKCS#1 key", r#""cert": "certs/client.pem", "key": "certs/client.rsa.key""#, "volley openssl client"),
        (
            "encrypted PKCS#8 key",
            r#""cert": "certs/client.pem", "key": "certs/client.enc.key", "passphrase": "{{$secret CLIENT_PASSPHRASE}}""#,
            "volley openssl client",
        ),
        ("SEC1 EC key", r#""cert": "certs/ec.pem", "key": "certs/ec.key""#, "volley openssl ec client"),
        ("chain leaf last", r#""cert": "certs/reversed.pem", "key": "certs/client.key""#, "volley openssl client"),
        (
            "PKCS#12 of OpenSSL 3",
            r#""pfx": "certs/client.p12", "passphrase": "{{$secret CLIENT_PASSPHRASE}}""#,
            "volley openssl client",
        ),
    ];
    for (index, (case, entry, subject)) in cases.iter().enumerate() {
        let response = get(&client_in(&made.project(&pki, entry)), &url).await;
        let response = response.unwrap_or_else(|error| panic!("{case}: {error} ({error:?})"));
        echo(&response).await;
        // The server received the certificate and verified it.
        let seen = verified.subjects();
        assert_eq!(seen.len(), index + 1, "{case}: {seen:?}");
        assert_eq!(seen[index], format!("CN={subject}"), "{case}");
    }

    // The server does verify: a certificate of another CA is refused in the handshake.
    let stranger = TestPki::generate("Another CA");
    let files = made.project(&pki, r#""cert": "certs/stranger.pem", "key": "certs/stranger.key""#);
    files.insert("/project/certs/stranger.pem", stranger.client_pem());
    files.insert("/project/certs/stranger.key", stranger.client_key_pem());
    let error = get(&client_in(&files), &url).await.unwrap_err();
    assert!(matches!(&error, Error::Transport(TransportError::Tls { .. })), "{error:?}");
    assert_eq!(verified.subjects().len(), cases.len(), "{:?}", verified.subjects());
}

#[tokio::test]
async fn what_is_wrong_with_a_client_certificate_is_said_with_its_file() {
    let made = OpenSslFiles::make("refused");
    let pki = TestPki::generate("Volley Test Server CA");
    let (server, verified) = TestServer::start_tls_for_client_ca(&pki, &made.read("ca.pem")).await;
    let url = server.url("/echo");
    // (case, entry, the file named, words of the message, words of the hint)
    let cases = [
        ("expired", r#""cert": "certs/expired.pem", "key": "certs/client.key""#, "expired.pem", "expired on", "new"),
        (
            "not yet valid",
            r#""cert": "certs/future.pem", "key": "certs/client.key""#,
            "future.pem",
            "not valid before",
            "clock",
        ),
        (
            "another key",
            r#""cert": "certs/client.pem", "key": "certs/other.key""#,
            "client.pem",
            "do not go together",
            "openssl pkey -pubout",
        ),
        (
            "a key Volley cannot sign with",
            r#""cert": "certs/p521.pem", "key": "certs/p521.key""#,
            "p521.key",
            "P-521",
            "P-256",
        ),
        (
            "a key named as the certificate",
            r#""cert": "certs/client.key", "key": "certs/client.key""#,
            "client.key",
            "not a certificate",
            "`cert`",
        ),
        (
            "a certificate named as the key",
            r#""cert": "certs/client.pem", "key": "certs/ec.pem""#,
            "ec.pem",
            "not a private key",
            "`key`",
        ),
    ];
    for (case, entry, file, said, hinted) in cases {
        let error = get(&client_in(&made.project(&pki, entry)), &url).await.unwrap_err();
        let Error::Transport(transport @ TransportError::Certificate { path, message, hint }) = &error else {
            panic!("{case}: expected a certificate error, got {error:?}")
        };
        assert!(path.ends_with(file), "{case}: {}", path.display());
        assert!(message.contains(said), "{case}: {message}");
        assert!(hint.contains(hinted), "{case}: {hint}");
        assert!(transport.to_string().contains(file), "{case}: {transport}");
    }
    assert!(verified.subjects().is_empty(), "{:?}", verified.subjects());
}
