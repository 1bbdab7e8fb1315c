//! mix runs n xorshift steps, the work the benchmarks time.

/// mix runs n xorshift steps from x.
pub fn mix(mut x: u64, n: u64) -> u64 {
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}
