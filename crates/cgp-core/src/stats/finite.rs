//! Values checked once for finiteness, where they enter a test (criterion's `Sample`): a test that
//! takes a [`Finite`] does not check them again, and cannot be handed values nobody checked.

use std::fmt;

/// A slice whose every value is finite (no NaN, no infinity). Made by [`Finite::new`] only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finite<'a>(&'a [f64]);

/// What [`Finite::new`] refused: how many values are not finite, and the first few with their
/// positions.
#[derive(Debug, Clone, PartialEq)]
pub struct NonFinite {
    pub count: usize,
    pub first: Vec<(usize, f64)>,
}

/// How many refused values a message names.
const SHOWN: usize = 5;

impl<'a> Finite<'a> {
    /// The values, when every one is finite.
    ///
    /// # Errors
    /// [`NonFinite`]: how many are not, and the first of them.
    pub fn new(values: &'a [f64]) -> Result<Self, NonFinite> {
        let mut bad = values.iter().enumerate().filter(|(_, x)| !x.is_finite());
        let first: Vec<(usize, f64)> = bad.by_ref().take(SHOWN).map(|(i, x)| (i, *x)).collect();
        if first.is_empty() {
            return Ok(Self(values));
        }
        Err(NonFinite {
            count: first.len() + bad.count(),
            first,
        })
    }

    /// The checked values.
    pub fn values(self) -> &'a [f64] {
        self.0
    }

    pub fn len(self) -> usize {
        self.0.len()
    }

    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for NonFinite {
    /// `2 non-finite samples (#0 = NaN, #3 = inf)`; `, ...` when there are more than it names.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: Vec<String> = self.first.iter().map(|(i, x)| format!("#{i} = {x}")).collect();
        let more = if self.count > self.first.len() {
            ", ..."
        } else {
            ""
        };
        write!(
            f,
            "{} non-finite samples ({}{more})",
            self.count,
            shown.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finite_values_pass_and_the_others_are_named_as_before() {
        assert_eq!(Finite::new(&[1.0, 2.0]).map(Finite::len), Ok(2));
        assert_eq!(Finite::new(&[]).map(Finite::is_empty), Ok(true));
        let e = Finite::new(&[1.0, f64::NAN, 2.0, f64::INFINITY]).unwrap_err();
        assert_eq!(e.to_string(), "2 non-finite samples (#1 = NaN, #3 = inf)");
        let many = [f64::NAN; 7];
        assert_eq!(
            Finite::new(&many).unwrap_err().to_string(),
            "7 non-finite samples (#0 = NaN, #1 = NaN, #2 = NaN, #3 = NaN, #4 = NaN, ...)"
        );
    }
}
