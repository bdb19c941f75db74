//! Seeded vertex labellers, shared by the generators and the SNAP reader
//! (SNAP edge lists carry no labels).

use crate::types::{Label, VertexId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Zipf};

/// How to give vertex labels to an unlabelled graph.
///
/// Labels are drawn in vertex-id order from a `ChaCha8Rng` seeded with `seed`,
/// so vertex `i` always gets the `i`-th draw: the same seed gives the same
/// labels whatever else happens.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Labeller {
    /// Every vertex gets label 0.
    #[default]
    Constant,
    /// Labels uniform in `0..num_labels`.
    Uniform { num_labels: u32, seed: u64 },
    /// Labels in `0..num_labels` with Zipf frequencies: label `r` has weight
    /// `1 / (r + 1)^exponent`, so label 0 is the most frequent.
    Zipf { num_labels: u32, exponent: f64, seed: u64 },
}

impl Labeller {
    /// Checks the parameters: `num_labels >= 1`, and a finite `exponent >= 0`.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            Labeller::Constant => Ok(()),
            Labeller::Uniform { num_labels: 0, .. } => Err("uniform labeller needs at least one label".into()),
            Labeller::Uniform { .. } => Ok(()),
            Labeller::Zipf { num_labels: 0, .. } => Err("zipf labeller needs at least one label".into()),
            Labeller::Zipf { exponent, .. } if !(exponent.is_finite() && exponent >= 0.0) => {
                Err(format!("zipf exponent must be finite and >= 0, got {exponent}"))
            }
            Labeller::Zipf { .. } => Ok(()),
        }
    }

    /// Number of distinct labels this labeller can produce.
    pub fn num_labels(&self) -> u32 {
        match *self {
            Labeller::Constant => 1,
            Labeller::Uniform { num_labels, .. } | Labeller::Zipf { num_labels, .. } => num_labels.max(1),
        }
    }
}

/// Labels for vertices `0..n` drawn from `labeller`.
///
/// # Panics
/// If [`Labeller::validate`] fails.
pub fn assign_labels(n: usize, labeller: &Labeller) -> Vec<Label> {
    if *labeller == Labeller::Constant {
        return vec![0; n];
    }
    draws(labeller).take(n).collect()
}

/// The labels [`assign_labels`] gives the vertices `ids` (ascending), without
/// an array of every id up to the largest: what a reader that renumbers
/// sparse ids ([`crate::ids`]) needs so that a vertex keeps its label.
///
/// # Panics
/// If [`Labeller::validate`] fails or `ids` is not ascending.
pub fn labels_of_ids(ids: &[VertexId], labeller: &Labeller) -> Vec<Label> {
    if *labeller == Labeller::Constant {
        return vec![0; ids.len()];
    }
    let mut out = Vec::with_capacity(ids.len());
    let mut next = ids.iter().peekable();
    for (i, l) in draws(labeller).enumerate() {
        let Some(&&id) = next.peek() else { break };
        assert!(id as usize >= i, "ids must be ascending");
        if id as usize == i {
            out.push(l);
            next.next();
        }
    }
    out
}

/// The endless sequence of `labeller`'s draws; vertex `i` gets the `i`-th.
fn draws(labeller: &Labeller) -> Box<dyn Iterator<Item = Label>> {
    if let Err(e) = labeller.validate() {
        panic!("invalid labeller: {e}");
    }
    match *labeller {
        Labeller::Constant => Box::new(std::iter::repeat(0)),
        Labeller::Uniform { num_labels, seed } => {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            Box::new(std::iter::repeat_with(move || rng.random_range(0..num_labels)))
        }
        Labeller::Zipf {
            num_labels,
            exponent,
            seed,
        } => {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let zipf = Zipf::new(f64::from(num_labels), exponent).expect("validated parameters");
            // Zipf samples ranks in [1, n]; rank 1 becomes label 0.
            Box::new(std::iter::repeat_with(move || {
                (zipf.sample(&mut rng) as u32).clamp(1, num_labels) - 1
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_is_zero() {
        assert_eq!(assign_labels(5, &Labeller::Constant), vec![0; 5]);
    }

    #[test]
    fn uniform_is_deterministic_and_in_range() {
        let l = Labeller::Uniform { num_labels: 7, seed: 3 };
        let a = assign_labels(1000, &l);
        assert_eq!(a, assign_labels(1000, &l));
        assert!(a.iter().all(|&x| x < 7));
        let mut seen = a.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 7);
        assert_ne!(a, assign_labels(1000, &Labeller::Uniform { num_labels: 7, seed: 4 }));
        // A prefix is stable: vertex i always gets the i-th draw.
        assert_eq!(&a[..10], &assign_labels(10, &l)[..]);
    }

    #[test]
    fn labels_of_ids_are_the_dense_ones() {
        for l in [
            Labeller::Constant,
            Labeller::Uniform { num_labels: 5, seed: 2 },
            Labeller::Zipf {
                num_labels: 6,
                exponent: 1.2,
                seed: 4,
            },
        ] {
            let all = assign_labels(300, &l);
            let ids = [0, 3, 4, 150, 299];
            let want: Vec<Label> = ids.iter().map(|&i| all[i as usize]).collect();
            assert_eq!(labels_of_ids(&ids, &l), want);
            assert!(labels_of_ids(&[], &l).is_empty());
        }
    }

    #[test]
    fn zipf_is_skewed() {
        let l = Labeller::Zipf {
            num_labels: 10,
            exponent: 1.5,
            seed: 9,
        };
        let a = assign_labels(20_000, &l);
        assert_eq!(a, assign_labels(20_000, &l));
        assert!(a.iter().all(|&x| x < 10));
        let mut counts = [0usize; 10];
        for &x in &a {
            counts[x as usize] += 1;
        }
        assert!(counts[0] > counts[1] && counts[1] > counts[4] && counts[4] > counts[9]);
    }

    #[test]
    fn validate_rejects_bad_parameters() {
        assert!(Labeller::Uniform { num_labels: 0, seed: 0 }.validate().is_err());
        assert!(Labeller::Zipf {
            num_labels: 3,
            exponent: -1.0,
            seed: 0
        }
        .validate()
        .is_err());
        assert!(Labeller::Zipf {
            num_labels: 3,
            exponent: f64::NAN,
            seed: 0
        }
        .validate()
        .is_err());
        assert!(Labeller::Zipf {
            num_labels: 3,
            exponent: 0.0,
            seed: 0
        }
        .validate()
        .is_ok());
    }
}
