//! This machine's glibc and whether its loader reads packed relative relocations: one
//! reading for build.rs, which decides, and the test that checks the binary it built.

/// The first glibc whose loader reads `DT_RELR`.
pub(crate) const WITH_RELR: (u32, u32) = (2, 36);

/// This machine's glibc version, from `getconf GNU_LIBC_VERSION` ("glibc 2.36").
pub(crate) fn version() -> Option<(u32, u32)> {
    let output = std::process::Command::new("getconf").arg("GNU_LIBC_VERSION").output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let (major, minor) = text.trim().strip_prefix("glibc ")?.split_once('.')?;
    Some((major.parse().ok()?, minor.chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok()?))
}
