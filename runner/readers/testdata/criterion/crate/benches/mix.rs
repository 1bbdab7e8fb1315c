// The benchmarks of the criterion reader's tests: one without a group and a
// group with a function id and a parameter, and one with a parameter only.
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use perfbot_readers_criterion::mix;
use std::time::Duration;

fn benches(c: &mut Criterion) {
    c.bench_function("mix 500", |b| b.iter(|| mix(black_box(1), black_box(500))));
    let mut g = c.benchmark_group("mix");
    for n in [1000u64, 4000] {
        g.bench_with_input(BenchmarkId::new("steps", n), &n, |b, &n| b.iter(|| mix(black_box(1), black_box(n))));
    }
    g.bench_with_input(BenchmarkId::from_parameter(2000), &2000u64, |b, &n| b.iter(|| mix(black_box(1), black_box(n))));
    g.finish();
}

criterion_group! {
    name = mixes;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(300));
    targets = benches
}
criterion_main!(mixes);
