//! Link options for the `cricket-announcer` binary.
//!
//! On Linux with glibc, the binary is linked with packed relative relocations
//! (`-z pack-relative-relocs`, DT_RELR: GNU ld ≥ 2.38, glibc ≥ 2.36 to load it). A
//! position-independent executable holds one relocation per pointer in its read-only tables
//! (~40,000 here: panic locations, string tables, Unicode and HTML entity tables); as plain
//! `Elf64_Rela` entries they are a 24-byte-an-entry table (~1 MB) the loader reads at every
//! start and that stays resident; packed, the same relocations take a few KiB (issue 37's
//! memory target, `docs/benchmarks.md` sections 7 and 8). ld adds a version need on
//! `GLIBC_ABI_DT_RELR` (LLVM's D120701 and glibc's patch adding that version describe the
//! mechanism), so a glibc too old to apply them refuses to load the binary with an error naming
//! that version instead of running it half-relocated.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
