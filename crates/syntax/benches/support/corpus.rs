//! The benchmark file: 10,000 varied requests, about 10 MB, generated
//! deterministically. Shared by `benches/parse.rs` and `examples/bench_file.rs` (which
//! writes it out, for profiling or for timing other tools on the same input).

// Shared by a benchmark and an example that each use part of it.
#![allow(dead_code)]

use std::fmt::Write as _;

pub(crate) const REQUESTS: usize = 10_000;
const TARGET_BYTES: usize = 10 * 1024 * 1024;

/// A small deterministic generator (xorshift), so every run measures the same file.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Builds the benchmark file: 10,000 requests in the styles people write (JSON bodies
/// with variables, forms, multipart uploads, file bodies, SSE, WebSocket, directives,
/// comments, scripts), padded with JSON to about 10 MB.
pub(crate) fn generate() -> String {
    let mut rng = Rng(0x5eed_cafe_f00d_u64);
    let mut out = String::with_capacity(TARGET_BYTES + 64 * 1024);
    out.push_str("@host = https://api.example.com\n@token = {{$env(API_TOKEN)}}\n@api.version = v2\n\n");
    let per_request = TARGET_BYTES / REQUESTS;
    let methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "get", "post"];
    let paths = ["users", "orders", "items", "search", "login", "reports", "files", "events"];
    let agents = ["volley/0.1", "curl/8.5.0", "Mozilla/5.0 (X11; Linux x86_64)"];
    for index in 0..REQUESTS {
        let kind = rng.below(20);
        let _ = writeln!(out, "### Request {index}");
        if rng.below(3) == 0 {
            let _ = writeln!(out, "# Fetches page {} of the listing, with filters.", rng.below(100));
        }
        let _ = writeln!(out, "# @name request{index}");
        if rng.below(2) == 0 {
            let _ = writeln!(out, "# @timeout {}", 1000 + rng.below(30_000));
        }
        let _ = writeln!(out, "# @assert status == 200");
        if rng.below(2) == 0 {
            let _ = writeln!(out, "# @assert jsonpath $.data[{}].id exists", rng.below(10));
        }
        let path = rng.pick(&paths);
        match kind {
            0 => {
                let _ = writeln!(out, "# @sse\nGET {{{{host}}}}/{path}/stream\nAccept: text/event-stream\n");
            }
            1 => {
                let _ = writeln!(
                    out,
                    "# @ws-subprotocols chat, json\nWEBSOCKET wss://ws.example.com/{path}?room={index}\n"
                );
            }
            2 => {
                let _ = writeln!(
                    out,
                    "POST {{{{host}}}}/{path}/upload\nContent-Type: multipart/form-data\nAuthorization: Bearer {{{{token}}}}\n\ntitle = Report {index}\nfile = @./fixtures/report-{index}.pdf | report.pdf\nchecksum = {{{{$uuid()}}}}\n"
                );
            }
            3 => {
                let _ = writeln!(
                    out,
                    "POST {{{{host}}}}/login\nContent-Type: application/x-www-form-urlencoded\n\ngrant_type = client_credentials\nclient_id = {{{{clientId}}}}\nclient_secret = {{{{$secret(CLIENT_SECRET)}}}}\n"
                );
            }
            4 => {
                let _ = writeln!(
                    out,
                    "PUT {{{{host}}}}/{path}/{index}\nContent-Type: application/json\n\n< ./payloads/{path}-{index}.json\n"
                );
            }
            _ => {
                let method = rng.pick(&methods);
                let _ = writeln!(
                    out,
                    "{method} {{{{host}}}}/{{{{api.version}}}}/{path}/{}?page={}&limit={} HTTP/1.1",
                    rng.below(100_000),
                    rng.below(50),
                    10 + rng.below(90)
                );
                if rng.below(3) == 0 {
                    let _ = writeln!(out, "    &sort=created_at\n    &order=desc");
                }
                let _ = writeln!(out, "Accept: application/json");
                let _ = writeln!(out, "Authorization: Bearer {{{{token}}}}");
                let _ = writeln!(out, "User-Agent: {}", rng.pick(&agents));
                let _ = writeln!(out, "X-Request-Id: {{{{$uuid()}}}}");
                let _ = writeln!(out, "Content-Type: application/json; charset=utf-8");
                out.push('\n');
                out.push_str("{\n");
                let _ = writeln!(out, "  \"id\": {index},");
                let _ = writeln!(out, "  \"requestedAt\": \"{{{{$isoTimestamp()}}}}\",");
                let _ = writeln!(
                    out,
                    "  \"owner\": {{\"name\": \"{{{{userName}}}}\", \"email\": \"user{index}@example.com\"}},"
                );
                out.push_str("  \"items\": [\n");
                let mut item = 0;
                // JSON requests carry the padding, so the file reaches its size on
                // average across all kinds of requests.
                while out.len() < ((index + 1) * per_request).saturating_sub(120) {
                    let _ = writeln!(
                        out,
                        "    {{\"sku\": \"SKU-{:06}\", \"quantity\": {}, \"price\": {}.{:02}, \"tags\": [\"{}\", \"{}\"]}},",
                        rng.below(1_000_000),
                        1 + rng.below(9),
                        rng.below(500),
                        rng.below(100),
                        rng.pick(&paths),
                        rng.pick(&paths)
                    );
                    item += 1;
                }
                let _ = writeln!(out, "    {{\"sku\": \"LAST\", \"quantity\": {item}}}\n  ]\n}}");
                if rng.below(4) == 0 {
                    out.push_str("\n> {%\n  client.global.set(\"id\", response.body.id);\n%}\n");
                }
                out.push('\n');
            }
        }
    }
    out
}
