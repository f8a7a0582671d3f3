//! One gate at a time per machine. Two gates measuring at once each see the
//! other as load (the capacity control would rightly say "cannot judge"), so
//! every gate holds an exclusive `flock` on a file of the state folder (which
//! one: `Session::lock`, the one place that names it) while its
//! server runs: parallel test threads, a second terminal or a stress run all
//! take turns instead of spoiling each other's figures.

use std::fs::File;
use std::path::Path;

use fs4::FileExt;
use fs4::TryLockError;
use std::time::{Duration, Instant};

/// How often a waiting gate retries the lock.
const RETRY: Duration = Duration::from_millis(20);

/// Held for the length of one gate; released when dropped (or when the
/// process dies, which the kernel handles for flock).
pub struct MachineLock {
    _file: File,
    pub waited: Duration,
}

impl MachineLock {
    /// Takes the lock, waiting at most `limit`; None if another gate held it
    /// for all of that time.
    pub async fn acquire(path: &Path, limit: Duration) -> std::io::Result<Option<Self>> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        let started = Instant::now();
        loop {
            // Non-blocking, so that a signal can drop this future while it
            // waits. (fs4's, not std's `File::try_lock`: newer than 1.85.)
            match FileExt::try_lock(&file) {
                Ok(()) => {
                    return Ok(Some(Self {
                        _file: file,
                        waited: started.elapsed(),
                    }))
                }
                Err(TryLockError::Error(e)) => return Err(e),
                Err(TryLockError::WouldBlock) => {}
            }
            if started.elapsed() >= limit {
                return Ok(None);
            }
            tokio::time::sleep(RETRY).await;
        }
    }

    /// [`Self::acquire`], with the one message every measurement gives when
    /// it cannot have the lock (another gate or sweep held it all along, or
    /// the lock file failed).
    pub async fn take(path: &Path, limit: Duration) -> Result<Self, String> {
        match Self::acquire(path, limit).await {
            Ok(Some(lock)) => Ok(lock),
            Ok(None) => Err(format!(
                "another gate or sweep held {} for {} s; wait for it, or raise --machine-wait-ms",
                path.display(),
                limit.as_secs()
            )),
            Err(e) => Err(format!("cannot lock {}: {e}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_held_lock_names_its_file_and_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("turn.lock");
        let held = MachineLock::take(&path, Duration::ZERO).await.unwrap();
        let e = MachineLock::take(&path, Duration::from_millis(50))
            .await
            .err()
            .unwrap();
        assert!(
            e.contains("turn.lock") && e.contains("--machine-wait-ms"),
            "{e}"
        );
        // Its twin: once released, the lock is taken.
        drop(held);
        assert!(MachineLock::take(&path, Duration::ZERO).await.is_ok());
    }
}
