//! A p-value as the reasons write it (`{:.2e}`): `9.37e-5`, and `<1e-300` where the computed
//! value underflowed to 0 (issue 46: reasons said `adjusted p 0.00e0`, a p no test gives).

use std::fmt;

/// A p-value for a reason's text; `{:.2e}` formats it.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub(crate) struct P(pub f64);

impl fmt::LowerExp for P {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0.0 {
            return f.write_str("<1e-300");
        }
        fmt::LowerExp::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::P;

    #[test]
    fn an_underflowed_p_is_not_written_as_zero() {
        assert_eq!(format!("{:.2e}", P(9.371_857e-5)), "9.37e-5");
        assert_eq!(format!("{:.2e}", P(0.0)), "<1e-300");
        assert_eq!(format!("{:.2e}", P(0.0471)), "4.71e-2");
    }
}
