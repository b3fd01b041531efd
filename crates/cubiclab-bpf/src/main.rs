//! `cubiclab-bpf`: registers cubiclab's BPF ports of library algorithms as kernel congestion
//! controls for the length of a run, and unregisters them on every way out.
//!
//! ```text
//! cubiclab-bpf list                      the ports as JSON, and why they cannot load if so
//! cubiclab-bpf load [--watch FILE] [--stats] NAME=ALG[:k=v,...]...
//!                                        register each instance, print {"loaded": ...},
//!                                        then hold until stdin closes or a signal arrives;
//!                                        --watch: record the ACKs the kernel ran BPF on
//!                                        for these sockets (see watch.rs); --stats: print
//!                                        each program's run count and time at the end
//! cubiclab-bpf probe-bbr FILE            record every ACK of the kernel's bbr sockets
//!                                        (see bbr_probe.rs) until stdin closes
//! cubiclab-bpf replay-bbr3 FILE [k=v...] replay a bbr3 port's hook log through the
//!                                        library's bbr3 (see bbr3_replay.rs)
//! ```
//! `load --hooklog DIR` also copies the hook log of each instance whose port keeps one
//! (bbr3) to DIR/NAME.bin (hooklog.rs).
//! Each instance is its own object (own parameters, own per-socket code) registered under
//! NAME (at most 15 characters). The registration is a BPF link owned by this process:
//! on SIGTERM/SIGINT/SIGHUP, on the end of stdin, when the parent dies (PR_SET_PDEATHSIG)
//! the links are closed and the names leave the kernel's list; on SIGKILL the kernel closes
//! them itself. Nothing is pinned, no kernel-wide setting is touched.

mod bbr3_replay;
mod bbr_probe;
mod hooklog;
mod ports;
mod recorder;
mod watch;

use std::io::Read;
use std::process::ExitCode;

use cubiclab_cc::Params;
use std::os::fd::{AsFd, AsRawFd};

use libbpf_rs::{Link, MapCore, MapType, Object, ObjectBuilder};

const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";
/// TCP_CA_NAME_MAX - 1.
const NAME_MAX: usize = 15;

struct Instance {
    name: String,
    algorithm: &'static str,
    params: Params,
}

fn parse_instance(spec: &str) -> Result<Instance, String> {
    let (name, rest) = spec.split_once('=').ok_or_else(|| format!("'{spec}': expected NAME=ALGORITHM[:k=v,...]"))?;
    if name.is_empty() || name.len() > NAME_MAX || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(format!("name '{name}': 1 to {NAME_MAX} characters of [A-Za-z0-9_]"));
    }
    let (alg, kv) = rest.split_once(':').unwrap_or((rest, ""));
    let port = ports::find(alg)?;
    let params = parse_params(kv.split(',').filter(|s| !s.is_empty()))?;
    ports::param_values(port, &params).map_err(|e| e.0)?;
    Ok(Instance { name: name.to_string(), algorithm: port.algorithm, params })
}

/// Parameters given as `key=value` items: a number, else a name (a choice; the library
/// checks both).
fn parse_params<'a>(items: impl Iterator<Item = &'a str>) -> Result<Params, String> {
    let mut params = Params::new();
    for item in items {
        let (k, v) = item.split_once('=').ok_or_else(|| format!("parameter '{item}': expected key=value"))?;
        match v.parse::<f64>() {
            Ok(number) => params.insert(k, number),
            Err(_) => params.insert(k, v),
        }
    }
    Ok(params)
}

fn registered() -> Vec<String> {
    std::fs::read_to_string(AVAILABLE).unwrap_or_default().split_whitespace().map(str::to_string).collect()
}

/// Open the port's object, write the instance's name and parameters (and, with `hooklog`,
/// turn on the hook log of a port that keeps one: hooklog.rs), load and register it.
fn register(inst: &Instance, hooklog: bool) -> Result<(Object, Link), String> {
    let port = ports::find(inst.algorithm)?;
    let values = ports::param_values(port, &inst.params).map_err(|e| e.0)?;
    let offsets = ports::param_offsets(port.object).map_err(|e| format!("{}: {e}", inst.name))?;
    let mut open = ObjectBuilder::default()
        .open_memory(port.object)
        .map_err(|e| format!("{}: opening the object: {e}", inst.name))?;
    let mut named = false;
    let mut params_set = false;
    for mut map in open.maps_mut() {
        let map_name = map.name().to_string_lossy().into_owned();
        if map.map_type() == MapType::StructOps {
            let data = map.initial_value_mut().ok_or("the struct_ops map has no data")?;
            // The object's placeholder name ("clk_...") sits in tcp_congestion_ops.name.
            let at = data.windows(4).position(|w| w == b"clk_").ok_or("no placeholder name in the object")?;
            let field = &mut data[at..at + NAME_MAX + 1];
            field.fill(0);
            field[..inst.name.len()].copy_from_slice(inst.name.as_bytes());
            named = true;
        } else if map_name.ends_with("rodata.params") {
            let data = map.initial_value_mut().ok_or("the parameter section has no data")?;
            ports::write_params(data, &offsets, &values).map_err(|e| format!("{}: {e}", inst.name))?;
            params_set = true;
        } else if hooklog && map_name.ends_with("rodata.hooklog") {
            // HOOKLOG_ON, the section's one u32.
            let data = map.initial_value_mut().ok_or("the hook log switch has no data")?;
            data[..4].copy_from_slice(&1u32.to_ne_bytes());
        }
    }
    // An algorithm without parameters has no parameter section.
    if !named || (!params_set && !offsets.is_empty()) {
        return Err(format!("{}: the object lacks its struct_ops map or parameter section", inst.name));
    }
    let mut obj = open.load().map_err(|e| format!("{}: the kernel refused the program: {e}", inst.name))?;
    let mut map =
        obj.maps_mut().find(|m| m.map_type() == MapType::StructOps).ok_or("the struct_ops map vanished on load")?;
    let link = map.attach_struct_ops().map_err(|e| format!("{}: registering: {e}", inst.name))?;
    Ok((obj, link))
}

/// `--stats`: each program's `run_cnt` and `run_time_ns` (struct bpf_prog_info), which the
/// kernel counts while statistics are enabled (`BPF_ENABLE_STATS`, held by this process).
fn program_stats(name: &str, obj: &Object) -> String {
    let progs: Vec<String> = obj
        .progs()
        .map(|p| {
            let mut info: libbpf_sys::bpf_prog_info = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libbpf_sys::bpf_prog_info>() as u32;
            let rc = unsafe {
                libbpf_sys::bpf_prog_get_info_by_fd(p.as_fd().as_raw_fd(), &mut info as *mut _ as *mut _, &mut len)
            };
            let (cnt, ns, miss) =
                if rc == 0 { (info.run_cnt, info.run_time_ns, info.recursion_misses) } else { (0, 0, 0) };
            format!(
                "{}:{{\"run_cnt\":{cnt},\"run_time_ns\":{ns},\"recursion_misses\":{miss}}}",
                json_str(&p.name().to_string_lossy())
            )
        })
        .collect();
    format!("{}:{{{}}}", json_str(name), progs.join(","))
}

fn json_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn list() -> ExitCode {
    let ports: Vec<String> = ports::PORTS
        .iter()
        .map(|p| {
            format!(
                "{{\"algorithm\":{},\"tag\":{},\"fixed_point\":{},\"exact_twin\":{}}}",
                json_str(p.algorithm),
                json_str(p.tag),
                json_str(p.fixed_point),
                json_str(p.exact_twin)
            )
        })
        .collect();
    let problem = ports::build_problem().map_or("null".to_string(), json_str);
    println!("{{\"ports\":[{}],\"build_problem\":{problem}}}", ports.join(","));
    ExitCode::SUCCESS
}

/// Block the signals that end a run, so they are taken by `sigwait` in order.
fn block_signals() -> libc::sigset_t {
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGPIPE] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

/// The longest prefix the instance names share (the witness's socket filter).
fn common_prefix(names: &[String]) -> String {
    let first = names.first().map(String::as_str).unwrap_or("");
    let len =
        names.iter().fold(first.len(), |n, s| first.bytes().zip(s.bytes()).take(n).take_while(|(a, b)| a == b).count());
    first[..len].to_string()
}

/// Wait for one of the signals in `set` (blocked by [`block_signals`]); the end of stdin
/// (the parent closed it or died) counts as SIGTERM. Returns the signal.
fn hold(set: &libc::sigset_t) -> i32 {
    std::thread::spawn(|| {
        let mut buf = [0u8; 256];
        let mut stdin = std::io::stdin();
        while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
        unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
    });
    let mut sig = 0;
    unsafe { libc::sigwait(set, &mut sig) };
    sig
}

/// `probe-bbr FILE`: record the kernel's bbr sockets per ACK until stdin closes.
fn probe_bbr(args: &[String]) -> ExitCode {
    let [path] = args else {
        eprintln!("cubiclab-bpf: probe-bbr needs one FILE");
        return ExitCode::from(2);
    };
    if let Some(reason) = ports::build_problem() {
        eprintln!("cubiclab-bpf: the BPF programs were not built: {reason}");
        return ExitCode::from(3);
    }
    let set = block_signals();
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        if libc::getppid() == 1 {
            return ExitCode::from(1);
        }
    }
    let recorder = match bbr_probe::start(std::path::PathBuf::from(path)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cubiclab-bpf: {e}");
            return ExitCode::from(3);
        }
    };
    println!("{{\"recording\":{},\"pid\":{}}}", json_str(path), std::process::id());
    let sig = hold(&set);
    if let Err(e) = recorder.finish() {
        eprintln!("cubiclab-bpf: {e}");
        return ExitCode::from(1);
    }
    eprintln!("cubiclab-bpf: probe-bbr detached (signal {sig})");
    ExitCode::SUCCESS
}

fn load(mut args: &[String]) -> ExitCode {
    let (mut watch_path, mut stats, mut hooklog_dir) = (None, false, None);
    loop {
        match args {
            [flag, path, rest @ ..] if flag == "--watch" => {
                (watch_path, args) = (Some(std::path::PathBuf::from(path)), rest)
            }
            [flag, dir, rest @ ..] if flag == "--hooklog" => {
                (hooklog_dir, args) = (Some(std::path::PathBuf::from(dir)), rest)
            }
            [flag, rest @ ..] if flag == "--stats" => (stats, args) = (true, rest),
            _ => break,
        }
    }
    let specs = args;
    if let Some(reason) = ports::build_problem() {
        eprintln!("cubiclab-bpf: the BPF ports were not built: {reason}");
        return ExitCode::from(3);
    }
    if specs.is_empty() {
        eprintln!("cubiclab-bpf: load needs at least one NAME=ALGORITHM");
        return ExitCode::from(2);
    }
    let mut instances = Vec::new();
    for s in specs {
        match parse_instance(s) {
            Ok(i) => instances.push(i),
            Err(e) => {
                eprintln!("cubiclab-bpf: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let taken = registered();
    if let Some(i) = instances.iter().find(|i| taken.contains(&i.name)) {
        eprintln!("cubiclab-bpf: '{}' is already registered in {AVAILABLE}", i.name);
        return ExitCode::from(2);
    }
    // Signals first, then the parent-death signal, so no exit path skips the unregistering.
    let set = block_signals();
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        if libc::getppid() == 1 {
            return ExitCode::from(1);
        }
    }
    let mut links = Vec::new();
    for inst in &instances {
        match register(inst, hooklog_dir.is_some()) {
            Ok(pair) => links.push(pair),
            Err(e) => {
                eprintln!("cubiclab-bpf: {e}");
                drop(links);
                return ExitCode::from(3);
            }
        }
    }
    let names: Vec<String> = instances.iter().map(|i| i.name.clone()).collect();
    let mut hooklogs = Vec::new();
    if let Some(dir) = &hooklog_dir {
        for (name, (obj, _)) in names.iter().zip(&links) {
            match hooklog::start(name, obj, dir) {
                Ok(log) => hooklogs.extend(log),
                Err(e) => {
                    eprintln!("cubiclab-bpf: {e}");
                    return ExitCode::from(3);
                }
            }
        }
    }
    // Statistics stay on while this fd is open (kernel.bpf_stats_enabled is not touched).
    let stats_fd = if stats { unsafe { libbpf_sys::bpf_enable_stats(libbpf_sys::BPF_STATS_RUN_TIME) } } else { -1 };
    if stats && stats_fd < 0 {
        eprintln!("cubiclab-bpf: enabling BPF run-time statistics failed ({stats_fd})");
        return ExitCode::from(3);
    }
    let watch = match watch_path.map(|p| watch::start(&common_prefix(&names), p)).transpose() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("cubiclab-bpf: {e}");
            return ExitCode::from(3);
        }
    };
    let listed = registered();
    if let Some(n) = names.iter().find(|n| !listed.contains(n)) {
        eprintln!("cubiclab-bpf: '{n}' was attached but is not in {AVAILABLE}");
        return ExitCode::from(3);
    }
    let pairs: Vec<String> =
        instances.iter().map(|i| format!("{}:{}", json_str(&i.name), json_str(i.algorithm))).collect();
    println!("{{\"loaded\":{{{}}},\"pid\":{}}}", pairs.join(","), std::process::id());
    let sig = hold(&set);
    let watched = watch.map(recorder::Recorder::finish).transpose();
    if stats {
        let each: Vec<String> = names.iter().zip(&links).map(|(n, (obj, _))| program_stats(n, obj)).collect();
        println!("{{\"stats\":{{{}}}}}", each.join(","));
        unsafe { libc::close(stats_fd) };
    }
    drop(links);
    let logged: Result<Vec<()>, String> = hooklogs.into_iter().map(hooklog::HookLog::finish).collect();
    if let Err(e) = watched.and(logged) {
        eprintln!("cubiclab-bpf: {e}");
        return ExitCode::from(1);
    }
    let left: Vec<&String> = {
        let now = registered();
        names.iter().filter(|n| now.contains(n)).collect()
    };
    if !left.is_empty() {
        eprintln!("cubiclab-bpf: still registered after closing the links: {left:?}");
        return ExitCode::from(1);
    }
    eprintln!("cubiclab-bpf: unregistered {} (signal {sig})", names.join(", "));
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("list") => list(),
        Some("load") => load(&args[1..]),
        Some("probe-bbr") => probe_bbr(&args[1..]),
        Some("replay-bbr3") => match bbr3_replay::run(&args[1..]) {
            Ok(out) => {
                println!("{out}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("cubiclab-bpf: {e}");
                ExitCode::from(2)
            }
        },
        _ => {
            eprintln!(
                "usage: cubiclab-bpf list | cubiclab-bpf load [--watch FILE] [--stats] [--hooklog DIR] \
                 NAME=ALGORITHM[:key=value,...] ... | cubiclab-bpf probe-bbr FILE | cubiclab-bpf replay-bbr3 FILE [key=value...]"
            );
            ExitCode::from(2)
        }
    }
}
