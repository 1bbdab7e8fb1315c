// The #[bench] functions of the libtest reader's tests (libtest_test.go
// builds them with rustc --test, RUSTC_BOOTSTRAP=1 allowing the unstable
// test crate on a stable compiler). PERFBOT_SLOW=NAME doubles the steps
// of the benchmark whose name ends in NAME, to plant a slowdown.
#![feature(test)]
extern crate test;

/// mix runs n xorshift steps from x.
pub fn mix(mut x: u64, n: u64) -> u64 {
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use test::{black_box, Bencher};

    fn steps(name: &str, n: u64) -> u64 {
        match std::env::var("PERFBOT_SLOW") {
            Ok(s) if name.ends_with(s.as_str()) => 2 * n,
            _ => n,
        }
    }

    #[bench]
    fn mix_1000(b: &mut Bencher) {
        let n = steps("mix_1000", 1000);
        b.iter(|| mix(black_box(1), black_box(n)));
    }

    #[bench]
    fn copy_4k(b: &mut Bencher) {
        let v = vec![7u8; 4096];
        b.bytes = 4096;
        b.iter(|| black_box(v.clone()));
    }

    #[bench]
    #[ignore]
    fn ignored(b: &mut Bencher) {
        b.iter(|| 1);
    }

    #[test]
    fn mix_changes_its_input() {
        assert_ne!(mix(1, 1), 1);
    }
}
