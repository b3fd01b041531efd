//! Nanoseconds per ACK for every algorithm in the registry: `cargo bench -p cubiclab-cc`.
//! Each iteration is one ACK of one segment with an RTT sample, in congestion avoidance,
//! with a loss every 10,000 ACKs so the window stays in a realistic range.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use cubiclab_cc::{AckSample, Algorithm, CongestionControl, Params, TcpState, ALGORITHMS};

fn on_ack(c: &mut Criterion) {
    let mut group = c.benchmark_group("on_ack");
    for info in ALGORITHMS {
        let mut alg = Algorithm::new(info.name, &Params::new()).unwrap();
        let mut tcp = TcpState { cwnd: 1000, ssthresh: 900, ..TcpState::default() };
        alg.init(&mut tcp, 0);
        let mut now: u64 = 0;
        let mut n: u32 = 0;
        group.bench_function(info.name, |b| {
            b.iter(|| {
                now += 20_000; // 50k ACKs per second
                n += 1;
                if n.is_multiple_of(10_000) {
                    tcp.ssthresh = alg.ssthresh(&tcp, now);
                    tcp.cwnd = tcp.ssthresh;
                }
                let s = AckSample { pkts_acked: 1, rtt_us: 40_000, in_flight: tcp.cwnd };
                alg.pkts_acked(&mut tcp, &s, now);
                alg.cong_avoid(&mut tcp, black_box(1), now);
                tcp.snd_una = tcp.snd_una.wrapping_add(1);
                tcp.snd_nxt = tcp.snd_una.wrapping_add(tcp.cwnd);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, on_ack);
criterion_main!(benches);
