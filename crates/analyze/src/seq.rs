//! TCP sequence-number arithmetic modulo 2^32 (RFC 793 / RFC 1982):
//! comparisons are made on the signed 32-bit distance, so they stay right
//! across wraparound as long as the two numbers are less than 2^31 apart.

/// Signed distance from `b` to `a` (`a - b`), correct across wraparound.
pub fn diff(a: u32, b: u32) -> i64 {
    a.wrapping_sub(b) as i32 as i64
}

/// `a` comes before `b` in sequence space.
pub fn lt(a: u32, b: u32) -> bool {
    diff(a, b) < 0
}

/// `a` comes before or is `b`.
pub fn le(a: u32, b: u32) -> bool {
    diff(a, b) <= 0
}

/// The later of two sequence numbers.
pub fn max(a: u32, b: u32) -> u32 {
    if lt(a, b) {
        b
    } else {
        a
    }
}

/// The earlier of two sequence numbers.
pub fn min(a: u32, b: u32) -> u32 {
    if lt(a, b) {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wraparound_is_ordered() {
        assert!(lt(u32::MAX - 10, 5));
        assert_eq!(diff(5, u32::MAX - 10), 16);
        assert_eq!(max(u32::MAX, 3), 3);
        assert_eq!(min(u32::MAX, 3), u32::MAX);
    }

    proptest! {
        #[test]
        fn adding_a_small_length_always_moves_forward(base: u32, len in 1u32..(1 << 31)) {
            let end = base.wrapping_add(len);
            prop_assert!(lt(base, end));
            prop_assert!(!lt(end, base));
            prop_assert_eq!(diff(end, base), len as i64);
            prop_assert_eq!(max(base, end), end);
        }

        #[test]
        fn le_is_reflexive_and_lt_is_antisymmetric(a: u32, b: u32) {
            prop_assert!(le(a, a));
            prop_assert!(!(lt(a, b) && lt(b, a)));
            // Antisymmetric except at the one ambiguous distance, 2^31.
            if a.wrapping_sub(b) != 1 << 31 {
                prop_assert_eq!(diff(a, b), -diff(b, a));
            }
        }
    }
}
