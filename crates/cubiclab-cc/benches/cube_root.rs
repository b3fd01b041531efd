//! The kernel's integer cube root (table + one Newton step) against `f64::cbrt`, on the inputs
//! CUBIC gives it: `cube_factor * (W_max - cwnd)` for window drops of 1 to 10^6 segments.
//! `cargo bench -p cubiclab-cc --bench cube_root`

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use cubiclab_cc::cubic::cubic_root;

fn inputs() -> Vec<u64> {
    // cube_factor for bic_scale 41 is 2^40 / 410; drops spread log-uniformly over 1..10^6.
    let cube_factor = (1u64 << 40) / 410;
    (0..1024).map(|i| cube_factor * 10f64.powf(6.0 * f64::from(i) / 1023.0) as u64).collect()
}

fn cube_root(c: &mut Criterion) {
    let xs = inputs();
    let mut group = c.benchmark_group("cube_root");
    group.bench_function("kernel_cubic_root", |b| {
        b.iter(|| xs.iter().map(|&a| cubic_root(black_box(a))).fold(0u32, u32::wrapping_add))
    });
    group.bench_function("f64_cbrt", |b| {
        b.iter(|| xs.iter().map(|&a| (black_box(a) as f64).cbrt() as u32).fold(0u32, u32::wrapping_add))
    });
    group.finish();
}

criterion_group!(benches, cube_root);
criterion_main!(benches);
