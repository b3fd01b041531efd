//! `cubiclab-emu CONFIG`: run the bottleneck emulator (see the library docs) with the
//! `key value` configuration in CONFIG (or `-` for stdin); prints the summary at the end.

use std::io::Read;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: cubiclab-emu CONFIG|-");
        std::process::exit(2);
    }
    let mut text = String::new();
    let r = if args[1] == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(&args[1]).map(|t| text = t)
    };
    if let Err(e) = r {
        eprintln!("cubiclab-emu: {}: {e}", args[1]);
        std::process::exit(2);
    }
    let cfg = match cubiclab_emu::Config::parse(&text) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cubiclab-emu: {e}");
            std::process::exit(2);
        }
    };
    cubiclab_emu::install_signal_handlers();
    match cubiclab_emu::run(&cfg) {
        Ok(s) => print!("{}", s.text()),
        Err(e) => {
            eprintln!("cubiclab-emu: {e}");
            std::process::exit(1);
        }
    }
}
