//! Statistics over repeated probes: order statistics per phase, and
//! whether two configurations differ by more than the noise.
//!
//! Latency samples are skewed and heavy-tailed (a lost SYN costs a
//! second), so the comparison makes no normality assumption: a
//! Mann-Whitney U test (are B's samples systematically lower or higher
//! than A's?) and a percentile bootstrap of the difference of medians
//! (how large is the shift, with a 95% interval). A difference "exceeds
//! the noise" when both agree: p < 0.05 and the interval excludes zero.

use serde::Serialize;

/// The `p` quantile (0..=1) of sorted samples, interpolated linearly
/// between closest ranks (numpy's default, "type 7").
pub fn quantile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// min / P50 / P95 / max of one phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub p50: f64,
    pub p95: f64,
    pub max: f64,
}

impl Summary {
    pub fn of(xs: &[f64]) -> Option<Summary> {
        let s = sorted(xs);
        Some(Summary {
            n: s.len(),
            min: *s.first()?,
            p50: quantile(&s, 0.5)?,
            p95: quantile(&s, 0.95)?,
            max: *s.last()?,
        })
    }
}

/// The standard normal CDF (Abramowitz and Stegun 7.1.26 for erf,
/// |error| < 1.5e-7: plenty for a p-value).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// Two-sided Mann-Whitney U test: the p-value of "neither sample tends to
/// be larger", by the normal approximation with the tie correction and a
/// continuity correction. None with fewer than 3 samples on a side (the
/// approximation means nothing there).
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (a, b) = (sorted(a), sorted(b));
    let (n1, n2) = (a.len(), b.len());
    if n1 < 3 || n2 < 3 {
        return None;
    }
    // Ranks of the pooled samples, ties sharing their mean rank.
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = pooled.len();
    let (mut rank_sum_a, mut tie_term, mut i) = (0.0, 0.0, 0);
    while i < n {
        let mut j = i;
        while j + 1 < n && pooled[j + 1].0 == pooled[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        rank_sum_a += pooled[i..=j].iter().filter(|p| p.1).count() as f64 * rank;
        i = j + 1;
    }
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
    let u = rank_sum_a - n1f * (n1f + 1.0) / 2.0;
    let mean = n1f * n2f / 2.0;
    let var = n1f * n2f / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
    if var <= 0.0 {
        // Every sample equal: no evidence of a difference.
        return Some(1.0);
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
    Some((2.0 * (1.0 - normal_cdf(z))).clamp(0.0, 1.0))
}

/// A small deterministic generator (xorshift64*): the bootstrap is the
/// same on every run of the same samples.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

/// 95% percentile-bootstrap interval of median(b) - median(a).
pub fn bootstrap_median_diff(a: &[f64], b: &[f64], resamples: usize) -> Option<(f64, f64)> {
    let (a, b) = (sorted(a), sorted(b));
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut scratch = Vec::new();
    let mut median_of = |xs: &[f64], rng: &mut Rng| {
        scratch.clear();
        scratch.extend((0..xs.len()).map(|_| xs[rng.below(xs.len())]));
        scratch.sort_by(f64::total_cmp);
        quantile(&scratch, 0.5).unwrap_or(f64::NAN)
    };
    let mut diffs: Vec<f64> = (0..resamples)
        .map(|_| {
            let ma = median_of(&a, &mut rng);
            let mb = median_of(&b, &mut rng);
            mb - ma
        })
        .collect();
    diffs.sort_by(f64::total_cmp);
    Some((quantile(&diffs, 0.025)?, quantile(&diffs, 0.975)?))
}

/// One phase compared between configuration A and B.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Comparison {
    pub a: Summary,
    pub b: Summary,
    /// P50(B) - P50(A), ms.
    pub delta_p50: f64,
    /// The same relative to P50(A), percent (null when A's is 0).
    pub delta_pct: Option<f64>,
    /// Mann-Whitney two-sided p-value (null below 3 samples a side).
    pub p_value: Option<f64>,
    /// 95% bootstrap interval of the median difference.
    pub ci95: Option<(f64, f64)>,
    /// p < 0.05 and the interval excludes 0.
    pub exceeds_noise: bool,
}

impl Comparison {
    pub fn of(a: &[f64], b: &[f64]) -> Option<Comparison> {
        let (sa, sb) = (Summary::of(a)?, Summary::of(b)?);
        let p_value = mann_whitney_p(a, b);
        let ci95 = bootstrap_median_diff(a, b, 2000);
        let exceeds_noise = matches!((p_value, ci95), (Some(p), Some((lo, hi))) if p < 0.05 && (lo > 0.0 || hi < 0.0));
        let delta_p50 = sb.p50 - sa.p50;
        Some(Comparison {
            a: sa,
            b: sb,
            delta_p50,
            delta_pct: (sa.p50 != 0.0).then(|| 100.0 * delta_p50 / sa.p50),
            p_value,
            ci95,
            exceeds_noise,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_between_ranks_like_numpy() {
        let s = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&s, 0.5), Some(2.5));
        assert_eq!(quantile(&s, 0.0), Some(1.0));
        assert_eq!(quantile(&s, 1.0), Some(4.0));
        // numpy.percentile([1,2,3,4], 95) == 3.85
        assert!((quantile(&s, 0.95).unwrap() - 3.85).abs() < 1e-12);
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn summary_ignores_order_and_missing_samples() {
        let s = Summary::of(&[5.0, f64::NAN, 1.0, 3.0]).unwrap();
        assert_eq!((s.n, s.min, s.p50, s.max), (3, 1.0, 3.0, 5.0));
        assert!(Summary::of(&[f64::NAN]).is_none());
    }

    #[test]
    fn mann_whitney_matches_scipy_on_a_known_case() {
        // scipy.stats.mannwhitneyu(a, b, alternative='two-sided',
        // method='asymptotic', use_continuity=True) -> p = 0.00508
        // (U = 36 of 36: every A above every B; z = 17.5 / sqrt(39))
        let a = [86.0, 88.0, 90.0, 85.0, 91.0, 87.0];
        let b = [42.0, 44.0, 41.0, 45.0, 43.0, 46.0];
        let p = mann_whitney_p(&a, &b).unwrap();
        assert!((p - 0.005_08).abs() < 2e-4, "p = {p}");
    }

    #[test]
    fn identical_or_interleaved_samples_do_not_exceed_the_noise() {
        let a = [10.0, 12.0, 11.0, 13.0, 10.5, 12.5];
        let b = [10.2, 11.9, 11.1, 12.8, 10.4, 12.7];
        let c = Comparison::of(&a, &b).unwrap();
        assert!(!c.exceeds_noise, "{c:?}");
        assert!(c.p_value.unwrap() > 0.5);
        let same = Comparison::of(&[5.0; 5], &[5.0; 5]).unwrap();
        assert_eq!(same.p_value, Some(1.0));
        assert!(!same.exceeds_noise);
    }

    #[test]
    fn a_halved_connect_time_exceeds_the_noise_with_a_negative_interval() {
        let a = [86.0, 88.0, 90.0, 85.0, 91.0, 87.0, 89.0, 86.5];
        let b = [42.0, 44.0, 41.0, 45.0, 43.0, 46.0, 42.5, 44.5];
        let c = Comparison::of(&a, &b).unwrap();
        assert!(c.exceeds_noise);
        let (lo, hi) = c.ci95.unwrap();
        assert!(lo < c.delta_p50 && c.delta_p50 < hi && hi < 0.0, "{c:?}");
        assert!((c.delta_pct.unwrap() + 50.0).abs() < 3.0);
    }

    #[test]
    fn too_few_samples_give_no_verdict() {
        let c = Comparison::of(&[80.0, 81.0], &[40.0, 41.0]).unwrap();
        assert_eq!(c.p_value, None);
        assert!(!c.exceeds_noise);
    }
}
