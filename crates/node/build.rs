//! Sets the linker flags of a Node addon (on macOS: N-API symbols resolved at load time).

fn main() {
    napi_build::setup();
}
