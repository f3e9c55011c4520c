//! With the feature `grpc`: the code of `GrpcServer` from `tests/grpc/protos/shop.proto`,
//! the schema the grpc-js server of `tests/grpc` serves too. protox compiles the protos in
//! process (the machines have no `protoc`) into a descriptor set, which tonic-prost-build
//! turns into prost messages and a tonic server (`OUT_DIR/shop.v1.rs`,
//! `OUT_DIR/shop.common.rs`) and which server reflection serves (`OUT_DIR/shop.protoset`).
//! Without the feature it does nothing.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    #[cfg(feature = "grpc")]
    grpc::generate();
}

#[cfg(feature = "grpc")]
mod grpc {
    use std::path::{Path, PathBuf};

    /// The protos, relative to this crate.
    const PROTOS: &str = "../../tests/grpc/protos";
    /// The files the server serves; imports come with them.
    const FILES: [&str; 2] = ["shop.proto", "common/money.proto"];

    pub(crate) fn generate() {
        let protos = Path::new(env!("CARGO_MANIFEST_DIR")).join(PROTOS);
        for file in FILES {
            println!("cargo::rerun-if-changed={}", protos.join(file).display());
        }
        let mut compiler = protox::Compiler::new([&protos]).unwrap_or_else(|error| panic!("{PROTOS}: {error}"));
        compiler.include_imports(true);
        compiler.open_files(FILES).unwrap_or_else(|error| panic!("{PROTOS}: {error:?}"));
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
        std::fs::write(out.join("shop.protoset"), compiler.encode_file_descriptor_set())
            .expect("OUT_DIR/shop.protoset is writable");
        tonic_prost_build::configure()
            .build_client(false)
            .build_transport(false)
            .compile_fds(compiler.file_descriptor_set())
            .expect("tonic-prost-build generates the server");
    }
}
