//! The binary's relative relocations are packed (`DT_RELR`, build.rs) where the C
//! library reads them, and only there.
#![allow(clippy::unwrap_used)] // In tests a failing unwrap is a failing test.

#[path = "../../glibc.rs"]
mod glibc;

/// The `d_tag` of a packed relative relocation table.
const DT_RELR: i64 = 36;
/// The program header of the dynamic section.
const PT_DYNAMIC: u32 = 2;

/// The tags of the dynamic section of a little-endian ELF64 file.
fn dynamic_tags(elf: &[u8]) -> Vec<i64> {
    let u16_at = |at: usize| u16::from_le_bytes(elf[at..at + 2].try_into().unwrap());
    let u32_at = |at: usize| u32::from_le_bytes(elf[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap());
    assert_eq!(&elf[..4], b"\x7fELF", "an ELF file");
    assert_eq!((elf[4], elf[5]), (2, 1), "ELF64, little-endian");
    let (table, size, count) = (u64_at(0x20) as usize, usize::from(u16_at(0x36)), usize::from(u16_at(0x38)));
    let dynamic = (0..count)
        .map(|index| table + index * size)
        .find(|&header| u32_at(header) == PT_DYNAMIC)
        .expect("a dynamic section: the binary is position-independent");
    let (start, length) = (u64_at(dynamic + 8) as usize, u64_at(dynamic + 32) as usize);
    elf[start..start + length]
        .chunks_exact(16)
        .map(|entry| i64::from_le_bytes(entry[..8].try_into().unwrap()))
        .take_while(|&tag| tag != 0)
        .collect()
}

#[cfg(all(target_os = "linux", target_env = "gnu", target_endian = "little", target_pointer_width = "64"))]
#[test]
fn relative_relocations_are_packed_where_glibc_reads_them() {
    let binary = std::fs::read(env!("CARGO_BIN_EXE_volley")).unwrap();
    let packed = dynamic_tags(&binary).contains(&DT_RELR);
    let glibc = glibc::version().expect("getconf GNU_LIBC_VERSION");
    assert_eq!(packed, glibc >= glibc::WITH_RELR, "DT_RELR in the binary: {packed}; glibc {glibc:?}");
}
