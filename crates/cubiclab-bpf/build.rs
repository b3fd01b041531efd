//! Compiles the BPF ports (bpf/*.bpf.c) with clang against a vmlinux.h dumped by bpftool
//! from the build machine's kernel BTF (/sys/kernel/btf/vmlinux; about 3 MB, generated,
//! never committed). CO-RE relocations let the objects load on other kernels with BTF.
//!
//! When something is missing the crate still builds: the objects are empty and
//! `CUBICLAB_BPF_BUILD` carries the reason, which the loader reports with what to install.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// (object stem, source, extra clang arguments). The loader's table (src/ports.rs) names
/// the same stems.
const OBJECTS: &[(&str, &str, &[&str])] = &[
    ("cubic22", "cubic_old.bpf.c", &["-DCUBIC_V=22"]),
    ("cubic20", "cubic_old.bpf.c", &["-DCUBIC_V=20"]),
    ("scalable", "scalable.bpf.c", &[]),
];

fn run(cmd: &mut Command, what: &str) -> Result<Vec<u8>, String> {
    let out = cmd.output().map_err(|e| format!("{what}: cannot run {:?}: {e}", cmd.get_program()))?;
    if !out.status.success() {
        return Err(format!("{what} failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(out.stdout)
}

fn build(out: &Path, libbpf_include: &str) -> Result<(), String> {
    let btf = Path::new("/sys/kernel/btf/vmlinux");
    if !btf.exists() {
        return Err("this kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF)".into());
    }
    let header = run(
        Command::new("bpftool").args(["btf", "dump", "file"]).arg(btf).args(["format", "c"]),
        "bpftool (Debian package bpftool) dumping the kernel's BTF",
    )?;
    std::fs::write(out.join("vmlinux.h"), header).map_err(|e| e.to_string())?;
    for (stem, src, defines) in OBJECTS {
        let mut cmd = Command::new("clang");
        cmd.args(["-O2", "-g", "-Wall", "-target", "bpf", "-D__TARGET_ARCH_x86"])
            .args(*defines)
            .arg("-I")
            .arg(out)
            .arg("-I")
            .arg(libbpf_include)
            .arg("-c")
            .arg(Path::new("bpf").join(src))
            .arg("-o")
            .arg(out.join(format!("{stem}.bpf.o")));
        run(&mut cmd, &format!("clang (Debian package clang) compiling {src} for {stem}"))?;
    }
    Ok(())
}

fn main() {
    println!("cargo:rerun-if-changed=bpf");
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let include = env::var("DEP_BPF_INCLUDE").unwrap_or_default();
    let status = match build(&out, &include) {
        Ok(()) => "ok".to_string(),
        Err(e) => {
            println!("cargo:warning=cubiclab-bpf: BPF ports not built: {e}");
            for (stem, _, _) in OBJECTS {
                let _ = std::fs::write(out.join(format!("{stem}.bpf.o")), b"");
            }
            e.replace('\n', " ")
        }
    };
    println!("cargo:rustc-env=CUBICLAB_BPF_BUILD={status}");
}
