//! The last lines of a log file, for failure messages.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// How much of a log's end we read: a flood of output must not be read whole.
const TAIL_BYTES: u64 = 16 * 1024;

/// The last `lines` lines of `path` (lossy UTF-8), or a note that it is empty
/// or missing.
pub fn tail(path: &Path, lines: usize) -> String {
    let Ok(mut file) = std::fs::File::open(path) else {
        return format!("(no log at {})", path.display());
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > TAIL_BYTES {
        let _ = file.seek(SeekFrom::Start(len - TAIL_BYTES));
    }
    let mut buf = Vec::new();
    let _ = file.take(TAIL_BYTES).read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    let all: Vec<&str> = text.lines().collect();
    if all.is_empty() {
        return format!("({} is empty)", path.display());
    }
    all[all.len().saturating_sub(lines)..].join("\n")
}
