//! The one retry loop of the network code (the GitHub comment, the GitLab note): bounded, with
//! exponential backoff, around a whole find-then-write, so that a create that succeeded behind a
//! 5xx is found and updated on the next attempt instead of duplicated. `backon` runs it; octocrab's
//! own retry layer is off (it would retry single requests, not the find-then-write).

use std::time::Duration;

use backon::{BlockingRetryable as _, ExponentialBuilder, Retryable as _};

/// Up to `tries` attempts (at least one), waiting `backoff` before the first retry and twice as
/// long before each further one, at most 256 times `backoff`.
fn policy(tries: u32, backoff: Duration) -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(backoff)
        .with_factor(2.0)
        .with_max_delay(backoff.saturating_mul(256))
        .with_max_times(tries.max(1) as usize - 1)
}

/// Run `op` up to `tries` times (at least once) while its error `retryable` says so, waiting
/// `backoff` before the first retry and twice as long before each further one (at most 256 times
/// `backoff`). Returns its first success, its first error that is not retryable, or the last
/// error after `tries` attempts.
pub(crate) async fn with_retries<T, E, Fut>(
    tries: u32,
    backoff: Duration,
    op: impl FnMut() -> Fut,
    retryable: impl FnMut(&E) -> bool,
) -> Result<T, E>
where
    Fut: Future<Output = Result<T, E>>,
{
    op.retry(policy(tries, backoff))
        .sleep(tokio::time::sleep)
        .when(retryable)
        .await
}

/// [`with_retries`] for a blocking `op` (the GitLab client), sleeping the thread.
pub(crate) fn with_retries_blocking<T, E>(
    tries: u32,
    backoff: Duration,
    op: impl FnMut() -> Result<T, E>,
    retryable: impl FnMut(&E) -> bool,
) -> Result<T, E> {
    op.retry(policy(tries, backoff))
        .sleep(std::thread::sleep)
        .when(retryable)
        .call()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<T, E>(f: impl Future<Output = Result<T, E>>) -> Result<T, E> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn retries_what_is_retryable_up_to_the_bound_and_stops_at_the_rest() {
        let calls = std::cell::Cell::new(0);
        // Always retryable: `tries` attempts, then the last error.
        let r: Result<(), u32> = run(with_retries(
            3,
            Duration::ZERO,
            || {
                calls.set(calls.get() + 1);
                let n = calls.get();
                async move { Err(n) }
            },
            |_| true,
        ));
        assert_eq!((r, calls.get()), (Err(3), 3));
        // Not retryable: one attempt.
        calls.set(0);
        let r: Result<(), u32> = run(with_retries(
            5,
            Duration::ZERO,
            || {
                calls.set(calls.get() + 1);
                async { Err(7) }
            },
            |e| *e != 7,
        ));
        assert_eq!((r, calls.get()), (Err(7), 1));
        // A success after a retryable failure; `tries: 0` still makes one attempt.
        calls.set(0);
        let r: Result<u32, u32> = run(with_retries(
            4,
            Duration::from_millis(1),
            || {
                calls.set(calls.get() + 1);
                let n = calls.get();
                async move { if n < 2 { Err(0) } else { Ok(n) } }
            },
            |_| true,
        ));
        assert_eq!(r, Ok(2));
        calls.set(0);
        let r: Result<(), u32> = run(with_retries(
            0,
            Duration::ZERO,
            || {
                calls.set(calls.get() + 1);
                async { Err(1) }
            },
            |_| true,
        ));
        assert_eq!((r, calls.get()), (Err(1), 1));
        // The blocking loop follows the same policy.
        calls.set(0);
        let r: Result<(), u32> = with_retries_blocking(
            3,
            Duration::ZERO,
            || {
                calls.set(calls.get() + 1);
                Err(calls.get())
            },
            |e| *e < 2,
        );
        assert_eq!((r, calls.get()), (Err(2), 2));
    }
}
