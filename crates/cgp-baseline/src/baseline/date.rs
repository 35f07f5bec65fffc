//! RFC 3339 timestamps in UTC (jiff).

use std::time::SystemTime;

/// `t` as `YYYY-MM-DDTHH:MM:SSZ` (whole seconds, UTC). Times before 1970 are written as the epoch:
/// a clock that far off is not worth a calendar for negative years.
pub fn rfc3339_utc(t: SystemTime) -> String {
    let ts = jiff::Timestamp::try_from(t)
        .ok()
        .filter(|ts| ts.as_second() >= 0)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn at(secs: u64) -> String {
        rfc3339_utc(UNIX_EPOCH + Duration::from_secs(secs))
    }

    #[test]
    fn known_instants() {
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        // A leap day in a year divisible by 400, and the day after.
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(951_868_800), "2000-03-01T00:00:00Z");
        assert_eq!(at(1_700_000_000), "2023-11-14T22:13:20Z");
        // The last second of a year.
        assert_eq!(at(1_704_067_199), "2023-12-31T23:59:59Z");
        // 2100 is not a leap year.
        assert_eq!(at(4_107_542_400), "2100-03-01T00:00:00Z");
        assert_eq!(
            rfc3339_utc(UNIX_EPOCH - Duration::from_secs(5)),
            "1970-01-01T00:00:00Z"
        );
    }
}
