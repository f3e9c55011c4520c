//! The tonic gRPC test server on its own, for benchmarks (`bench/grpc-vs-http`): prints
//! `listening on PORT` and serves until killed.
//!
//! `cargo run --release -p volley-echo-server --features grpc --example grpc_server`

#[tokio::main(flavor = "current_thread")]
#[allow(clippy::print_stdout)] // Where it listens is what this program says.
async fn main() {
    let server = volley_echo_server::GrpcServer::start(volley_echo_server::GrpcOptions::default()).await;
    println!("listening on {}", server.addr.port());
    std::future::pending::<()>().await;
}
