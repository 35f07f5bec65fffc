//! What must be undone before a signal ends the process, beyond temporary folders
//! (`fsutil::remember_temp_dir`): the git worktrees `bisect` and `check --base` add to the user's
//! repository (issue 58, item 8). `process::exit` runs no destructor, so the owner of such a thing
//! registers how to undo it here, and the signal thread runs every registered undo before it
//! removes the temporary folders and exits.

use std::sync::Mutex;

/// One registered undo.
type Undo = Box<dyn Fn() + Send>;

static UNDO: Mutex<Vec<(u64, Undo)>> = Mutex::new(Vec::new());
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A registration; [`forget`] it once the owner has undone the thing itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registered(u64);

/// Register `undo`, run once by [`run_all`] if a signal ends the process first.
pub fn register(undo: impl Fn() + Send + 'static) -> Registered {
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    if let Ok(mut v) = UNDO.lock() {
        v.push((id, Box::new(undo)));
    }
    Registered(id)
}

/// The owner undid it (or it no longer needs undoing).
pub fn forget(r: Registered) {
    if let Ok(mut v) = UNDO.lock() {
        v.retain(|(id, _)| *id != r.0);
    }
}

/// Run every registered undo, newest first, and forget them: the last thing before a signal
/// ends the process (before the temporary folders go, since an undo may need them).
pub fn run_all() {
    let all: Vec<(u64, Undo)> = UNDO
        .lock()
        .map(|mut v| std::mem::take(&mut *v))
        .unwrap_or_default();
    for (_, undo) in all.into_iter().rev() {
        undo();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn registered_undos_run_once_and_forgotten_ones_never() {
        let ran = Arc::new(AtomicUsize::new(0));
        let (a, b) = (Arc::clone(&ran), Arc::clone(&ran));
        let _kept = register(move || {
            a.fetch_add(1, Ordering::SeqCst);
        });
        let gone = register(move || {
            b.fetch_add(100, Ordering::SeqCst);
        });
        forget(gone);
        run_all();
        run_all();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    }
}
