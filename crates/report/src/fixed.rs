//! Fixed-point formatting of the words' numbers (`{:.0}` ms, `{:.1}`
//! RTT), the same text as `f64`'s `Display`, without its cost.
//!
//! std formats a float with a precision exactly (the decimal expansion of
//! the binary value, rounded half to even), with Grisu and, when Grisu
//! cannot decide, Dragon4: ~1000 instructions a number, 6% of a whole
//! analysis of many short connections with findings (docs/benchmarks.md,
//! session 42). Almost every such number is decided by one multiplication:
//! scaled by 10^precision, its fraction is far from one half, and the
//! multiplication's rounding error (relative 2^-53) cannot move it across.
//! Only the rest (within 1e-3 of a tie, very large, not finite, or with a
//! width or sign flag) go to std.

use std::fmt;

/// An `f64` whose `Display` with a precision of at most 3 digits (and
/// no width or flags) takes the fast path; otherwise it is `f64`'s own.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Fixed(pub f64);

/// `x` (an `f64` or a reference to one) as [`Fixed`]: for a format
/// string's named argument, `format!("{cost:.0} ms", cost = fx(cost))`.
pub fn fx(x: impl std::borrow::Borrow<f64>) -> Fixed {
    Fixed(*x.borrow())
}

/// Below this magnitude a value times 10^3 is an integer f64 represents
/// exactly and the multiplication's error (at most 1e12 * 2^-53, about
/// 1.1e-4) stays well inside the tie margin.
const FAST_BELOW: f64 = 1e9;
/// How far from one half a scaled value's fraction must be to round
/// without std's exact arithmetic.
const TIE_MARGIN: f64 = 1e-3;
const POW10: [u64; 4] = [1, 10, 100, 1000];

impl fmt::Display for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        let plain = f.width().is_none() && !f.sign_plus() && !f.alternate();
        match f.precision() {
            Some(p) if p <= 3 && plain && x.abs() < FAST_BELOW => match rounded(x.abs(), p) {
                Some(n) => {
                    // std writes the sign of every negative value, -0.0
                    // and values that round to zero included.
                    if x.is_sign_negative() {
                        f.write_str("-")?;
                    }
                    write_scaled(f, n, p)
                }
                None => fmt::Display::fmt(&x, f),
            },
            _ => fmt::Display::fmt(&x, f),
        }
    }
}

/// `x * 10^p` rounded to the nearest integer, `None` when it is too close
/// to a tie to decide without exact arithmetic.
fn rounded(x: f64, p: usize) -> Option<u64> {
    let scaled = x * POW10[p] as f64;
    let whole = scaled.floor();
    let fraction = scaled - whole;
    if (fraction - 0.5).abs() < TIE_MARGIN {
        return None;
    }
    Some(whole as u64 + u64::from(fraction > 0.5))
}

/// `n / 10^p` with exactly `p` decimals.
fn write_scaled(f: &mut fmt::Formatter<'_>, n: u64, p: usize) -> fmt::Result {
    let mut buf = [0u8; 24];
    let mut at = buf.len();
    let mut rest = n;
    for i in 0.. {
        if i == p && p > 0 {
            at -= 1;
            buf[at] = b'.';
        }
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 && i >= p {
            break;
        }
    }
    // Digits and a dot only: always UTF-8.
    f.write_str(std::str::from_utf8(&buf[at..]).expect("ASCII digits"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(x: f64) {
        for (fast, std) in [
            (format!("{:.0}", Fixed(x)), format!("{x:.0}")),
            (format!("{:.1}", Fixed(x)), format!("{x:.1}")),
            (format!("{:.2}", Fixed(x)), format!("{x:.2}")),
            (format!("{:.3}", Fixed(x)), format!("{x:.3}")),
            (format!("{}", Fixed(x)), format!("{x}")),
            (format!("{:>8.1}", Fixed(x)), format!("{x:>8.1}")),
        ] {
            assert_eq!(fast, std, "{x:e}");
        }
    }

    /// The fast path decides almost every value itself (std only near
    /// ties): without it the numbers would still read the same, slower.
    #[test]
    fn the_fast_path_decides_all_but_near_ties() {
        let values: Vec<f64> = (0..100_000u32)
            .map(|i| f64::from(i) * 0.123_456_789_1 + 0.011)
            .collect();
        for p in 0..=3 {
            let decided = values.iter().filter(|x| rounded(**x, p).is_some()).count();
            assert!(
                decided * 100 >= values.len() * 99,
                "precision {p}: {decided}"
            );
        }
        assert_eq!(rounded(2.5, 0), None);
        assert_eq!(rounded(0.125, 2), None);
        assert_eq!(rounded(36.06, 1), Some(361));
        assert_eq!(rounded(0.96, 0), Some(1));
    }

    /// Ties, near-ties, zeros of both signs, values that round up to a
    /// new digit, and the edges of the fast path read as std reads them.
    #[test]
    fn edges_format_as_std_does() {
        for x in [
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.25,
            0.35,
            0.125,
            0.0005,
            0.9999,
            9.95,
            9.96,
            99.5,
            0.05,
            -0.04,
            -0.5,
            -2.5,
            1e-9,
            123.456,
            999.9996,
            1e9,
            1e9 - 0.5,
            999_999_999.4,
            1e12,
            1e300,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            same(x);
        }
    }

    /// A million values across the magnitudes the words print (1 µs to
    /// hours, in ms), from a fixed-seed generator: all as std prints them.
    #[test]
    fn random_values_format_as_std_does() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..1_000_000 {
            let r = next();
            let mantissa = (r >> 11) as f64 / (1u64 << 53) as f64;
            let exponent = (r % 14) as i32 - 4;
            let x = mantissa * 10f64.powi(exponent);
            let x = if r & 1 << 10 != 0 { -x } else { x };
            same(x);
        }
        // Values on a decimal grid, where ties cluster.
        for i in 0..200_000u32 {
            same(f64::from(i) / 1000.0 + 0.0005);
            same(f64::from(i) / 8.0);
        }
    }
}
