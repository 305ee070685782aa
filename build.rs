//! Link options for the `cricket-announcer` binary.
//!
//! On Linux with glibc ≥ 2.36, the binary is linked with packed relative relocations
//! (`-z pack-relative-relocs`, DT_RELR: GNU ld ≥ 2.38, lld ≥ 15; glibc loads them since 2.36). A
//! position-independent executable holds one relocation per pointer in its read-only tables
//! (~40,000 here: panic locations, string tables, Unicode and HTML entity tables); as plain
//! `Elf64_Rela` entries they are a 24-byte-an-entry table (983 KB) the loader reads at every
//! start and that stays resident; packed, the same relocations take 15 KB (issue 37's memory
//! target, `docs/benchmarks.md` sections 7 and 8). The linker adds a version need on
//! `GLIBC_ABI_DT_RELR`, so a glibc older than 2.36 refuses to load such a binary, naming that
//! version, instead of running it half-relocated (the "version lockout" glibc and binutils
//! agreed on: <https://maskray.me/blog/2021-10-31-relative-relocations-and-relr>). So the flag is
//! given only when building on the machine's own glibc (not cross-compiling) and
//! `getconf GNU_LIBC_VERSION` reports 2.36 or later; elsewhere the relocations stay unpacked,
//! which costs memory, never correctness. `CRICKET_NO_RELR=1` leaves them unpacked too (a
//! binary built here to run on an older glibc). The check runs again only when this file or
//! `CRICKET_NO_RELR` changes: a target directory carried to a machine with an older glibc keeps
//! the flag (`cargo clean` there first). It assumes the linker is run through a C compiler
//! driver (`cc`, Rust's default on Linux), which takes `-Wl,`.

use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CRICKET_NO_RELR");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let native = var("TARGET") == var("HOST");
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" || !native {
        return;
    }
    if var("CRICKET_NO_RELR") == "1" || !glibc_at_least(2, 36) {
        return;
    }
    println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
}

/// Whether this machine's glibc (`getconf GNU_LIBC_VERSION`: `glibc 2.36`) is at least
/// `major.minor`; false when it cannot tell.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}
